"""Tests of the agent's control flow without a GPU: a fake torch module stands
in for PyTorch (times come from a fixed per-launch cost), so the HTTP
protocol, input checks, the unsupported paths and the CSV writer run here.

    python3 -m unittest tools/gpu-agent/test_agent.py
"""

import csv
import json
import os
import sys
import tempfile
import threading
import types
import unittest
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
import agent  # noqa: E402


def fake_torch(cc=(9, 0), launch_s=10e-6):
    """A module with just the torch surface the agent uses."""
    t = types.ModuleType("torch")
    t.__version__ = "0.0-fake"
    t.version = types.SimpleNamespace(cuda="0.0")
    clock = {"now": 0.0}
    for dt in ("float16", "bfloat16", "float32", "int8", "uint8", "float8_e4m3fn", "float8_e8m0fnu", "float4_e2m1fn_x2"):
        setattr(t, dt, dt)

    class Tensor:
        def __init__(self, *shape):
            self.shape = shape

        def t(self):
            return Tensor(*reversed(self.shape))

        def to(self, _):
            return self

        def view(self, _):
            return self

    def tensor(*a, **kw):
        shape = a[0] if a and isinstance(a[0], tuple) else a
        return Tensor(*shape)

    def mm(*a, **kw):
        clock["now"] += launch_s
        return Tensor()

    def int_mm(a, b):
        if a.shape[0] <= 16:
            raise RuntimeError("_int_mm: self.size(0) needs to be greater than 16")
        return mm()

    class Event:
        def __init__(self, enable_timing=False):
            self.at = 0.0

        def record(self):
            self.at = clock["now"]

        def synchronize(self):
            pass

        def elapsed_time(self, other):
            return (other.at - self.at) * 1e3

    t.randn = t.ones = tensor
    t.randint = lambda lo, hi, shape, **kw: Tensor(*shape)
    t.matmul = t._scaled_mm = t._weight_int4pack_mm = mm
    t._int_mm = int_mm
    t._convert_weight_to_int4pack = lambda w, tiles: w
    t.device = lambda name: name
    props = types.SimpleNamespace(name="Fake GPU", major=cc[0], minor=cc[1], total_memory=80 << 30)
    t.cuda = types.SimpleNamespace(
        is_available=lambda: True,
        get_device_properties=lambda d: props,
        synchronize=lambda: None,
        empty_cache=lambda: None,
        mem_get_info=lambda: (70 << 30, 80 << 30),
        Event=Event,
    )
    return t


class AgentTest(unittest.TestCase):
    def setUp(self):
        self.bench = agent.Bench(fake_torch())

    def test_measure_reports_per_launch_median(self):
        r = self.bench.measure(4096, 4096, 4096, "fp16", warmup=2, repeats=5)
        self.assertEqual(r["status"], "ok")
        self.assertAlmostEqual(r["time_s"], 10e-6, delta=1e-9)
        self.assertAlmostEqual(r["tflops"], 2 * 4096**3 / 10e-6 / 1e12, places=3)

    def test_fp4_unsupported_before_blackwell(self):
        r = self.bench.measure(1, 4096, 4096, "nvfp4")
        self.assertEqual(r["status"], "unsupported")
        self.assertIn("10.0", r["reason"])

    def test_pytorch_refusal_is_unsupported(self):
        r = self.bench.measure(1, 4096, 4096, "int8")
        self.assertEqual(r["status"], "unsupported")
        self.assertIn("greater than 16", r["reason"])

    def test_bad_input(self):
        for args in ((0, 1, 1, "fp16"), (1, 1, 1, "fp3"), (1.5, 1, 1, "fp16")):
            with self.assertRaises(agent.AgentError):
                self.bench.measure(*args)

    def test_bench_csv(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "b.csv")
            agent.run_bench(self.bench, out, ["fp16", "int8", "mxfp4"], 1, 2)
            with open(out) as f:
                rows = list(csv.DictReader(f))
        self.assertEqual(len(rows), 3 * len(agent.SHAPES))
        self.assertEqual({r["status"] for r in rows if r["precision"] == "fp16"}, {"ok"})
        self.assertEqual({r["status"] for r in rows if r["precision"] == "mxfp4"}, {"unsupported"})

    def test_http_protocol(self):
        from http.server import ThreadingHTTPServer

        srv = ThreadingHTTPServer(("127.0.0.1", 0), agent.make_handler(self.bench))
        th = threading.Thread(target=srv.serve_forever, daemon=True)
        th.start()
        base = f"http://127.0.0.1:{srv.server_address[1]}"
        try:
            info = json.load(urllib.request.urlopen(base + "/v1/info"))
            self.assertEqual(info["protocol"], 1)
            self.assertFalse(info["precisions"]["mxfp4"]["supported"])

            def post(body):
                req = urllib.request.Request(base + "/v1/gemm", data=json.dumps(body).encode(), method="POST")
                return json.load(urllib.request.urlopen(req))

            r = post({"m": 64, "n": 4096, "k": 4096, "precision": "bf16", "repeats": 3})
            self.assertEqual(r["status"], "ok")
            for bad in ({"m": 1, "n": 1, "k": 1, "precision": "fp3"}, {"m": -1, "n": 1, "k": 1, "precision": "fp16"},
                        {"m": 1, "n": 1, "k": 1, "precision": "fp16", "extra": 1}):
                with self.assertRaises(urllib.error.HTTPError) as cm:
                    post(bad)
                self.assertEqual(cm.exception.code, 400)
                self.assertIn("error", json.load(cm.exception))
        finally:
            srv.shutdown()
            srv.server_close()


if __name__ == "__main__":
    unittest.main()
