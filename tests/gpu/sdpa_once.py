"""One PyTorch SDPA call on cuDNN, inside a profiler range, for tests/gpu/profile.sh.

usage: sdpa_once.py fwd|bwd SEQ CAUSAL
bf16, B=1, H=16, D=128 (the shapes of bench_attention_gpu). After 3 warm-up forward and
backward calls, the chosen pass runs once between torch.cuda.profiler.start() and stop()
(cudaProfilerStart/Stop: process-wide, so the backward's kernels are caught even though
autograd launches them from its own thread); run under `ncu --profile-from-start off`.
Exits 2 with one line when torch, a CUDA device or cuDNN attention is missing.
"""
import sys


def main(argv):
    if (len(argv) != 4 or argv[1] not in ("fwd", "bwd") or not argv[2].isdigit()
            or argv[3] not in ("0", "1")):
        raise SystemExit("usage: sdpa_once.py fwd|bwd SEQ CAUSAL(0|1)")
    which, seq, causal = argv[1], int(argv[2]), argv[3] == "1"
    if not 1 <= seq <= 1 << 20:
        raise SystemExit(f"sdpa_once.py: SEQ must be in 1..1048576, got {seq}")
    try:
        import torch
        import torch.nn.functional as F
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ImportError as e:
        print(f"sdpa_once.py: {e}", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("sdpa_once.py: no CUDA device", file=sys.stderr)
        return 2
    g = torch.Generator(device="cuda").manual_seed(1)
    q, k, v, d_o = (torch.randn(1, 16, seq, 128, device="cuda", dtype=torch.bfloat16,
                                generator=g) for _ in range(4))
    for t in (q, k, v):
        t.requires_grad_(True)
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        try:
            for _ in range(3):
                o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                torch.autograd.grad(o, (q, k, v), d_o)
        except RuntimeError as e:
            print(f"sdpa_once.py: cuDNN attention unavailable: {str(e).splitlines()[0]}",
                  file=sys.stderr)
            return 2
        torch.cuda.synchronize()
        if which == "bwd":
            o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
            torch.cuda.synchronize()
        torch.cuda.profiler.start()
        if which == "fwd":
            F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        else:
            torch.autograd.grad(o, (q, k, v), d_o)
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()
    print(f"sdpa_once.py: {which} S={seq} causal={int(causal)} on cuDNN, torch {torch.__version__}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
