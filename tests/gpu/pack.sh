#!/usr/bin/env bash
# Pack what tests/gpu/run.sh and lease.sh need into one directory that can be carried to a GPU
# host without Open MPI, HDF5, Boost, OpenBLAS or network (the recipe of
# ../shared/tools/gpu-host.md), then run there:  OUT_DIR/tests/gpu/run.sh OUT_DIR [RESULTS]
# or, in one call of a lent device machine:      OUT_DIR/tests/gpu/lease.sh OUT_DIR "$OUT"
#
# OUT_DIR gets: build.tar.xz (build/: ringscale, ringscale-stats, bench_attention_gpu and
# every GPU test binary, at their paths in the build directory, debug info stripped; env.sh
# unpacks it), gpu-tests.tsv (the
# test binaries and their rank counts, from tests/gpu/list_tests.sh), rb/ (the runtime
# bundle: Open MPI, HDF5, Boost .debs and activate.sh), lib.tar.xz (the other shared
# libraries the binaries load that neither the bundle nor a GPU host provides: OpenBLAS,
# fmt, ...), cuda-libs.txt (the CUDA libraries to find on the host), env.sh, tests/gpu and
# tests/bench scripts, jobs/presets, and PACKED (what was packed, from which commit).
#
# usage: tests/gpu/pack.sh BUILD_DIR OUT_DIR
# env: RUNTIME_BUNDLE (the runtime-bundle script; default ../shared/tools/runtime-bundle
#      beside this checkout), RB_FROM (an existing bundle directory to copy instead of
#      downloading one).
# Build first: cmake --build BUILD_DIR --target ringscale ringscale-stats bench_attention_gpu
#              and the GPU tests (tests/gpu/list_tests.sh names any that are missing).
set -euo pipefail
fail() { echo "pack.sh: $*" >&2; exit 2; }
[[ $# -eq 2 ]] || fail "usage: tests/gpu/pack.sh BUILD_DIR OUT_DIR"
[[ -f $1/CMakeCache.txt ]] || fail "$1 is not a CMake build directory"
build=$(cd -- "$1" && pwd)
here=$(cd -- "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd -- "$here/../.." && pwd)
bundle_tool=${RUNTIME_BUNDLE:-$repo/../shared/tools/runtime-bundle}
mkdir -p "$2" || fail "cannot create $2"
out=$(cd -- "$2" && pwd)

# 1. Binaries: the launcher, the statistics, the benchmark and every GPU test.
"$here/list_tests.sh" "$build" >"$out/gpu-tests.tsv"
bins=(src/ringscale analysis/ringscale-stats tests/bench_attention_gpu)
# cuDNN's benchmark where this build has cuDNN (the frontend is header-only: compiled in).
[[ -x $build/tests/bench_cudnn_gpu ]] && bins+=(tests/bench_cudnn_gpu)
mapfile -t -O ${#bins[@]} bins < <(cut -f2 "$out/gpu-tests.tsv" | sort -u)
for b in "${bins[@]}"; do
    [[ -x $build/$b ]] || fail "$build/$b not found: cmake --build $build --target $(basename "$b")"
    mkdir -p "$out/build/$(dirname "$b")"
    cp "$build/$b" "$out/build/$b"
    strip --strip-debug "$out/build/$b" 2>/dev/null || true
done

# 2. Scripts, presets and this script's companions, at their checkout paths.
mkdir -p "$out/tests/gpu" "$out/tests/bench" "$out/jobs"
cp "$here"/{run.sh,lease.sh,profile.sh,checks.sh,sdpa_once.py,env.sh,list_tests.sh,pack.sh,README.md} \
    "$here/train_models.sh" "$here/trace_gpu.sh" "$here/steps.sh" \
    "$out/tests/gpu/"
mkdir -p "$out/tests/e2e"
cp "$repo/tests/e2e/trace_e2e.py" "$out/tests/e2e/"
cp "$repo"/tests/bench/{attention_gpu.sh,attention_cudnn_gpu.sh,job_overhead.sh,sdpa_reference.py} \
    "$repo"/tests/bench/{train_step_gpu_torch.sh,train_step_torch.py,torch_llama.py} "$out/tests/bench/"
cp -r "$repo/jobs/presets" "$out/jobs/"
cp "$here/env.sh" "$out/env.sh"

# 3. The runtime bundle (Open MPI, HDF5, Boost) from Debian packages.
if [[ -n ${RB_FROM:-} && $(cd -- "$RB_FROM" 2>/dev/null && pwd) != "$out/rb" ]]; then
    [[ -f $RB_FROM/activate.sh ]] || fail "RB_FROM=$RB_FROM holds no runtime bundle"
    rm -rf "${out:?}/rb" && mkdir -p "$out/rb"
    tar -C "$RB_FROM" --exclude=./root -cf - . | tar -C "$out/rb" -xf -
elif [[ ! -f $out/rb/activate.sh ]]; then
    [[ -f $bundle_tool ]] || fail "runtime-bundle not found at $bundle_tool (set RUNTIME_BUNDLE)"
    bash "$bundle_tool" pack "$out/rb" >&2 || fail "runtime-bundle pack failed"
fi
rm -rf "$out/rb/root" "$out/host-python"

# 4. Other shared libraries: everything the binaries load, less the host's C/C++ runtime,
#    the CUDA libraries (found on the host by env.sh) and what the bundle holds.
bundled=$(for d in "$out"/rb/debs/*.deb; do dpkg-deb -c "$d"; done |
    awk '$(NF - 1) == "->" {print $(NF - 2)} {print $NF}' | grep -o '[^/]*\.so[.0-9]*$' | sort -u)
host_re='^(ld-linux|linux-vdso|libc|libm|libdl|libpthread|librt|libresolv|libstdc\+\+|libgcc_s|libz|libzstd|liblzma|libbz2|libudev|libuuid|libcrypt)\.so'
cuda_re='^lib(cuda|cudart|cublas|cublasLt|nccl|nvrtc|nvJitLink|curand|cufft|cusparse|cusolver|cudnn)\.so'
: >"$out/cuda-libs.txt"
rm -rf "${out:?}/lib" "$out/lib.tar.xz" && mkdir -p "$out/lib"
while read -r name path; do
    if [[ $name =~ $cuda_re ]]; then
        echo "$name" >>"$out/cuda-libs.txt"
    elif [[ ! $name =~ $host_re ]] && ! grep -qxF "$name" <<<"$bundled"; then
        [[ -f $path ]] || fail "$name is not found here (ldd); cannot pack it"
        cp -L "$path" "$out/lib/$name"
    fi
done < <(for b in "${bins[@]}"; do ldd "$out/build/$b"; done |
    awk '$2 == "=>" {print $1, $3}' | sort -u)
sort -u -o "$out/cuda-libs.txt" "$out/cuda-libs.txt"
(cd -- "$out" && tar -cJf lib.tar.xz lib && rm -rf lib)

{
    echo "packed $(date -u +%FT%TZ) on $(hostname) from $build"
    echo "commit $(git -C "$repo" rev-parse HEAD 2>/dev/null || echo unknown)$(
        git -C "$repo" diff --quiet HEAD 2>/dev/null || echo ' (with uncommitted changes)')"
    echo "libraries in lib.tar.xz: $(tar -tJf "$out/lib.tar.xz" | grep -c '\.so')"
    echo "CUDA libraries expected on the host: $(tr '\n' ' ' <"$out/cuda-libs.txt")"
} >"$out/PACKED"
cat "$out/PACKED"
# 5. The binaries travel as build.tar.xz: each one links the CUDA kernels for every arch, with
#    their line tables, so unpacked they pass the 64 MiB a device machine carries (144 MiB,
#    packed about 16 MiB); env.sh (sourced by run.sh and lease.sh)
#    unpacks them on the GPU host.
(cd -- "$out" && rm -f build.tar.xz && tar -cJf build.tar.xz build && rm -rf build)
size_kib=$(du -sk "$out" | cut -f1)
echo "pack.sh: $out is $((size_kib / 1024)) MiB; on the GPU host: $out/tests/gpu/run.sh $out [RESULTS_DIR]"
[[ $size_kib -le $((60 * 1024)) ]] ||
    echo "pack.sh: warning: over 60 MiB (a lent device machine carries at most 64 MiB)" >&2
