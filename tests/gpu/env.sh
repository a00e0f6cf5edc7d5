# shellcheck shell=bash
# The runtime of a directory packed by tests/gpu/pack.sh, for a GPU host without Open MPI,
# HDF5, Boost or OpenBLAS (the recipe of ../shared/tools/gpu-host.md). Source it (bash):
#   source PACK/env.sh
# It unpacks PACK/build.tar.xz (the binaries) and PACK/lib.tar.xz once, activates the runtime bundle PACK/rb (Open MPI, HDF5,
# Boost: PATH, LD_LIBRARY_PATH, relocation variables), puts the CUDA libraries the binaries
# need (PACK/cuda-libs.txt) on LD_LIBRARY_PATH from the CUDA toolkit or, failing that, a
# PyTorch venv's nvidia wheels, picks OpenBLAS kernels for this CPU, and exports PYTHON: a
# wrapper running the torch python with the host's own LD_LIBRARY_PATH (torch must not see
# the bundle's libraries). Writes only inside PACK.
# env: RINGSCALE_CUDA_LIB_DIRS (colon list searched first), TORCH_VENV (/opt/torch/.venv).
rs_pack=$(cd -- "$(dirname "${BASH_SOURCE[0]}")" && pwd)

rs_env_fail() {
    echo "env.sh: $*" >&2
    return 1
}

# rs_find_lib SONAME: the directory holding SONAME, from the toolkit before the venv.
rs_find_lib() {
    local d venv=${TORCH_VENV:-/opt/torch/.venv}
    local IFS=:
    for d in ${RINGSCALE_CUDA_LIB_DIRS:-} ${CUDA_HOME:-/usr/local/cuda}/lib64 \
        ${CUDA_HOME:-/usr/local/cuda}/lib /usr/local/cuda/targets/x86_64-linux/lib; do
        [[ -n $d && -e $d/$1 ]] && { echo "$d"; return 0; }
    done
    unset IFS
    d=$(find "${CUDA_HOME:-/usr/local/cuda}/" "$venv" -name "$1" 2>/dev/null | head -1)
    [[ -n $d ]] && dirname "$d"
}

rs_env_setup() {
    [[ ! -f $rs_pack/build.tar.xz || -d $rs_pack/build ]] || tar -C "$rs_pack" -xJf "$rs_pack/build.tar.xz" ||
        rs_env_fail "cannot unpack $rs_pack/build.tar.xz" || return 1
    [[ -d $rs_pack/lib ]] || (cd -- "$rs_pack" && mkdir -p lib.tmp && tar -xJf lib.tar.xz -C lib.tmp &&
        mv lib.tmp/lib lib && rmdir lib.tmp) || rs_env_fail "cannot unpack $rs_pack/lib.tar.xz" || return 1
    # shellcheck source=/dev/null
    source "$rs_pack/rb/activate.sh" || rs_env_fail "cannot activate the runtime bundle $rs_pack/rb" || return 1
    local lib dir missing=()
    while read -r lib; do
        [[ -z $lib ]] && continue
        if dir=$(rs_find_lib "$lib"); then
            case ":$LD_LIBRARY_PATH:" in *":$dir:"*) ;; *) LD_LIBRARY_PATH="$dir:$LD_LIBRARY_PATH" ;; esac
        elif ! ldconfig -p 2>/dev/null | grep -q "$lib"; then
            missing+=("$lib")
        fi
    done <"$rs_pack/cuda-libs.txt"
    export LD_LIBRARY_PATH="$rs_pack/lib:$LD_LIBRARY_PATH"
    [[ ${#missing[@]} -eq 0 ]] || echo "env.sh: not found on this host: ${missing[*]}" >&2
    # Debian's OpenBLAS picks slow generic kernels on a VM's unnamed CPU: name the core type.
    if [[ -z ${OPENBLAS_CORETYPE:-} ]]; then
        if grep -qw avx512f /proc/cpuinfo; then
            export OPENBLAS_CORETYPE=SKYLAKEX
        elif grep -qw avx2 /proc/cpuinfo; then
            export OPENBLAS_CORETYPE=HASWELL
        fi
    fi
    local py=python3 venv=${TORCH_VENV:-/opt/torch/.venv}
    [[ -x $venv/bin/python3 ]] && py=$venv/bin/python3
    printf '#!/usr/bin/env bash\nLD_LIBRARY_PATH=%q exec %q "$@"\n' \
        "${RUNTIME_BUNDLE_SAVED_LD_LIBRARY_PATH:-}" "$py" >"$rs_pack/host-python"
    chmod +x "$rs_pack/host-python"
    export PYTHON=${PYTHON:-$rs_pack/host-python}
    echo "env.sh: runtime of $rs_pack active (OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}, PYTHON=$PYTHON)"
}

rs_env_setup
