#!/usr/bin/env python3
"""Summarises a raw moe_configs.py CSV (no GPU needed).

Usage: moe_configs_summary.py RAW.csv OUT.csv

One row per (shape, tokens, GEMM): how many configurations were timed, the
best configuration of the grid (block_m x block_n x block_k / group /
warps and stages) and its time, and vLLM's default configuration and its
time.
"""
import csv
import sys


def main(raw_path, out_path):
    best, dflt, count = {}, {}, {}
    with open(raw_path, newline="") as f:
        for r in csv.DictReader(f):
            k = tuple(int(r[c]) for c in ("hidden", "inter", "experts", "topk", "tokens")) + (r["gemm"],)
            cfg = "x".join(r[c] for c in ("block_m", "block_n", "block_k")) + f"/g{r['group_m']}/w{r['warps']}s{r['stages']}"
            t = float(r["time_us"])
            count[k] = count.get(k, 0) + 1
            if k not in best or t < best[k][1]:
                best[k] = (cfg, t)
            if r["default"] == "1":
                dflt[k] = (cfg, t)
    missing = [k for k in best if k not in dflt]
    if missing:
        sys.exit(f"{raw_path}: no default-configuration row for {missing[0]}")
    with open(out_path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["hidden", "inter", "experts", "topk", "tokens", "gemm", "configs_timed",
                    "best_config", "best_us", "default_config", "default_us"])
        for k in sorted(best):
            w.writerow([*k, count[k], best[k][0], f"{best[k][1]:.3f}", dflt[k][0], f"{dflt[k][1]:.3f}"])


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
