#!/usr/bin/python3
"""PyTorch step of ringscale's Llama-3-8B-like preset (jobs/presets/llama3_8b.ini), one GPU.

The same model as kernels/model/transformer with --kv-heads, --ffn and --mlp swiglu: token
embedding, `layers` pre-norm blocks (RMSNorm with gamma only; QKV projection without bias, Q
`heads` x 128 wide and K, V `kv_heads` x 128 each; causal grouped-query attention; output
projection with bias; residual; RMSNorm; gate and up projections stacked in one Linear(h, 2f)
with bias, silu(gate) * up, Linear(f, h) with bias; residual), final RMSNorm, output
projection with bias, mean cross-entropy. As production trains it: bf16 autocast (fp32
master weights), scaled_dot_product_attention on the cuDNN backend (flash where cuDNN is not
offered), fused AdamW. Runs eager, then torch.compile, each `--warmup` untimed and `--iters`
timed steps, a device synchronise around each.

MFU: model FLOPs by ringscale's convention (6 x parameters except the embedding x tokens +
12 x layers x sequences x S^2/2 x hidden, the causal attention's half) over the median step
time, against the dense bf16 peak of the device (the table of analysis/measures/peak.cpp, or
`--peak TFLOPS`).

Prints one line a mode:
  torch mode=eager step_s=<median> mfu_pct=<..> tflops=<..> params=<..> torch=<version> ...
  python3 tests/bench/torch_llama.py                     # 2 layers, S = 8K, bf16
  python3 tests/bench/torch_llama.py --layers 1 --seq 1024 --hidden 512 --heads 4 \\
      --kv-heads 2 --ffn 1792 --vocab 8192 --iters 2     # a rehearsal on a small GPU
Not a test: needs a GPU and a python with CUDA torch; exits 2 with one line where it cannot
run.
"""
import argparse
import statistics
import sys
import time

# Dense bf16 peaks, TFLOP/s (analysis/measures/peak.cpp; more specific names first).
PEAKS = (("H100 PCIE", 756.5), ("H100 NVL", 835.5), ("H200 NVL", 835.5), ("H100", 989.5),
         ("H200", 989.5), ("A100", 312.0), ("L40S", 362.05))


def fail(msg):
    print(f"torch_llama.py: {msg}", file=sys.stderr)
    sys.exit(2)


try:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ImportError:
    fail("PyTorch is not importable (pip install torch into a project-local prefix)")


class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        x32 = x.float()
        inv = torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.eps)
        return (x32 * inv * self.weight).to(x.dtype)


class Block(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.heads, self.kv_heads, self.d = a.heads, a.kv_heads, a.hidden // a.heads
        kv = a.kv_heads * self.d
        self.norm1 = RMSNorm(a.hidden, 1e-5)
        self.qkv = nn.Linear(a.hidden, a.hidden + 2 * kv, bias=False)
        self.wo = nn.Linear(a.hidden, a.hidden)
        self.norm2 = RMSNorm(a.hidden, 1e-5)
        self.w1 = nn.Linear(a.hidden, 2 * a.ffn)  # gate, then up
        self.w2 = nn.Linear(a.ffn, a.hidden)

    def forward(self, x):
        b, s, h = x.shape
        kv = self.kv_heads * self.d
        q, k, v = self.qkv(self.norm1(x)).split((h, kv, kv), dim=-1)
        q = q.view(b, s, self.heads, self.d).transpose(1, 2)
        k = k.view(b, s, self.kv_heads, self.d).transpose(1, 2)
        v = v.view(b, s, self.kv_heads, self.d).transpose(1, 2)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                           enable_gqa=self.kv_heads != self.heads)
        x = x + self.wo(a.transpose(1, 2).reshape(b, s, h))
        gate, up = self.w1(self.norm2(x)).chunk(2, dim=-1)
        return x + self.w2(F.silu(gate) * up)


class Model(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.emb = nn.Embedding(a.vocab, a.hidden)
        self.blocks = nn.ModuleList(Block(a) for _ in range(a.layers))
        self.norm = RMSNorm(a.hidden, 1e-5)
        self.out = nn.Linear(a.hidden, a.vocab)

    def forward(self, ids):
        x = self.emb(ids)
        for blk in self.blocks:
            x = blk(x)
        return self.out(self.norm(x))


def flops_per_step(model, a):
    dense = sum(p.numel() for n, p in model.named_parameters() if not n.startswith("emb."))
    tokens = a.sequences * a.seq
    return 6.0 * dense * tokens + 12.0 * a.layers * a.sequences * a.seq * a.seq / 2 * a.hidden


def peak_tflops(a):
    if a.peak:
        return a.peak
    name = torch.cuda.get_device_name().upper()
    for pattern, tf in PEAKS:
        if pattern in name:
            return tf
    return None


def time_steps(step, a):
    times = []
    for it in range(a.warmup + a.iters):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        step()
        torch.cuda.synchronize()
        if it >= a.warmup:
            times.append(time.perf_counter() - t0)
    return statistics.median(times)


def run(mode, a):
    torch.manual_seed(1)
    model = Model(a).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)
    fwd = torch.compile(model) if mode == "compile" else model
    g = torch.Generator(device="cuda").manual_seed(1)
    ids = torch.randint(0, a.vocab, (a.sequences, a.seq), device="cuda", generator=g)
    targets = torch.randint(0, a.vocab, (a.sequences, a.seq), device="cuda", generator=g)

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = fwd(ids)
        loss = F.cross_entropy(logits.float().view(-1, a.vocab), targets.view(-1))
        loss.backward()
        opt.step()

    from torch.nn.attention import SDPBackend, sdpa_kernel
    backends = [SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION]
    with sdpa_kernel(backends):
        t = time_steps(step, a)
    flops = flops_per_step(model, a)
    peak = peak_tflops(a)
    mfu = f"{100 * flops / t / (peak * 1e12):.1f}" if peak else "unknown (pass --peak)"
    params = sum(p.numel() for p in model.parameters())
    print(f"torch mode={mode} step_s={t:.4f} mfu_pct={mfu} tflops={flops / t / 1e12:.1f} "
          f"params={params} layers={a.layers} seq={a.seq} sequences={a.sequences} "
          f"warmup={a.warmup} iters={a.iters} torch={torch.__version__} "
          f"device='{torch.cuda.get_device_name()}'", flush=True)
    del model, opt


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name, default in (("layers", 2), ("hidden", 4096), ("heads", 32), ("kv-heads", 8),
                          ("ffn", 14336), ("vocab", 128256), ("seq", 8192), ("sequences", 1),
                          ("warmup", 5), ("iters", 20)):
        p.add_argument(f"--{name}", type=int, default=default)
    p.add_argument("--peak", type=float, default=0.0, help="dense bf16 TFLOP/s of the device")
    p.add_argument("--modes", default="eager,compile", help="eager,compile or one of them")
    a = p.parse_args()
    if not torch.cuda.is_available():
        fail("no CUDA device is visible to PyTorch")
    if a.hidden % a.heads or a.heads % a.kv_heads or min(a.layers, a.seq, a.iters) < 1:
        fail("--hidden must divide by --heads, --heads by --kv-heads; sizes must be >= 1")
    for mode in a.modes.split(","):
        if mode not in ("eager", "compile"):
            fail(f"--modes: unknown mode {mode!r}")
        run(mode, a)


if __name__ == "__main__":
    main()
