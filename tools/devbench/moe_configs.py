#!/usr/bin/env python3
"""Times a Triton fused-MoE grouped GEMM over a grid of tile configurations.

vLLM's Triton fused_moe (vllm/model_executor/layers/fused_moe/fused_moe.py)
takes its tile configuration (BLOCK_SIZE_M/N/K, GROUP_SIZE_M, warps, stages)
from a tuned JSON file named by (experts, width, device, dtype) when the
release ships one, else from get_default_config: BLOCK 16x32x64, group 1
when tokens <= experts, else 64x64x32, group 8, with Triton's default 4 warps
and 3 stages. AIConfigurator's tables time the kernel with whatever the
release picked, so they cannot say how much the choice matters. This script
does: for each expert shape and token count it times the two grouped GEMMs
of an MoE layer (gate/up: width 2 x inter, depth hidden; down: width hidden,
depth inter) under every configuration of a grid and under the default, so
that "default / best of grid" is the cost of running a shape vLLM has no
tuned file for.

The kernel is this project's own grouped GEMM written for this measurement
(tokens sorted by expert and padded to BLOCK_M, one expert per M block,
grouped program order), the same tiling scheme as vLLM's kernel; it is not
vLLM's code. Routing is balanced (token t takes experts (t*k + j) mod E), as
AIConfigurator's "balanced" rows. Times are medians of CUDA-graph replays.

Output ($OUT): moe_configs.csv with one row per (shape, tokens, GEMM,
configuration): hidden, inter (per rank), experts, topk, tokens, gemm,
block_m, block_n, block_k, group_m, warps, stages, default (1 when this is
vLLM's default configuration for the shape and tokens), time_us; and
moe_configs.json, the environment.
"""
import csv
import itertools
import json
import os
import sys
import time

import torch
import triton
import triton.language as tl

DEV = "cuda"
OUT = os.environ.get("OUT", ".")
BUDGET_S = float(os.environ.get("BUDGET_S", "330"))

# (hidden, inter per rank, experts, topk): bf16 Triton shapes of
# AIConfigurator's H200 vLLM 0.24.0 table at MoE-TP 1, 2, 4 and 8.
# In order of priority: the run stops taking new ones after BUDGET_S.
SHAPES = [
    (4096, 7168, 8, 2),
    (4096, 14336, 8, 2),
    (2048, 768, 128, 8),
    (4096, 1536, 128, 8),
    (5120, 8192, 16, 1),
    (2816, 704, 128, 8),
    (4096, 3584, 8, 2),
    (4096, 384, 128, 8),
    (5120, 1024, 16, 1),
]
TOKENS = [1, 16, 64, 256, 1024, 4096, 16384]

GRID = [
    dict(block_m=bm, block_n=bn, block_k=bk, group_m=gm, warps=w, stages=s)
    for bm, bn, bk, gm, (w, s) in itertools.product(
        [16, 32, 64, 128], [64, 128, 256], [64, 128], [1, 16], [(4, 3), (8, 4)]
    )
]


def default_config(tokens, experts):
    """vLLM's get_default_config for unquantised experts (fused_moe.py)."""
    if tokens <= experts:
        return dict(block_m=16, block_n=32, block_k=64, group_m=1, warps=4, stages=3)
    return dict(block_m=64, block_n=64, block_k=32, group_m=8, warps=4, stages=3)


