"""PyTorch's scaled_dot_product_attention on the shapes of bench_attention_gpu: the
comparison for tests/bench/attention_gpu.sh (PyTorch is not a dependency of the build).

usage: sdpa_reference.py [ITERS=20] [SEQ ...=4096 8192 16384 32768]
bf16, B=1, H=16, D=128, causal and not; each call timed with CUDA events, median over
ITERS after 3 warm-up calls. FLOP convention (DESIGN.md): 4*B*S^2*H*D, halved when causal.
Prints one line per case, "bf16 S CAUSAL MEDIAN_MS TFLOP_S", as bench_attention_gpu does;
exits 2 with one line on stderr when torch or a CUDA device is missing.
env SDPA_BACKEND: default (PyTorch picks), or flash | efficient | cudnn to pin one
(torch.nn.attention.sdpa_kernel), e.g. to compare against FlashAttention-2 specifically.
"""
import contextlib
import os
import statistics
import sys

HEADS, HEAD_DIM, WARMUP = 16, 128, 3


def time_ms(torch, fn, iters):
    for _ in range(WARMUP):
        fn()
    times = []
    for _ in range(iters):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median_low(times)


def backend_context(torch, name):
    """A context manager pinning SDPA to backend `name` ('default': no pinning)."""
    if name == "default":
        return contextlib.nullcontext()
    from torch.nn.attention import SDPBackend, sdpa_kernel

    choices = {
        "flash": SDPBackend.FLASH_ATTENTION,
        "efficient": SDPBackend.EFFICIENT_ATTENTION,
        "cudnn": SDPBackend.CUDNN_ATTENTION,
    }
    if name not in choices:
        raise ValueError(f"SDPA_BACKEND must be default, flash, efficient or cudnn, got {name!r}")
    return sdpa_kernel(choices[name])


def main(argv):
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        print("sdpa_reference.py: PyTorch is not installed for this python", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("sdpa_reference.py: no CUDA device visible to PyTorch", file=sys.stderr)
        return 2
    iters = int(argv[1]) if len(argv) > 1 else 20
    seqs = [int(x) for x in argv[2:]] or [4096, 8192, 16384, 32768]
    backend = os.environ.get("SDPA_BACKEND", "default")
    print(
        f"# torch {torch.__version__} sdpa (backend: {backend}) on "
        f"{torch.cuda.get_device_name()}, {iters} iters"
    )
    with backend_context(torch, backend):
        run(torch, F, seqs, iters)
    return 0


def run(torch, F, seqs, iters):
    gen = torch.Generator(device="cuda").manual_seed(0)
    for seq in seqs:
        q, k, v = (
            torch.rand(1, HEADS, seq, HEAD_DIM, device="cuda", dtype=torch.bfloat16, generator=gen)
            * 2
            - 1
            for _ in range(3)
        )
        for causal in (0, 1):
            ms = time_ms(
                torch, lambda: F.scaled_dot_product_attention(q, k, v, is_causal=bool(causal)), iters
            )
            flop = 4.0 * seq * seq * HEADS * HEAD_DIM * (0.5 if causal else 1.0)
            print(f"bf16 {seq} {causal} {ms:.4f} {flop / (ms * 1e-3) * 1e-12:.2f}", flush=True)
        del q, k, v


if __name__ == "__main__":
    sys.exit(main(sys.argv))
