#!/usr/bin/env node
// Builds the npm packages of mcp-wirefuzz, the layout esbuild uses: a main package `mcp-wirefuzz` whose `bin` is a
// small launcher (mcp-wirefuzz/bin/mcp-wirefuzz.js), and one package per platform, `@mcp-wirefuzz/<os>-<cpu>`,
// holding the binary, which the main package lists as optional dependencies (npm installs the one whose `os` and
// `cpu` match). The version is the crate's (Cargo.toml), for every package.
//
//   node packaging/npm/build.mjs platform --target TRIPLE --binary PATH --out DIR   # one platform's package
//   node packaging/npm/build.mjs main --out DIR [--platforms linux-x64,...]           # the main package
//
// Each writes the package's folder under DIR and packs it (`npm pack`) into DIR: the .tgz is what `npm publish`
// takes and what `npm install ./FILE.tgz` installs. The release workflow and packaging/check run these same commands.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../..");
const SCOPE = "@mcp-wirefuzz";

// Rust target triple -> the npm platform it runs on (Node's process.platform and process.arch). The releases are
// the musl and darwin triples; the gnu ones are a local build's (packaging/check), tied to glibc.
const TARGETS = {
  "x86_64-unknown-linux-musl": { os: "linux", cpu: "x64" },
  "aarch64-unknown-linux-musl": { os: "linux", cpu: "arm64" },
  "x86_64-unknown-linux-gnu": { os: "linux", cpu: "x64", libc: "glibc" },
  "aarch64-unknown-linux-gnu": { os: "linux", cpu: "arm64", libc: "glibc" },
  "x86_64-apple-darwin": { os: "darwin", cpu: "x64" },
  "aarch64-apple-darwin": { os: "darwin", cpu: "arm64" },
};
// The platforms the main package lists as optional dependencies (its launcher reads them from package.json).
const PLATFORMS = ["linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64"];

function fail(message) {
  console.error(`npm/build: ERROR: ${message}`);
  process.exit(1);
}

/** The [package] fields of Cargo.toml that the packages repeat (a flat read of `key = "value"` lines). */
function crate() {
  const text = fs.readFileSync(path.join(root, "Cargo.toml"), "utf8");
  const section = text.split(/^\[package\]$/m)[1]?.split(/^\[/m)[0] ?? "";
  const field = (name) => section.match(new RegExp(`^${name} = "([^"]*)"$`, "m"))?.[1];
  const fields = { version: field("version"), description: field("description"), license: field("license") };
  for (const [name, value] of Object.entries(fields)) {
    if (!value) fail(`no ${name} in Cargo.toml's [package]`);
  }
  return fields;
}

function args(argv) {
  const out = { command: argv[0] };
  for (let i = 1; i < argv.length; i += 2) {
    if (!argv[i].startsWith("--") || argv[i + 1] === undefined) fail(`unexpected argument ${argv[i]}`);
    out[argv[i].slice(2)] = argv[i + 1];
  }
  if (!out.out) fail("--out DIR is required");
  return out;
}

function writeJson(file, value) {
  fs.writeFileSync(file, JSON.stringify(value, null, 2) + "\n");
}

/** A fresh folder for one package, with the licences. */
function packageDir(out, name) {
  const dir = path.join(out, name);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  for (const licence of ["LICENSE-MIT", "LICENSE-APACHE"]) {
    fs.copyFileSync(path.join(root, licence), path.join(dir, licence));
  }
  return dir;
}

/** `npm pack` of a folder into `out`; returns the tarball's path. */
function pack(dir, out) {
  const json = execFileSync("npm", ["pack", "--json", "--pack-destination", path.resolve(out)], {
    cwd: dir,
    encoding: "utf8",
  });
  const tarball = path.join(path.resolve(out), JSON.parse(json)[0].filename);
  console.log(tarball);
  return tarball;
}

function platform(options, info) {
  const target = TARGETS[options.target];
  if (!target) fail(`unknown --target ${options.target}; known: ${Object.keys(TARGETS).join(", ")}`);
  if (!options.binary || !fs.statSync(options.binary, { throwIfNoEntry: false })?.isFile()) {
    fail(`--binary ${options.binary}: no such file`);
  }
  const key = `${target.os}-${target.cpu}`;
  const dir = packageDir(options.out, `mcp-wirefuzz-${key}`);
  fs.mkdirSync(path.join(dir, "bin"));
  const binary = path.join(dir, "bin", "mcp-wirefuzz");
  fs.copyFileSync(options.binary, binary);
  fs.chmodSync(binary, 0o755);
  const manifest = {
    name: `${SCOPE}/${key}`,
    version: info.version,
    description: `The mcp-wirefuzz binary for ${target.os} ${target.cpu} (${options.target}); install the mcp-wirefuzz package, which picks it`,
    license: info.license,
    os: [target.os],
    cpu: [target.cpu],
    ...(target.libc ? { libc: [target.libc] } : {}),
    files: ["bin/mcp-wirefuzz", "LICENSE-MIT", "LICENSE-APACHE"],
    preferUnplugged: true,
  };
  writeJson(path.join(dir, "package.json"), manifest);
  fs.writeFileSync(
    path.join(dir, "README.md"),
    `# ${manifest.name}\n\nThe \`mcp-wirefuzz\` binary for ${target.os} ${target.cpu}, built for \`${options.target}\`. ` +
      "Install the `mcp-wirefuzz` package instead: it depends on this one where it fits and runs it.\n"
  );
  pack(dir, options.out);
}

function main(options, info) {
  const platforms = options.platforms ? options.platforms.split(",") : PLATFORMS;
  for (const key of platforms) {
    if (!PLATFORMS.includes(key)) fail(`unknown platform ${key} in --platforms; known: ${PLATFORMS.join(", ")}`);
  }
  const dir = packageDir(options.out, "mcp-wirefuzz");
  const source = path.join(here, "mcp-wirefuzz");
  fs.mkdirSync(path.join(dir, "bin"));
  fs.copyFileSync(path.join(source, "bin", "mcp-wirefuzz.js"), path.join(dir, "bin", "mcp-wirefuzz.js"));
  fs.chmodSync(path.join(dir, "bin", "mcp-wirefuzz.js"), 0o755);
  fs.copyFileSync(path.join(source, "README.md"), path.join(dir, "README.md"));
  const manifest = {
    name: "mcp-wirefuzz",
    version: info.version,
    description: info.description,
    license: info.license,
    keywords: ["mcp", "model-context-protocol", "fuzzing", "json-rpc", "testing"],
    bin: { "mcp-wirefuzz": "bin/mcp-wirefuzz.js" },
    files: ["bin/mcp-wirefuzz.js", "LICENSE-MIT", "LICENSE-APACHE"],
    engines: { node: ">=16" },
    optionalDependencies: Object.fromEntries(platforms.map((key) => [`${SCOPE}/${key}`, info.version])),
  };
  writeJson(path.join(dir, "package.json"), manifest);
  pack(dir, options.out);
}

const options = args(process.argv.slice(2));
fs.mkdirSync(options.out, { recursive: true });
const info = crate();
if (options.command === "platform") {
  platform(options, info);
} else if (options.command === "main") {
  main(options, info);
} else {
  fail("usage: build.mjs platform --target TRIPLE --binary PATH --out DIR | build.mjs main --out DIR [--platforms A,B]");
}
