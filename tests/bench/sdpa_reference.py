"""PyTorch's scaled_dot_product_attention on the shapes of bench_attention_gpu: the
comparison for tests/bench/attention_gpu.sh (PyTorch is not a dependency of the build).

usage: sdpa_reference.py [--pass fwd|bwd|both] [ITERS=20] [SEQ ...=4096 8192 16384 32768]
bf16, B=1, H=16, D=128, causal and not; each call timed with CUDA events, median over
ITERS after 3 warm-up calls. The backward is torch.autograd.grad of the SDPA output with
respect to Q, K and V for a seeded dO (the forward is not timed with it).
FLOP convention (DESIGN.md): forward 4*B*S^2*H*D, halved when causal; backward 2.5 x forward.
Prints one line per case, "bf16 S CAUSAL PASS MEDIAN_MS TFLOP_S" (PASS fwd or bwd), as
bench_attention_gpu does; exits 2 with one line on stderr when torch or a CUDA device is
missing.
env SDPA_BACKEND: default (PyTorch picks), or flash | efficient | cudnn to pin one
(torch.nn.attention.sdpa_kernel). A pinned backend that cannot run these shapes falls back
to default with a '#' note, so the comparison still runs and says what it compared against.
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
        "flash": "FLASH_ATTENTION",
        "efficient": "EFFICIENT_ATTENTION",
        "cudnn": "CUDNN_ATTENTION",
    }
    if name not in choices:
        raise ValueError(f"SDPA_BACKEND must be default, flash, efficient or cudnn, got {name!r}")
    return sdpa_kernel(getattr(SDPBackend, choices[name]))


def usable_backend(torch, F, name):
    """`name` if SDPA runs a small causal fwd+bwd under it, else 'default' (with a note)."""
    if name == "default":
        return name
    try:
        with backend_context(torch, name):
            q = torch.rand(1, HEADS, 256, HEAD_DIM, device="cuda", dtype=torch.bfloat16)
            q.requires_grad_(True)
            F.scaled_dot_product_attention(q, q, q, is_causal=True).sum().backward()
            torch.cuda.synchronize()
        return name
    except (RuntimeError, ImportError, AttributeError) as e:
        reason = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        print(f"# SDPA backend {name} unavailable ({reason}); using default", flush=True)
        return "default"


def parse(argv):
    passes = ("fwd", "bwd")
    args = argv[1:]
    if len(args) >= 2 and args[0] == "--pass":
        if args[1] not in ("fwd", "bwd", "both"):
            raise ValueError(f"--pass must be fwd, bwd or both, got {args[1]!r}")
        passes = ("fwd", "bwd") if args[1] == "both" else (args[1],)
        args = args[2:]
    iters = int(args[0]) if args else 20
    seqs = [int(x) for x in args[1:]] or [4096, 8192, 16384, 32768]
    if iters < 1 or min(seqs) < 1:
        raise ValueError("ITERS and SEQ must be >= 1")
    return passes, iters, seqs


def main(argv):
    try:
        passes, iters, seqs = parse(argv)
    except ValueError as e:
        print(f"sdpa_reference.py: {e}", file=sys.stderr)
        return 2
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        print("sdpa_reference.py: PyTorch is not installed for this python", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("sdpa_reference.py: no CUDA device visible to PyTorch", file=sys.stderr)
        return 2
    backend = usable_backend(torch, F, os.environ.get("SDPA_BACKEND", "default"))
    print(
        f"# torch {torch.__version__} sdpa (backend: {backend}) on "
        f"{torch.cuda.get_device_name()}, {iters} iters"
    )
    with backend_context(torch, backend):
        run(torch, F, seqs, iters, passes)
    return 0


def run(torch, F, seqs, iters, passes):
    gen = torch.Generator(device="cuda").manual_seed(0)
    for seq in seqs:
        q, k, v, d_o = (
            torch.rand(1, HEADS, seq, HEAD_DIM, device="cuda", dtype=torch.bfloat16, generator=gen)
            * 2
            - 1
            for _ in range(4)
        )
        for causal in (0, 1):
            flop = 4.0 * seq * seq * HEADS * HEAD_DIM * (0.5 if causal else 1.0)
            if "fwd" in passes:
                with torch.no_grad():
                    ms = time_ms(
                        torch,
                        lambda: F.scaled_dot_product_attention(q, k, v, is_causal=bool(causal)),
                        iters,
                    )
                print(f"bf16 {seq} {causal} fwd {ms:.4f} {flop / (ms * 1e-3) * 1e-12:.2f}",
                      flush=True)
            if "bwd" in passes:
                ms = time_backward(torch, F, (q, k, v), d_o, bool(causal), iters)
                bwd = 2.5 * flop
                print(f"bf16 {seq} {causal} bwd {ms:.4f} {bwd / (ms * 1e-3) * 1e-12:.2f}",
                      flush=True)
        del q, k, v, d_o


def time_backward(torch, F, qkv, d_o, causal, iters):
    """Median ms of the SDPA backward alone: one forward builds the graph, each timed call
    computes dQ, dK, dV from it (retain_graph keeps it for the next call)."""
    q, k, v = (t.detach().requires_grad_(True) for t in qkv)
    out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    ms = time_ms(
        torch, lambda: torch.autograd.grad(out, (q, k, v), d_o, retain_graph=True), iters
    )
    del out
    return ms


if __name__ == "__main__":
    sys.exit(main(sys.argv))
