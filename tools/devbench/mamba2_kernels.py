#!/usr/bin/env python3
"""Times the Mamba-2 kernels that serving engines run, on one CUDA GPU.

roofsim prices Mamba-2 layers (Nemotron-H, Nemotron-3, Granite-4 hybrids)
from first principles because AIConfigurator's kernel database has no
Mamba-2 table. This script measures the two kernels that dominate a Mamba-2
mixer so the first-principles pricing can be checked against a real GPU:

  decode:  selective_state_update, one token per request: reads and writes
           each request's (heads, head_dim, d_state) state once.
  prefill: the chunked SSD scan (mamba_chunk_scan_combined): chunk cumsum,
           chunk states, state passing, C^T B, chunk scan.

The kernels are the Triton ones of state-spaces/mamba (vLLM's
vllm/model_executor/layers/mamba/ops/ssd_*.py and mamba_ssm.py are adapted
from them). They are not part of roofsim: tools/devbench/setup.sh copies them
from a snapshot of that repository into .devbench/ (git-ignored), and
PYTHONPATH points there.

time_us is the median per call of CUDA-graph replays (CUDA events), as vLLM
runs them, so Python's launch cost is out; eager_us is the same without a
graph, for reference (it is mostly host launch time at small sizes).
Decode rotates through enough state copies to exceed the L2 cache, as a real
decode step does (other layers evict it between visits).

Output: one CSV (kind, heads, head_dim, d_state, groups, state_dtype,
requests, tokens, time_us, eager_us, bytes, flops) and a JSON of the environment.
"""
import csv
import json
import os
import sys

import torch

from mamba_ssm.ops.triton.selective_state_update import selective_state_update
from mamba_ssm.ops.triton.ssd_combined import mamba_chunk_scan_combined

DEV = "cuda"
HEAD_DIM = 64
D_STATE = 128
CHUNK = 128
# (heads, groups) per tensor-parallel rank: Nemotron-3-Nano (64 heads, 8
# groups) at TP 1/2/4/8 and a 128-head model (Nemotron-H 8B, Codestral).
HEAD_GROUPS = [(8, 1), (16, 2), (32, 4), (64, 8), (128, 8)]
DECODE_BATCHES = [1, 4, 16, 64, 128, 256]
PREFILL = [(256, 1), (1024, 1), (4096, 1), (16384, 1), (4096, 8), (16384, 16)]
L2_DEFEAT_BYTES = 256 << 20


