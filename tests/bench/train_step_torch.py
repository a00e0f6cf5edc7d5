#!/usr/bin/python3
"""PyTorch DDP step of ringscale's train_step model, for tests/bench/train_step.sh.

The same model as kernels/model/transformer: token embedding, `layers` pre-norm blocks (RMSNorm with
gamma only; QKV projection without bias; causal attention; output projection with bias;
residual; RMSNorm; Linear(h, 4h) + GELU (tanh) + Linear(4h, h), biases; residual), final
RMSNorm, output projection with bias, mean cross-entropy over the global batch; AdamW. fp32,
DDP over gloo, `--threads` intra-op threads per rank (torch.set_num_threads). Strong scaling:
`--tokens` is the global batch, split over the ranks. `--zero 1`: AdamW sharded over the ranks
by torch.distributed.optim.ZeroRedundancyOptimizer (ringscale's zero1; PyTorch 1.13's FSDP does
not run on gloo).
`--device cuda`: one rank per GPU, DDP over NCCL, fp32 GEMMs unless `--tf32 1` (for
tests/bench/train_step_gpu_torch.sh); each step's time is taken after a device synchronise.

Prints one line: `torch np=N threads=T step_s=<median over timed steps of the slowest rank>`.
  /usr/bin/python3 tests/bench/train_step_torch.py --np 2 --threads 1
  python3 tests/bench/train_step_torch.py --device cuda --seq 512 --tokens 4096
Needs python3-torch (Debian: apt-get install python3-torch); a benchmark dependency only.
"""
import argparse
import os
import statistics
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        inv = torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return x * inv * self.weight


class Block(nn.Module):
    def __init__(self, hidden, heads, eps):
        super().__init__()
        self.heads = heads
        self.norm1 = RMSNorm(hidden, eps)
        self.qkv = nn.Linear(hidden, 3 * hidden, bias=False)
        self.wo = nn.Linear(hidden, hidden)
        self.norm2 = RMSNorm(hidden, eps)
        self.w1 = nn.Linear(hidden, 4 * hidden)
        self.w2 = nn.Linear(4 * hidden, hidden)

    def forward(self, x, mask):
        b, s, h = x.shape
        d = h // self.heads
        q, k, v = self.qkv(self.norm1(x)).split(h, dim=-1)
        q, k, v = (t.view(b, s, self.heads, d).transpose(1, 2) for t in (q, k, v))
        scores = (q @ k.transpose(-2, -1)) * (d ** -0.5) + mask
        a = (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, s, h)
        x = x + self.wo(a)
        return x + self.w2(F.gelu(self.w1(self.norm2(x)), approximate="tanh"))


class Model(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.emb = nn.Embedding(a.vocab, a.hidden)
        self.blocks = nn.ModuleList(Block(a.hidden, a.heads, 1e-5) for _ in range(a.layers))
        self.norm = RMSNorm(a.hidden, 1e-5)
        self.out = nn.Linear(a.hidden, a.vocab)

    def forward(self, ids, mask):
        x = self.emb(ids)
        for blk in self.blocks:
            x = blk(x, mask)
        return self.out(self.norm(x))


def worker(rank, a):
    torch.set_num_threads(a.threads)
    cuda = a.device == "cuda"
    if cuda:
        torch.cuda.set_device(rank)
        torch.backends.cuda.matmul.allow_tf32 = bool(a.tf32)
        torch.backends.cudnn.allow_tf32 = bool(a.tf32)
    dev = torch.device("cuda", rank) if cuda else torch.device("cpu")
    dist.init_process_group("nccl" if cuda else "gloo",
                            init_method=f"tcp://127.0.0.1:{a.port}", rank=rank, world_size=a.np)
    torch.manual_seed(1)
    model = torch.nn.parallel.DistributedDataParallel(
        Model(a).to(dev), device_ids=[rank] if cuda else None)
    if a.zero:
        from torch.distributed.optim import ZeroRedundancyOptimizer
        opt = ZeroRedundancyOptimizer(model.parameters(), optimizer_class=torch.optim.AdamW,
                                      lr=1e-3)
    else:
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    local = a.tokens // a.np
    nseq = local // a.seq
    g = torch.Generator().manual_seed(rank)
    ids = torch.randint(0, a.vocab, (nseq, a.seq), generator=g).to(dev)
    targets = torch.randint(0, a.vocab, (nseq, a.seq), generator=g).to(dev)
    mask = torch.full((a.seq, a.seq), float("-inf")).triu(1).to(dev)
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    times = []
    for it in range(a.warmup + a.iters):
        dist.barrier()
        sync()
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=False)
        logits = model(ids, mask)
        # Normalised by the global token count, as ringscale's loss (DDP averages gradients).
        loss = F.cross_entropy(logits.view(-1, a.vocab), targets.view(-1))
        loss.backward()
        opt.step()
        sync()
        t = torch.tensor([time.perf_counter() - t0], dtype=torch.float64, device=dev)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        if it >= a.warmup:
            times.append(t.item())
    if rank == 0:
        print(f"torch np={a.np} threads={a.threads} step_s={statistics.median(times):.4f}"
              f" torch={torch.__version__} device={a.device} tf32={a.tf32} zero={a.zero}",
              flush=True)
    dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser()
    for name, default in (("np", 1), ("threads", 1), ("layers", 4), ("hidden", 512),
                          ("heads", 8), ("vocab", 1024), ("seq", 256), ("tokens", 2048),
                          ("iters", 3), ("warmup", 1), ("port", 29511)):
        p.add_argument(f"--{name}", type=int, default=default)
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    p.add_argument("--tf32", type=int, choices=(0, 1), default=0)
    p.add_argument("--zero", type=int, choices=(0, 1), default=0)
    a = p.parse_args()
    if a.tokens % (a.np * a.seq):
        raise SystemExit("tokens must be a multiple of np * seq")
    if a.device == "cuda" and not torch.cuda.is_available():
        raise SystemExit("train_step_torch.py: no CUDA device")
    if a.device == "cuda" and a.np > torch.cuda.device_count():
        raise SystemExit(f"train_step_torch.py: --np {a.np} needs {a.np} GPUs (NCCL takes one "
                         f"rank per GPU); this host has {torch.cuda.device_count()}")
    os.environ.setdefault("OMP_NUM_THREADS", str(a.threads))
    mp.spawn(worker, args=(a,), nprocs=a.np, join=True)


if __name__ == "__main__":
    main()
