#!/usr/bin/env node
// The `mcp-wirefuzz` command of the npm package: it runs the native binary of this platform's package,
// @mcp-wirefuzz/<platform>-<arch>, an optional dependency that npm installs only where its `os` and `cpu` match
// (the layout esbuild uses). Arguments, standard input and output go straight to the binary; its exit code is
// this command's, and a signal that ends it ends this command the same way.
//
// It spawns the binary and waits (rather than spawnSync) so that a SIGINT, SIGTERM or SIGHUP sent to this process
// alone (a CI runner cancelling a job, `kill PID`) is passed on: the binary then ends the servers it started
// before it exits. From a terminal, Ctrl-C reaches both processes; the binary acts on the first signal it gets.
"use strict";

const { spawn } = require("child_process");
const os = require("os");

const manifest = require("../package.json");
// The platforms this release has a binary for: the optional dependencies packaging/npm/build.mjs wrote.
const SUPPORTED = Object.keys(manifest.optionalDependencies || {}).map((name) => name.split("/")[1]);

function fail(message) {
  process.stderr.write(`mcp-wirefuzz: ${message}\n`);
  process.exit(2);
}

function binaryPath() {
  // A binary of your own (a `cargo install`, a build for a platform with no package) instead of the package's.
  if (process.env.MCP_WIREFUZZ_BINARY) {
    return process.env.MCP_WIREFUZZ_BINARY;
  }
  const key = `${process.platform}-${process.arch}`;
  if (!SUPPORTED.includes(key)) {
    fail(
      `there is no binary for ${key}: packages exist for ${SUPPORTED.join(", ")}. ` +
        (process.platform === "win32"
          ? "On Windows, run it in WSL (the tool needs Unix process groups and signals). "
          : "") +
        "Elsewhere, build it with `cargo install mcp-wirefuzz` and set MCP_WIREFUZZ_BINARY to its path."
    );
  }
  const name = `@mcp-wirefuzz/${key}`;
  try {
    return require.resolve(`${name}/bin/mcp-wirefuzz`);
  } catch (error) {
    fail(
      `the package ${name}, which holds the binary for this platform, is not installed. npm leaves optional ` +
        "dependencies out with --omit=optional (or --no-optional), and a lockfile written on another platform may " +
        `lack it; install it with \`npm install ${name}@${manifest.version}\`.`
    );
  }
}

const child = spawn(binaryPath(), process.argv.slice(2), { stdio: "inherit" });

const FORWARDED = ["SIGINT", "SIGTERM", "SIGHUP"];
const forward = (signal) => {
  try {
    child.kill(signal);
  } catch (_) {
    // The binary has exited already; its exit is handled below.
  }
};
for (const signal of FORWARDED) {
  process.on(signal, forward);
}

child.on("error", (error) => fail(`cannot run ${child.spawnfile}: ${error.message}`));
child.on("exit", (code, signal) => {
  if (signal) {
    // End this process with the same signal, as a shell expects of the command it ran.
    for (const forwarded of FORWARDED) {
      process.removeListener(forwarded, forward);
    }
    process.kill(process.pid, signal);
    // A signal that does not end a Node process (SIGPIPE, ...): the shell's convention, 128 + its number.
    setTimeout(() => process.exit(128 + (os.constants.signals[signal] || 0)), 100);
    return;
  }
  process.exit(code);
});