@triton.jit(do_not_specialize=["EM", "n_valid"])
def grouped_gemm(a_ptr, b_ptr, c_ptr, rows_ptr, block_expert_ptr, padded_ptr,
                 N, K, EM, n_valid, a_div,
                 s_am, s_ak, s_be, s_bn, s_bk, s_cm, s_cn,
                 BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GM: tl.constexpr):
    # C[row, :] = A[row // a_div, :] @ B[expert(row)]^T for the rows of one
    # expert's padded block; rows >= n_valid are padding.
    pid = tl.program_id(axis=0)
    blocks_m = tl.cdiv(EM, BM)
    blocks_n = tl.cdiv(N, BN)
    per_group = GM * blocks_n
    first_m = (pid // per_group) * GM
    group_rows = tl.minimum(blocks_m - first_m, GM)
    pid_m = first_m + (pid % per_group) % group_rows
    pid_n = (pid % per_group) // group_rows
    if pid_m * BM >= tl.load(padded_ptr):
        return
    rows = tl.load(rows_ptr + pid_m * BM + tl.arange(0, BM)).to(tl.int64)
    live = rows < n_valid
    expert = tl.load(block_expert_ptr + pid_m).to(tl.int64)
    cols = (pid_n * BN + tl.arange(0, BN)).to(tl.int64) % N
    ks = tl.arange(0, BK)
    a_ptrs = a_ptr + (rows // a_div)[:, None] * s_am + ks[None, :] * s_ak
    b_ptrs = b_ptr + expert * s_be + cols[None, :] * s_bn + ks[:, None] * s_bk
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        left = K - k * BK
        a = tl.load(a_ptrs, mask=live[:, None] & (ks[None, :] < left), other=0.0)
        b = tl.load(b_ptrs, mask=ks[:, None] < left, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BK * s_ak
        b_ptrs += BK * s_bk
    out_cols = pid_n * BN + tl.arange(0, BN)
    c_ptrs = c_ptr + rows[:, None] * s_cm + out_cols[None, :] * s_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=live[:, None] & (out_cols[None, :] < N))


def align(expert_of_row, experts, bm):
    """Rows sorted by expert, each expert's run padded to a multiple of bm."""
    n = expert_of_row.numel()
    order = torch.argsort(expert_of_row, stable=True)
    counts = torch.bincount(expert_of_row, minlength=experts)
    padded = (counts + bm - 1) // bm * bm
    starts = torch.cumsum(padded, 0) - padded
    cstarts = torch.cumsum(counts, 0) - counts
    sorted_e = expert_of_row[order]
    pos = starts[sorted_e] + torch.arange(n, device=DEV) - cstarts[sorted_e]
    em = n + experts * (bm - 1)
    rows = torch.full((em,), n, dtype=torch.int32, device=DEV)
    rows[pos] = order.to(torch.int32)
    block_expert = torch.zeros(triton.cdiv(em, bm), dtype=torch.int32, device=DEV)
    per = torch.repeat_interleave(torch.arange(experts, device=DEV, dtype=torch.int32), padded // bm)
    block_expert[: per.numel()] = per
    total = padded.sum().to(torch.int32).reshape(1)
    return rows, block_expert, total, em


def launch(a, b, c, al, a_div, cfg):
    rows, block_expert, total, em = al
    e, n, k = b.shape
    grid = (triton.cdiv(em, cfg["block_m"]) * triton.cdiv(n, cfg["block_n"]),)
    grouped_gemm[grid](a, b, c, rows, block_expert, total, n, k, em, c.shape[0], a_div,
                       a.stride(0), a.stride(1), b.stride(0), b.stride(1), b.stride(2), c.stride(0), c.stride(1),
                       BM=cfg["block_m"], BN=cfg["block_n"], BK=cfg["block_k"], GM=cfg["group_m"],
                       num_warps=cfg["warps"], num_stages=cfg["stages"])


def time_us(fn):
    fn()
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    fn()
    e.record()
    torch.cuda.synchronize()
    once = s.elapsed_time(e) * 1e3
    reps = max(1, min(20, int(2000 / max(once, 1.0))))
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(reps):
            fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(3):
        s.record()
        g.replay()
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e) * 1e3 / reps)
    return sorted(times)[1]


def check(hidden, inter, experts, topk):
    """The kernel against a per-expert matmul, on one small case."""
    tokens = 64
    x = torch.randn(tokens, hidden, device=DEV, dtype=torch.bfloat16)
    w = torch.randn(experts, 2 * inter, hidden, device=DEV, dtype=torch.bfloat16) / hidden ** 0.5
    ids = (torch.arange(tokens * topk, device=DEV) % experts)
    out = torch.empty(tokens * topk, 2 * inter, device=DEV, dtype=torch.bfloat16)
    cfg = default_config(tokens, experts)
    launch(x, w, out, align(ids, experts, cfg["block_m"]), topk, cfg)
    ref = torch.stack([x[r // topk].float() @ w[ids[r]].float().T for r in range(tokens * topk)])
    return float((out.float() - ref).abs().max())


def main():
    torch.manual_seed(0)
    start = time.time()
    env = dict(device=torch.cuda.get_device_name(), sms=torch.cuda.get_device_properties(0).multi_processor_count,
               torch=torch.__version__, triton=triton.__version__, date=time.strftime("%Y-%m-%d"))
    env["max_abs_error_vs_matmul"] = check(2048, 768, 128, 8)
    print(env, flush=True)
    f = open(os.path.join(OUT, "moe_configs.csv"), "w", newline="")  # noqa: SIM115
    w = csv.writer(f)
    w.writerow(["hidden", "inter", "experts", "topk", "tokens", "gemm", "block_m", "block_n", "block_k",
                "group_m", "warps", "stages", "default", "time_us"])
    skipped = 0
    first = int(os.environ.get("FIRST_SHAPE", "0"))
    for hidden, inter, experts, topk in SHAPES[first:]:
        w1 = torch.randn(experts, 2 * inter, hidden, device=DEV, dtype=torch.bfloat16)
        w2 = torch.randn(experts, hidden, inter, device=DEV, dtype=torch.bfloat16)
        for tokens in TOKENS:
            if time.time() - start > BUDGET_S:
                env["stopped_early_at"] = [hidden, inter, experts, topk, tokens]
                break
            x = torch.randn(tokens, hidden, device=DEV, dtype=torch.bfloat16)
            h = torch.randn(tokens * topk, inter, device=DEV, dtype=torch.bfloat16)
            up = torch.empty(tokens * topk, 2 * inter, device=DEV, dtype=torch.bfloat16)
            down = torch.empty(tokens * topk, hidden, device=DEV, dtype=torch.bfloat16)
            ids = (torch.arange(tokens * topk, device=DEV) % experts)
            dflt = default_config(tokens, experts)
            cfgs = GRID + ([dflt] if dflt not in GRID else [])
            aligned = {}
            for cfg in cfgs:
                al = aligned.setdefault(cfg["block_m"], align(ids, experts, cfg["block_m"]))
                for gemm, a, b, c, a_div in (("up", x, w1, up, topk), ("down", h, w2, down, 1)):
                    try:
                        t = time_us(lambda: launch(a, b, c, al, a_div, cfg))
                    except Exception as exc:  # out of shared memory for this tile
                        skipped += 1
                        if skipped <= 3:
                            print("skip", cfg, type(exc).__name__, str(exc)[:120], flush=True)
                        continue
                    w.writerow([hidden, inter, experts, topk, tokens, gemm, cfg["block_m"], cfg["block_n"],
                                cfg["block_k"], cfg["group_m"], cfg["warps"], cfg["stages"],
                                int(cfg == dflt), f"{t:.3f}"])
            f.flush()
            print(f"{time.time() - start:.0f}s hidden {hidden} inter {inter} E {experts} k {topk} tokens {tokens}",
                  flush=True)
    f.close()
    env["skipped_configs"] = skipped
    env["seconds"] = round(time.time() - start, 1)
    with open(os.path.join(OUT, "moe_configs.json"), "w") as jf:
        json.dump(env, jf, indent=1)
    print(env, flush=True)


if __name__ == "__main__":
    sys.exit(main())
