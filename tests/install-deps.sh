#!/usr/bin/env bash
# Install ringscale's build and test dependencies from Debian 12's archive, only what is
# missing (idempotent). Works as root or through sudo.
# Then the cuDNN frontend's C++ headers (header-only, pinned) from PyPI into the git-ignored
# .deps/cudnn-frontend of this checkout: nothing system-wide but what apt installs. CMake finds
# them there; a build without them still works (no cuDNN attention path).
# usage: install-deps.sh [--test]   --test: also what only the tests need (the browser test of
#        report.html: headless Chromium and tidy); the build alone never needs them.
set -euo pipefail
packages=(build-essential cmake git pkg-config
          openmpi-bin libopenmpi-dev libhdf5-dev hdf5-tools
          libboost-program-options-dev libboost-dev libgtest-dev
          libopenblas-dev libeigen3-dev libfmt-dev nlohmann-json3-dev libsqlite3-dev sqlite3
          gnuplot-nox python3 python3-pip python3-h5py python3-numpy clang-format
          slurm-wlm munge)
test_packages=(chromium tidy)
case "${1:-}" in
    --test) packages+=("${test_packages[@]}") ;;
    "") ;;
    *) echo "install-deps: unknown option '$1' (usage: install-deps.sh [--test])" >&2; exit 2 ;;
esac
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
    echo "install-deps: all ${#packages[@]} packages present"
else
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    echo "install-deps: installing ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
        "${missing[@]}" >/dev/null
fi

# ---- the cuDNN frontend (C++ graph API, header-only) --------------------------------------
# The wheel carries include/ (the headers) and a Python module we do not use; --no-deps keeps
# its Python dependencies out. The platform and Python tags are given, so any local python3
# fetches the same wheel (the headers do not depend on either).
frontend_version=1.32.0
root=$(cd -- "$(dirname -- "$0")/.." && pwd)
prefix=$root/.deps/cudnn-frontend
stamp=$prefix/.version
if [ "$(cat "$stamp" 2>/dev/null)" = "$frontend_version" ] &&
    [ -f "$prefix/include/cudnn_frontend.h" ]; then
    echo "install-deps: cudnn-frontend $frontend_version present in $prefix"
    exit 0
fi
echo "install-deps: installing nvidia-cudnn-frontend==$frontend_version into $prefix"
rm -rf "$prefix"
python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --no-deps --only-binary=:all: \
    --implementation cp --python-version 3.11 --platform "manylinux_2_28_$(uname -m)" \
    --target "$prefix" "nvidia-cudnn-frontend==$frontend_version"
[ -f "$prefix/include/cudnn_frontend.h" ] ||
    { echo "install-deps: the cudnn-frontend wheel holds no include/cudnn_frontend.h" >&2; exit 1; }
rm -rf "$prefix/cudnn" # the Python module: only the headers are used
echo "$frontend_version" >"$stamp"
