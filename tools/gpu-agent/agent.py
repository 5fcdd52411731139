#!/usr/bin/env python3
"""roofsim GPU measurement agent: times GEMMs on a CUDA GPU with PyTorch.

Three modes:

  agent.py info                       print the device and what it supports (JSON)
  agent.py bench --out FILE.csv       time a fixed set of shapes in every precision
  agent.py serve [--host H --port P]  answer `sim serve --measure-url` over HTTP

The HTTP protocol (version 1) is documented in docs/web.md:

  GET  /v1/info  -> {"protocol": 1, "device": ..., "precisions": {...}}
  POST /v1/gemm  {"m", "n", "k", "precision", "warmup"?, "repeats"?}
                 -> {"status": "ok", "time_s": median seconds, ...}
                 or {"status": "unsupported", "reason": ...}
  errors         -> 4xx/5xx with {"error": ...}

Timing: CUDA events around `inner` back-to-back launches, repeated `repeats`
times after `warmup` launches; the reported time is the median per launch.
Operands are rotated through enough copies to exceed the L2 cache, so small
weights are read from DRAM as in a model's forward pass (the roofline's
memory roof is DRAM bandwidth).

Precisions and the kernels used (weights stored [N, K] like nn.Linear,
activations [M, K]; C = A @ W^T):

  fp16, bf16  torch.matmul
  fp8         torch._scaled_mm, e4m3 operands, per-tensor scales, bf16 out
              (compute capability >= 8.9)
  int8        torch._int_mm, int32 out (PyTorch requires m > 16)
  int4        torch._weight_int4pack_mm: int4 weights, bf16 activations
              (weight-only W4A16, group size 128)
  nvfp4/mxfp4 torch._scaled_mm with float4_e2m1fn_x2 operands and block
              scales (e4m3 per 16 / e8m0 per 32); only tried on compute
              capability >= 10.0 (Blackwell), otherwise "unsupported"

Anything PyTorch refuses for a shape or precision is reported as
"unsupported" with PyTorch's message, never as a number.
"""

import argparse
import csv
import json
import math
import platform
import statistics
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PROTOCOL = 1
AGENT_VERSION = "0.1.0"
PRECISIONS = ["fp16", "bf16", "fp8", "nvfp4", "mxfp4", "int8", "int4"]

# The documented batch-mode shapes (m, n, k): decode GEMVs and a small
# decode batch, prefill GEMMs of Llama-3.1-8B/70B-like layers, and squares.
SHAPES = [
    ("decode-gemv", 1, 4096, 4096),
    ("decode-gemv", 1, 14336, 4096),
    ("decode-gemv", 1, 8192, 8192),
    ("decode-batch", 32, 4096, 4096),
    ("decode-batch", 128, 14336, 4096),
    ("prefill-gemm", 2048, 4096, 4096),
    ("prefill-gemm", 4096, 14336, 4096),
    ("prefill-gemm", 4096, 8192, 8192),
    ("square", 1024, 1024, 1024),
    ("square", 2048, 2048, 2048),
    ("square", 4096, 4096, 4096),
    ("square", 8192, 8192, 8192),
    ("square", 16384, 16384, 16384),
]

MAX_DIM = 65536
MAX_ELEMENTS = 1 << 31  # per operand, to keep a request from exhausting memory
ROTATE_BYTES = 512 << 20  # operand bytes to cycle through per measurement


class AgentError(Exception):
    """A request the agent cannot serve (bad input or no GPU)."""


def load_torch():
    try:
        import torch  # noqa: PLC0415 (imported lazily so --help works without it)
    except ImportError as e:
        raise AgentError(f"PyTorch is not installed ({e}); install torch with CUDA support") from e
    if not torch.cuda.is_available():
        raise AgentError(
            "no CUDA GPU: torch.cuda.is_available() is False "
            f"(torch {torch.__version__}, built for CUDA {torch.version.cuda})"
        )
    return torch


