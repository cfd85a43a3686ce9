#!/bin/bash -eu
# ClusterFuzzLite / OSS-Fuzz build script for mcp-wirefuzz's cargo-fuzz targets.
#
# Runs inside gcr.io/oss-fuzz-base/base-builder-rust (the base image's `compile` calls it as
# `bash -eux $SRC/build.sh` from the Dockerfile's WORKDIR, $SRC/mcp-wirefuzz). The image provides nightly Rust as
# the default toolchain, cargo-fuzz, zip and python3, and exports SANITIZER, RUSTFLAGS ("--cfg fuzzing
# -Zsanitizer=address -Cdebuginfo=1 -Cforce-frame-pointers"), CUSTOM_LIBFUZZER_PATH, SRC, OUT and WORK.
# Plain `cargo`, not `cargo +nightly`: the image's default toolchain is its (possibly pinned) nightly.
#
# For every fuzz target of fuzz/Cargo.toml (derived with `cargo metadata`, never a hand-kept list) it puts into $OUT:
#   TARGET                  the libFuzzer binary (cargo fuzz build -O --debug-assertions)
#   TARGET_seed_corpus.zip  corpus/TARGET/ (regenerate with `cargo run -- corpus`)
#   TARGET.dict             fuzz/mcp.dict
#
# Targets listed in WIREFUZZ_CFL_EXCLUDE (space-separated; default "mutant mutant_bytes") are built but not
# packaged: they are the harness's self-tests, every one of their seeds triggers a planted bug and a run finds one,
# so the services' check_build ("has a crashing input in its seed corpus") would reject the whole build and every
# run would report the same planted crashes. WIREFUZZ_CFL_EXCLUDE= (empty) packages them too.
set -euo pipefail

fail() { echo "build.sh: ERROR: $*" >&2; exit 1; }

: "${SRC:?SRC must be set (the base image sets it)}"
: "${OUT:?OUT must be set (the base image sets it)}"
: "${WORK:?WORK must be set (the base image sets it)}"
EXCLUDE=" ${WIREFUZZ_CFL_EXCLUDE-mutant mutant_bytes} "
TRIPLE=x86_64-unknown-linux-gnu # cargo-fuzz's --target default on x86_64 Linux; the coverage wrapper assumes it too

for tool in cargo python3 zip; do
    command -v "$tool" >/dev/null || fail "$tool is not on PATH"
done

PROJECT=$SRC/mcp-wirefuzz
[ -f "$PROJECT/fuzz/Cargo.toml" ] || PROJECT=$(pwd) # any other layout: the Dockerfile's WORKDIR
[ -f "$PROJECT/fuzz/Cargo.toml" ] || fail "no fuzz/Cargo.toml under $SRC/mcp-wirefuzz or $(pwd)"
[ -f "$PROJECT/fuzz/mcp.dict" ] || fail "missing $PROJECT/fuzz/mcp.dict"
cd "$PROJECT"

# The bin targets of the fuzz crate and where cargo puts them (honours CARGO_TARGET_DIR). `cargo metadata`, not
# `cargo fuzz list`: in coverage builds the base image's cargo wrapper turns every `cargo fuzz ...` into a build.
metadata=$(cargo metadata --no-deps --format-version 1 --manifest-path fuzz/Cargo.toml) \
    || fail "cargo metadata failed for fuzz/Cargo.toml"
read -r -d '' parse <<'PY' || true
import json, sys
meta = json.load(sys.stdin)
print(meta["target_directory"])
for package in meta["packages"]:
    for target in package["targets"]:
        if "bin" in target["kind"]:
            print(target["name"])
PY
mapfile -t lines < <(python3 -c "$parse" <<<"$metadata")
TARGET_DIR=${lines[0]:-}
TARGETS=("${lines[@]:1}")
[ -n "$TARGET_DIR" ] || fail "could not read target_directory from cargo metadata"
[ "${#TARGETS[@]}" -gt 0 ] || fail "fuzz/Cargo.toml declares no [[bin]] fuzz targets"
echo "build.sh: fuzz targets: ${TARGETS[*]} (excluded from \$OUT:${EXCLUDE% })"

# Release mode with debug assertions, as the OSS-Fuzz/ClusterFuzzLite Rust guide recommends. Address sanitizer is
# cargo-fuzz's default and the only one these services support for Rust.
(cd fuzz && cargo fuzz build -O --debug-assertions) || fail "cargo fuzz build failed"

BIN_DIR=$TARGET_DIR/$TRIPLE/release
packaged=0
for target in "${TARGETS[@]}"; do
    if [[ "$EXCLUDE" == *" $target "* ]]; then
        echo "build.sh: $target: built, not packaged (in WIREFUZZ_CFL_EXCLUDE)"
        continue
    fi
    binary=$BIN_DIR/$target
    [ -x "$binary" ] || fail "$target: no executable at $binary after cargo fuzz build"
    seeds=$PROJECT/corpus/$target
    [ -d "$seeds" ] && [ -n "$(ls -A "$seeds")" ] \
        || fail "$target: no seed corpus in corpus/$target (regenerate with \`cargo run -- corpus\`)"

    cp "$binary" "$OUT/$target"
    rm -f "$OUT/${target}_seed_corpus.zip" # zip adds to an existing archive
    (cd "$seeds" && zip -q -X -r "$OUT/${target}_seed_corpus.zip" .) || fail "$target: zipping corpus/$target failed"
    cp fuzz/mcp.dict "$OUT/$target.dict"
    echo "build.sh: $target: binary, $(ls -A "$seeds" | wc -l) seeds, dictionary"
    packaged=$((packaged + 1))
done
[ "$packaged" -gt 0 ] || fail "no fuzz target was packaged"
echo "build.sh: packaged $packaged fuzz target(s) into $OUT"
