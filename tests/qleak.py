"""Memory-leak workload: many small calls of every operator and error path.

`workload(n)` makes n calls that cover the fast paths, the general path with heap-allocated
parameter arrays (more than 16 scale entries), packed inputs and outputs, `out=` with and
without overlap, DynamicQuantizeLinear and exceptions. tests/test_leaks.py runs ~20k of
them; the campaign (.ci/leaks.sh) runs
    python tests/qleak.py --calls 1000000          # RSS and allocated blocks stay flat
    valgrind ... python tests/qleak.py --calls 400 --every-isa   # memcheck on a subset
"""
from __future__ import annotations

import argparse
import gc
import os
import sys
import time

import ml_dtypes
import numpy as np

import qsimd


def rss_bytes() -> int:
    """Resident set size of this process (Linux /proc), or 0 where unavailable."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


class Inputs:
    def __init__(self):
        rng = np.random.default_rng(0)
        self.x = rng.standard_normal(64).astype(np.float32)
        self.x2 = rng.standard_normal((4, 256)).astype(np.float32)      # per-axis, 256 entries
        self.s256 = (rng.random(256) + 0.1).astype(np.float32)
        self.z256 = rng.integers(-8, 8, 256).astype(ml_dtypes.int4)
        self.sb = (rng.random((4, 64)) + 0.1).astype(np.float16)        # blocked: 256 entries
        self.q8 = rng.integers(0, 256, 64).astype(np.uint8)
        self.q2 = rng.integers(-128, 128, (4, 256)).astype(np.int8)
        self.z2 = rng.integers(-128, 128, 256).astype(np.int8)
        self.packed = qsimd.quantize_linear(self.x2, self.s256, self.z256, axis=1,
                                            packed=True).data
        self.out8 = np.empty(64, np.uint8)
        self.outf = np.empty(64, np.float32)
        self.i32 = rng.integers(-1000, 1000, 64).astype(np.int32)
        self.big_endian = self.x.astype(">f4")


def _calls(v: Inputs):
    """One round of calls (a list of thunks)."""
    q, d = qsimd.quantize_linear, qsimd.dequantize_linear
    pt = qsimd.PackedTensor(v.packed, "int4", (4, 256))

    def err(fn, *a, **k):
        def run():
            try:
                fn(*a, **k)
            except (TypeError, ValueError):
                return
            raise AssertionError("expected an error")
        return run

    return [
        lambda: q(v.x, np.float32(0.1), np.uint8(3)),                         # fast path
        lambda: q(v.x, 0.1, out=v.out8),                                      # fast path, out
        lambda: d(v.q8, np.float32(0.5), np.uint8(7)),                        # fast path
        lambda: d(v.q8, np.float32(0.5), out=v.outf),
        lambda: q(v.x, ml_dtypes.bfloat16(0.5), ml_dtypes.int4(-3)),            # user scalars
        lambda: d(v.q8, np.float16(0.5), 7, output_dtype="float32"),           # Python int zp
        lambda: q(v.x2, v.s256, v.z256, axis=1),  # heap params
        lambda: q(v.x2, v.sb, axis=1, block_size=4, output_dtype="uint2", packed=True),
        lambda: d(v.q2, v.s256, v.z2, axis=1, output_dtype=ml_dtypes.bfloat16),
        lambda: d(pt, v.s256, v.z256, axis=1),  # packed input
        lambda: q(v.big_endian, [0.5], output_dtype="int16"),
        lambda: q(v.i32, np.int32(3), output_dtype="int8", num_threads=2),
        lambda: d(v.i32, np.float32(0.25), out=v.i32.view(np.float32).copy()),
        lambda: qsimd.dynamic_quantize_linear(v.x),
        lambda: qsimd.unpack(qsimd.pack(v.z256), "int4", 256),
        err(q, v.x2, v.s256, axis=0),  # C error message
        err(q, v.x, np.ones(2)),                                              # Python error
        err(d, pt, v.s256, axis=7),
        err(d, qsimd.PackedTensor(v.packed[:-1], "int4", (4, 256)), v.s256),
        err(qsimd.dynamic_quantize_linear, np.zeros(0, np.float32)),
        err(q, v.x, 1.0, out=np.empty(3, np.uint8)),
    ]


def workload(n: int, inputs: Inputs | None = None) -> int:
    """Makes n calls; returns n."""
    v = inputs or Inputs()
    calls = _calls(v)
    k = len(calls)
    for i in range(n):
        calls[i % k]()
    return n


def measure(n: int) -> dict:
    """RSS and allocated-block growth over n calls, after a warm-up round."""
    v = Inputs()
    workload(5000, v)   # caches, arenas and lazily built tables settle first
    gc.collect()
    rss0, blocks0 = rss_bytes(), sys.getallocatedblocks()
    t0 = time.perf_counter()
    workload(n, v)
    took = time.perf_counter() - t0
    gc.collect()
    return {"calls": n, "seconds": took, "rss_growth": rss_bytes() - rss0,
            "block_growth": sys.getallocatedblocks() - blocks0, "rss": rss_bytes()}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description="qsimd memory-leak workload")
    p.add_argument("--calls", type=int, default=1_000_000)
    p.add_argument("--every-isa", action="store_true", help="run the calls on each ISA")
    p.add_argument("--max-rss-growth-mb", type=float, default=8.0)
    p.add_argument("--max-block-growth", type=int, default=2000)
    a = p.parse_args(argv)
    if a.every_isa:   # valgrind: a few calls on every ISA it can run
        for isa in qsimd.available_isas():
            qsimd.set_isa(isa)
            workload(a.calls)
        qsimd.set_isa(None)
        print(f"qleak: {a.calls} calls on each of {qsimd.available_isas()}")
        return 0
    m = measure(a.calls)
    print(f"qleak: {m['calls']} calls in {m['seconds']:.1f} s "
          f"({m['calls'] / m['seconds']:.0f}/s); RSS growth {m['rss_growth'] / 2**20:.2f} MiB "
          f"(RSS {m['rss'] / 2**20:.0f} MiB), allocated-block growth {m['block_growth']}")
    bad = m["rss_growth"] > a.max_rss_growth_mb * 2**20 or m["block_growth"] > a.max_block_growth
    if bad:
        print(f"qleak: memory grew beyond the limits ({a.max_rss_growth_mb} MiB, "
              f"{a.max_block_growth} blocks)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