def timed(fn, reps):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000.0)
    times.sort()
    return times[len(times) // 2]


def graphed(fn, calls, reps):
    """Times fn (which makes `calls` kernel calls) replayed from a CUDA graph,
    as vLLM runs decode and small batches, so the host's launch cost is out.
    Returns microseconds per call."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(graph):
            fn()
    except RuntimeError as err:  # capture refused: report, keep going
        print(f"graph capture failed: {err}", flush=True)
        torch.cuda.synchronize()
        return float("nan")
    return timed(graph.replay, reps) / calls


def decode_rows(writer):
    for heads, groups in HEAD_GROUPS:
        for sdt_name, sdt in (("fp32", torch.float32), ("bf16", torch.bfloat16)):
            for batch in DECODE_BATCHES:
                state_bytes = batch * heads * HEAD_DIM * D_STATE * sdt.itemsize
                copies = max(1, min(64, L2_DEFEAT_BYTES // state_bytes + 1))
                states = [torch.randn(batch, heads, HEAD_DIM, D_STATE, device=DEV, dtype=sdt) * 0.01 for _ in range(copies)]
                x = torch.randn(batch, heads, HEAD_DIM, device=DEV, dtype=torch.bfloat16)
                dt = torch.randn(batch, heads, device=DEV, dtype=torch.bfloat16)[:, :, None].expand(-1, -1, HEAD_DIM)
                a = (-torch.rand(heads, device=DEV, dtype=torch.float32))[:, None, None].expand(-1, HEAD_DIM, D_STATE)
                bmat = torch.randn(batch, groups, D_STATE, device=DEV, dtype=torch.bfloat16)
                cmat = torch.randn(batch, groups, D_STATE, device=DEV, dtype=torch.bfloat16)
                d = torch.ones(heads, device=DEV, dtype=torch.float32)[:, None].expand(-1, HEAD_DIM)
                dt_bias = torch.zeros(heads, device=DEV, dtype=torch.float32)[:, None].expand(-1, HEAD_DIM)
                def sweep():
                    for s in states:
                        selective_state_update(s, x, dt, a, bmat, cmat, D=d, z=None, dt_bias=dt_bias, dt_softplus=True)

                us = graphed(sweep, copies, 30)
                eager = timed(sweep, 10) / copies
                io = 2 * state_bytes + batch * (2 * heads * HEAD_DIM * 2 + 2 * groups * D_STATE * 2 + heads * 2)
                flops = batch * heads * HEAD_DIM * D_STATE * 6
                writer.writerow(["decode", heads, HEAD_DIM, D_STATE, groups, sdt_name, batch, batch, f"{us:.3f}", f"{eager:.3f}", io, flops])
                del states
                torch.cuda.empty_cache()
        print(f"decode heads={heads} done", flush=True)


def prefill_rows(writer):
    for heads, groups in HEAD_GROUPS:
        for tokens, seqs in PREFILL:
            x = torch.randn(1, tokens, heads, HEAD_DIM, device=DEV, dtype=torch.bfloat16)
            dt = torch.randn(1, tokens, heads, device=DEV, dtype=torch.bfloat16)
            a = -torch.rand(heads, device=DEV, dtype=torch.float32)
            bmat = torch.randn(1, tokens, groups, D_STATE, device=DEV, dtype=torch.bfloat16)
            cmat = torch.randn(1, tokens, groups, D_STATE, device=DEV, dtype=torch.bfloat16)
            d = torch.ones(heads, device=DEV, dtype=torch.float32)
            dt_bias = torch.zeros(heads, device=DEV, dtype=torch.float32)
            per = tokens // seqs
            seq_idx = (torch.arange(tokens, device=DEV, dtype=torch.int32) // per)[None, :].contiguous()
            cu = torch.arange(0, tokens + 1, per, device=DEV, dtype=torch.int32)

            def call():
                mamba_chunk_scan_combined(x, dt, a, bmat, cmat, CHUNK, D=d, z=None, dt_bias=dt_bias,
                                          seq_idx=seq_idx, cu_seqlens=cu, dt_softplus=True,
                                          return_varlen_states=True)

            us = graphed(call, 1, 20)
            eager = timed(call, 10)
            # Activations in and out, B and C, dt, and one final state per sequence.
            io = tokens * (2 * heads * HEAD_DIM * 2 + 2 * groups * D_STATE * 2 + heads * 2) + seqs * heads * HEAD_DIM * D_STATE * 4
            # SSD per token with chunks of Q tokens (Mamba-2 paper, section 6):
            # C^T B per group (2 Q N), its product with x per head (2 Q P), the
            # chunk state (2 P N) and the state-to-output term (2 P N) per head.
            flops = tokens * (groups * 2 * CHUNK * D_STATE + heads * (2 * CHUNK * HEAD_DIM + 4 * HEAD_DIM * D_STATE))
            writer.writerow(["prefill", heads, HEAD_DIM, D_STATE, groups, "fp32", seqs, tokens, f"{us:.3f}", f"{eager:.3f}", io, flops])
        print(f"prefill heads={heads} done", flush=True)


def main():
    out = os.environ.get("OUT", ".")
    torch.manual_seed(0)
    props = torch.cuda.get_device_properties(0)
    src = torch.empty(1 << 30, dtype=torch.uint8, device=DEV)
    dst = torch.empty_like(src)
    copy_us = timed(lambda: dst.copy_(src), 10)
    env = {
        "gpu": props.name,
        "sms": props.multi_processor_count,
        "torch": torch.__version__,
        "triton": __import__("triton").__version__,
        "copy_1GiB_us": copy_us,
        "copy_GBps_read_plus_write": 2 * (1 << 30) / copy_us / 1e3,
        "kernels": "state-spaces/mamba Triton (ssd_combined.mamba_chunk_scan_combined, selective_state_update)",
    }
    del src, dst
    with open(os.path.join(out, "mamba2_kernels.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["kind", "heads", "head_dim", "d_state", "groups", "state_dtype", "requests", "tokens", "time_us", "eager_us", "bytes", "flops"])
        decode_rows(w)
        f.flush()
        prefill_rows(w)
    with open(os.path.join(out, "mamba2_kernels.json"), "w") as f:
        json.dump(env, f, indent=2)
    print(json.dumps(env), flush=True)


if __name__ == "__main__":
    with torch.inference_mode():
        sys.exit(main())