class Bench:
    """Times GEMMs on the current CUDA device. One measurement at a time."""

    def __init__(self, torch):
        self.torch = torch
        self.dev = torch.device("cuda")
        self.lock = threading.Lock()
        props = torch.cuda.get_device_properties(self.dev)
        self.name = props.name
        self.cc = (props.major, props.minor)
        self.memory_bytes = props.total_memory

    def info(self):
        t = self.torch
        return {
            "protocol": PROTOCOL,
            "agent": "roofsim-gpu-agent",
            "version": AGENT_VERSION,
            "device": self.name,
            "compute_capability": f"{self.cc[0]}.{self.cc[1]}",
            "memory_gib": round(self.memory_bytes / 2**30, 1),
            "torch": t.__version__,
            "cuda": t.version.cuda,
            "python": platform.python_version(),
            "precisions": {p: self.support(p) for p in PRECISIONS},
        }

    def support(self, precision):
        """{"supported": bool, "reason": str} for a precision on this device."""
        t = self.torch
        if precision in ("fp16", "bf16"):
            return {"supported": True}
        if precision == "fp8":
            if not hasattr(t, "_scaled_mm") or not hasattr(t, "float8_e4m3fn"):
                return {"supported": False, "reason": "this PyTorch has no torch._scaled_mm/float8_e4m3fn"}
            if self.cc < (8, 9):
                return {"supported": False, "reason": f"fp8 tensor cores need compute capability 8.9+, this GPU is {self.cc[0]}.{self.cc[1]}"}
            return {"supported": True}
        if precision == "int8":
            if not hasattr(t, "_int_mm"):
                return {"supported": False, "reason": "this PyTorch has no torch._int_mm"}
            return {"supported": True}
        if precision == "int4":
            if not hasattr(t, "_weight_int4pack_mm"):
                return {"supported": False, "reason": "this PyTorch has no torch._weight_int4pack_mm"}
            if self.cc < (8, 0):
                return {"supported": False, "reason": "int4 weight-only kernels need compute capability 8.0+"}
            return {"supported": True}
        if precision in ("nvfp4", "mxfp4"):
            if not hasattr(t, "float4_e2m1fn_x2"):
                return {"supported": False, "reason": "this PyTorch has no float4_e2m1fn_x2 dtype"}
            if self.cc < (10, 0):
                return {"supported": False, "reason": f"fp4 tensor cores need compute capability 10.0+ (Blackwell), this GPU is {self.cc[0]}.{self.cc[1]}"}
            return {"supported": True}
        raise AgentError(f"precision: unknown {precision!r} (known: {', '.join(PRECISIONS)})")

    # --- operand builders: each returns (make_operands, run) -------------

    def _kernel(self, precision, m, n, k):
        """Returns (name, bytes per operand set, make() -> operands, fn(ops))."""
        t = self.torch
        dev = self.dev
        if precision in ("fp16", "bf16"):
            dt = t.float16 if precision == "fp16" else t.bfloat16

            def make():
                return (t.randn(m, k, device=dev, dtype=dt), t.randn(n, k, device=dev, dtype=dt))

            return "torch.matmul", (m * k + n * k) * 2, make, lambda o: t.matmul(o[0], o[1].t())
        if precision == "fp8":
            one = t.ones((), device=dev, dtype=t.float32)

            def make():
                a = t.randn(m, k, device=dev, dtype=t.bfloat16).to(t.float8_e4m3fn)
                w = t.randn(n, k, device=dev, dtype=t.bfloat16).to(t.float8_e4m3fn)
                return (a, w)

            return ("torch._scaled_mm", m * k + n * k, make,
                    lambda o: t._scaled_mm(o[0], o[1].t(), scale_a=one, scale_b=one, out_dtype=t.bfloat16))
        if precision == "int8":
            def make():
                a = t.randint(-127, 127, (m, k), device=dev, dtype=t.int8)
                w = t.randint(-127, 127, (n, k), device=dev, dtype=t.int8)
                return (a, w)

            return "torch._int_mm", m * k + n * k, make, lambda o: t._int_mm(o[0], o[1].t())
        if precision == "int4":
            group, inner_k_tiles = 128, 8

            def make():
                a = t.randn(m, k, device=dev, dtype=t.bfloat16)
                packed = t.randint(0, 256, (n, k // 2), device=dev, dtype=t.uint8)
                w = t._convert_weight_to_int4pack(packed, inner_k_tiles)
                sz = t.ones(k // group, n, 2, device=dev, dtype=t.bfloat16)
                return (a, w, sz)

            return ("torch._weight_int4pack_mm", m * k * 2 + n * k // 2, make,
                    lambda o: t._weight_int4pack_mm(o[0], o[1], group, o[2]))
        if precision in ("nvfp4", "mxfp4"):
            block = 16 if precision == "nvfp4" else 32
            sdt = t.float8_e4m3fn if precision == "nvfp4" else t.float8_e8m0fnu

            def rup(x, r):
                return (x + r - 1) // r * r

            def make():
                a = t.randint(0, 256, (m, k // 2), device=dev, dtype=t.uint8).view(t.float4_e2m1fn_x2)
                w = t.randint(0, 256, (n, k // 2), device=dev, dtype=t.uint8).view(t.float4_e2m1fn_x2)
                # Uniform scales, so the swizzled block-scale layout cannot matter.
                sa = t.ones(rup(m, 128) * rup(k // block, 4), device=dev, dtype=t.float32).to(sdt)
                sw = t.ones(rup(n, 128) * rup(k // block, 4), device=dev, dtype=t.float32).to(sdt)
                return (a, w, sa, sw)

            return ("torch._scaled_mm", (m * k + n * k) // 2, make,
                    lambda o: t._scaled_mm(o[0], o[1].t(), scale_a=o[2], scale_b=o[3], out_dtype=t.bfloat16))
        raise AgentError(f"precision: unknown {precision!r}")

    def measure(self, m, n, k, precision, warmup=10, repeats=30):
        """Times C = A @ W^T once per launch; returns the protocol's result dict."""
        for name, v in (("m", m), ("n", n), ("k", k)):
            if not isinstance(v, int) or isinstance(v, bool) or v < 1 or v > MAX_DIM:
                raise AgentError(f"{name}: must be an integer in [1, {MAX_DIM}], got {v!r}")
        if max(m * k, n * k, m * n) > MAX_ELEMENTS:
            raise AgentError(f"shape {m}x{n}x{k}: an operand exceeds {MAX_ELEMENTS} elements")
        if not (isinstance(warmup, int) and 0 <= warmup <= 1000):
            raise AgentError(f"warmup: must be an integer in [0, 1000], got {warmup!r}")
        if not (isinstance(repeats, int) and 1 <= repeats <= 1000):
            raise AgentError(f"repeats: must be an integer in [1, 1000], got {repeats!r}")
        result = {"protocol": PROTOCOL, "m": m, "n": n, "k": k, "precision": precision, "device": self.name}
        sup = self.support(precision)
        if not sup["supported"]:
            result.update(status="unsupported", reason=sup["reason"])
            return result
        with self.lock:
            try:
                result.update(self._time(precision, m, n, k, warmup, repeats))
            except (RuntimeError, ValueError, TypeError, NotImplementedError, AttributeError) as e:
                try:
                    self.torch.cuda.synchronize()
                except RuntimeError:
                    pass
                msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
                result.update(status="unsupported", reason=f"PyTorch refused {precision} {m}x{n}x{k}: {msg}")
            finally:
                self.torch.cuda.empty_cache()
        return result

    def _time(self, precision, m, n, k, warmup, repeats):
        t = self.torch
        kernel, op_bytes, make, fn = self._kernel(precision, m, n, k)
        copies = max(1, min(64, math.ceil(ROTATE_BYTES / max(op_bytes, 1))))
        free, _ = t.cuda.mem_get_info()
        while copies > 1 and copies * op_bytes > free // 4:
            copies //= 2
        ops = [make() for _ in range(copies)]
        for i in range(max(warmup, 1)):
            fn(ops[i % copies])
        t.cuda.synchronize()
        # Size the inner loop so one timed repeat lasts about 1 ms.
        s, e = t.cuda.Event(enable_timing=True), t.cuda.Event(enable_timing=True)
        s.record()
        for i in range(copies):
            fn(ops[i])
        e.record()
        e.synchronize()
        one = s.elapsed_time(e) / 1e3 / copies
        inner = max(1, min(1000, math.ceil(1e-3 / max(one, 1e-7))))
        times = []
        for r in range(repeats):
            s, e = t.cuda.Event(enable_timing=True), t.cuda.Event(enable_timing=True)
            s.record()
            for i in range(inner):
                fn(ops[(r * inner + i) % copies])
            e.record()
            e.synchronize()
            times.append(s.elapsed_time(e) / 1e3 / inner)
        med = statistics.median(times)
        return {
            "status": "ok",
            "kernel": kernel,
            "time_s": med,
            "min_s": min(times),
            "max_s": max(times),
            "mean_s": statistics.fmean(times),
            "warmup": warmup,
            "repeats": repeats,
            "inner": inner,
            "rotated_copies": copies,
            "tflops": 2.0 * m * n * k / med / 1e12,
        }


# --- HTTP mode ---------------------------------------------------------------

MAX_BODY = 64 << 10


def make_handler(bench):
    class Handler(BaseHTTPRequestHandler):
        server_version = f"roofsim-gpu-agent/{AGENT_VERSION}"

        def _send(self, code, obj):
            body = json.dumps(obj).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):  # noqa: N802 (http.server naming)
            if self.path == "/v1/info":
                self._send(200, bench.info())
            else:
                self._send(404, {"error": f"no such endpoint {self.path}"})

        def do_POST(self):  # noqa: N802
            if self.path != "/v1/gemm":
                self._send(404, {"error": f"no such endpoint {self.path}"})
                return
            try:
                n = int(self.headers.get("Content-Length", "0"))
            except ValueError:
                n = -1
            if n < 0 or n > MAX_BODY:
                self._send(413, {"error": f"body: must be 0..{MAX_BODY} bytes"})
                return
            try:
                req = json.loads(self.rfile.read(n) or b"{}")
                if not isinstance(req, dict):
                    raise AgentError("body: must be a JSON object")
                unknown = set(req) - {"m", "n", "k", "precision", "warmup", "repeats"}
                if unknown:
                    raise AgentError(f"{sorted(unknown)[0]}: unknown field")
                prec = req.get("precision")
                if prec not in PRECISIONS:
                    raise AgentError(f"precision: unknown {prec!r} (known: {', '.join(PRECISIONS)})")
                res = bench.measure(req.get("m"), req.get("n"), req.get("k"), prec,
                                    req.get("warmup", 10), req.get("repeats", 30))
            except (AgentError, json.JSONDecodeError) as e:
                self._send(400, {"error": str(e)})
                return
            except Exception as e:  # one bad request must not stop the agent
                self._send(500, {"error": f"{type(e).__name__}: {e}"})
                return
            self._send(200, res)

        def log_message(self, fmt, *args):
            sys.stderr.write("agent: " + (fmt % args) + "\n")

    return Handler


# --- batch mode ---------------------------------------------------------------

CSV_COLUMNS = ["shape", "m", "n", "k", "precision", "status", "time_s", "min_s", "max_s",
               "tflops", "repeats", "inner", "rotated_copies", "kernel", "device",
               "compute_capability", "torch", "cuda", "reason"]


def run_bench(bench, out, precisions, warmup, repeats):
    """Times every SHAPES x precisions pair and writes one CSV row each, as it
    goes (a run cut short keeps the rows it finished)."""
    info = bench.info()
    rows = []
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=CSV_COLUMNS)
        w.writeheader()
        for shape, m, n, k in SHAPES:
            for p in precisions:
                r = bench.measure(m, n, k, p, warmup, repeats)
                row = {"shape": shape, "m": m, "n": n, "k": k, "precision": p, "status": r["status"],
                       "device": info["device"], "compute_capability": info["compute_capability"],
                       "torch": info["torch"], "cuda": info["cuda"], "reason": r.get("reason", "")}
                if r["status"] == "ok":
                    for c in ("time_s", "min_s", "max_s", "tflops"):
                        row[c] = f"{r[c]:.6g}"
                    for c in ("repeats", "inner", "rotated_copies", "kernel"):
                        row[c] = r[c]
                w.writerow(row)
                f.flush()
                rows.append(row)
                shown = (f"{r['time_s'] * 1e6:10.2f} us {r['tflops']:8.1f} TFLOP/s" if r["status"] == "ok"
                         else r["reason"])
                print(f"{shape:13s} {m:6d} {n:6d} {k:6d} {p:6s} {shown}", file=sys.stderr, flush=True)
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description="roofsim GPU measurement agent (PyTorch + CUDA events)")
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("info", help="print the device and supported precisions as JSON")
    b = sub.add_parser("bench", help="time the documented shapes in every precision; write a CSV")
    b.add_argument("--out", required=True, help="CSV file to write")
    b.add_argument("--precisions", default=",".join(PRECISIONS), help="comma-separated subset")
    b.add_argument("--warmup", type=int, default=10)
    b.add_argument("--repeats", type=int, default=30)
    s = sub.add_parser("serve", help="answer sim serve --measure-url over HTTP")
    s.add_argument("--host", default="127.0.0.1", help="bind address (default loopback; reach it over an SSH tunnel)")
    s.add_argument("--port", type=int, default=8765)
    a = ap.parse_args(argv)
    try:
        if a.cmd == "bench":
            precs = [p.strip() for p in a.precisions.split(",") if p.strip()]
            for p in precs:
                if p not in PRECISIONS:
                    raise AgentError(f"--precisions: unknown {p!r} (known: {', '.join(PRECISIONS)})")
        bench = Bench(load_torch())
        if a.cmd == "info":
            print(json.dumps(bench.info(), indent=2))
        elif a.cmd == "bench":
            run_bench(bench, a.out, precs, a.warmup, a.repeats)
        else:
            srv = ThreadingHTTPServer((a.host, a.port), make_handler(bench))
            print(f"agent: {bench.name} listening on http://{a.host}:{srv.server_address[1]}", file=sys.stderr, flush=True)
            try:
                srv.serve_forever()
            except KeyboardInterrupt:
                pass
            srv.server_close()
    except AgentError as e:
        print(f"agent: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
