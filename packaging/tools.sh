# shellcheck shell=bash disable=SC2034
# Sourced by the packaging scripts: the pinned packaging tools and the venv they live in. maturin builds the wheel;
# uv and pipx are only for packaging/check (`uvx` and `pipx run` of the built wheel). All come from PyPI, into a venv
# of their own, made once: $PACKAGING_VENV, by default target/packaging-venv (never the repository's .venv).
MATURIN_VERSION=1.16.0
UV_VERSION=0.13.10
PIPX_VERSION=1.18.16

PACKAGING_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PACKAGING_VENV=${PACKAGING_VENV:-$PACKAGING_ROOT/target/packaging-venv}

# Makes $PACKAGING_VENV if needed and installs each NAME==VERSION given that it does not hold yet.
packaging_tools() {
    if [[ ! -x $PACKAGING_VENV/bin/python ]]; then
        "${PYTHON:-python3}" -m venv "$PACKAGING_VENV" ||
            { echo "packaging: cannot make a venv at $PACKAGING_VENV with ${PYTHON:-python3}" >&2; return 1; }
    fi
    local missing=() spec
    for spec in "$@"; do
        "$PACKAGING_VENV/bin/python" -c 'import importlib.metadata as m, sys; name, version = sys.argv[1].split("=="); sys.exit(m.version(name) != version)' \
            "$spec" 2>/dev/null || missing+=("$spec")
    done
    if ((${#missing[@]})); then
        "$PACKAGING_VENV/bin/python" -m pip install --quiet --disable-pip-version-check "${missing[@]}" >&2
    fi
}

# The Rust target triple of this machine (what `cargo build` builds for when no --target is given).
host_target() {
    rustc -vV | sed -n 's/^host: //p'
}
