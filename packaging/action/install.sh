#!/usr/bin/env bash
# Step 1 of the GitHub Action (action.yml at the repository's root): puts an mcp-wirefuzz binary on PATH.
#
# It downloads the release archive for this runner (packaging/archive made it: mcp-wirefuzz-TARGET.tar.gz and its
# .sha256) from the GitHub release of the version asked for, checks the checksum and unpacks it. With no release
# archive for the runner (or INPUT_INSTALL=cargo) it builds the crate with `cargo install` instead.
#
# Environment (action.yml sets it; everything has a default, so it runs by hand too):
#   INPUT_VERSION       the version to install, `0.1.0` or `v0.1.0`; empty: the action's own tag when it is a
#                       version (uses: OWNER/mcp-wirefuzz@v0.1.0), else the latest release
#   INPUT_INSTALL       `release` (default: the release archive, cargo install when there is none) or `cargo`
#   ACTION_REPOSITORY, ACTION_REF   github.action_repository and github.action_ref (empty in some composite runs:
#                       then read from GITHUB_ACTION_PATH, .../_actions/OWNER/REPO/REF)
#   MCP_WIREFUZZ_DOWNLOAD_BASE   where the archives are instead of the release's download address (a mirror;
#                       packaging/check points it at a local folder with file://)
#   MCP_WIREFUZZ_TARGET the archive's target instead of this machine's (packaging/check names a local build's)
#   INSTALL_DIR         where the binary goes (default: $RUNNER_TEMP/mcp-wirefuzz, else a new temporary folder)
# Writes `binary=PATH` and `version=...` to $GITHUB_OUTPUT and the folder to $GITHUB_PATH when they are set.
set -euo pipefail

say() { echo "mcp-wirefuzz install: $*" >&2; }
fail() {
    echo "::error title=mcp-wirefuzz install::$*"
    exit 1
}

# The release archive's target for this machine, empty when there is none.
target() {
    case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) echo x86_64-unknown-linux-musl ;;
    Linux-aarch64 | Linux-arm64) echo aarch64-unknown-linux-musl ;;
    Darwin-x86_64) echo x86_64-apple-darwin ;;
    Darwin-arm64) echo aarch64-apple-darwin ;;
    *) echo "" ;;
    esac
}

action_path=${GITHUB_ACTION_PATH:-}
repository=${ACTION_REPOSITORY:-}
ref=${ACTION_REF:-}
if [[ -z $repository && $action_path == */_actions/*/*/* ]]; then
    rest=${action_path#*/_actions/}
    repository=$(cut -d/ -f1-2 <<<"$rest")
    ref=$(cut -d/ -f3 <<<"$rest")
fi

version=${INPUT_VERSION:-}
if [[ -z $version && $ref =~ ^v?[0-9]+\.[0-9]+\.[0-9]+([-+].*)?$ ]]; then
    version=$ref
fi
version=${version#v}

dir=${INSTALL_DIR:-${RUNNER_TEMP:-$(mktemp -d)}/mcp-wirefuzz}
mkdir -p "$dir/bin"
binary=$dir/bin/mcp-wirefuzz

from_release() {
    local target=$1 base
    if [[ -n ${MCP_WIREFUZZ_DOWNLOAD_BASE:-} ]]; then
        base=$MCP_WIREFUZZ_DOWNLOAD_BASE
    elif [[ -z $repository ]]; then
        say "no repository to download from (set ACTION_REPOSITORY or MCP_WIREFUZZ_DOWNLOAD_BASE)"
        return 1
    elif [[ -n $version ]]; then
        base=https://github.com/$repository/releases/download/v$version
    else
        base=https://github.com/$repository/releases/latest/download
    fi
    local name=mcp-wirefuzz-$target.tar.gz scratch
    scratch=$(mktemp -d)
    say "downloading $base/$name"
    if ! curl -fsSL --retry 3 -o "$scratch/$name" "$base/$name" ||
        ! curl -fsSL --retry 3 -o "$scratch/$name.sha256" "$base/$name.sha256"; then
        say "no release archive at $base/$name"
        rm -rf "$scratch"
        return 1
    fi
    local want got
    want=$(awk '{print $1}' "$scratch/$name.sha256")
    if command -v sha256sum >/dev/null; then
        got=$(sha256sum "$scratch/$name" | awk '{print $1}')
    else
        got=$(shasum -a 256 "$scratch/$name" | awk '{print $1}')
    fi
    [[ $want == "$got" ]] || fail "$name: sha256 $got, but the release says $want"
    tar -xzf "$scratch/$name" -C "$scratch" mcp-wirefuzz
    mv "$scratch/mcp-wirefuzz" "$binary"
    chmod 755 "$binary"
    rm -rf "$scratch"
}

from_cargo() {
    command -v cargo >/dev/null || fail "no release archive for $(uname -s) $(uname -m) and no cargo to build it \
(the tool runs on Linux and macOS; on Windows, run the job in WSL or a Linux container)"
    local args=(install --locked --root "$dir")
    if [[ -z $repository && -f $action_path/Cargo.toml ]]; then
        # The action used from a checkout of its own repository (`uses: ./`): build that checkout.
        args+=(--path "$action_path")
    else
        args+=(mcp-wirefuzz)
        if [[ -n $version ]]; then
            args+=(--version "=$version")
        fi
    fi
    say "cargo ${args[*]} (a release build: minutes)"
    cargo "${args[@]}" >&2
}

case ${INPUT_INSTALL:-release} in
release)
    t=${MCP_WIREFUZZ_TARGET:-$(target)}
    if [[ -z $t ]] || ! from_release "$t"; then
        from_cargo
    fi
    ;;
cargo) from_cargo ;;
*) fail "install: '${INPUT_INSTALL}' is neither release nor cargo" ;;
esac

installed=$("$binary" --version) || fail "$binary --version failed"
say "$installed at $binary"
if [[ -n $version && $installed != "mcp-wirefuzz $version" ]]; then
    fail "asked for $version, got '$installed'"
fi
if [[ -n ${GITHUB_OUTPUT:-} ]]; then
    echo "binary=$binary" >>"$GITHUB_OUTPUT"
    echo "version=${installed#mcp-wirefuzz }" >>"$GITHUB_OUTPUT"
fi
if [[ -n ${GITHUB_PATH:-} ]]; then
    echo "$dir/bin" >>"$GITHUB_PATH"
fi
echo "$binary"
