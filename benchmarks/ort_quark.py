"""The Quark-style network of examples/ort_quark.py in onnxruntime: qsimd's custom-op library
against AMD Quark 0.13's own (built by tests/quark_ops.py), one intra-op thread, both
sessions in the same process and their runs interleaved round by round, so that load on the
machine falls on both alike. Prints per-inference times (median of the rounds), the ratio
(the bar is 5x) and, from onnxruntime's profiler, where the time goes per op type.

    python benchmarks/ort_quark.py [--rounds 15] [--runs 5] [--threads 1] [--size 56]
                                   [--library PATH]
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples"))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

import ort_quark  # noqa: E402
import quark_ops  # noqa: E402


def _per_op(model, library, threads, x, runs):
    """ms per inference by op type (onnxruntime's profiler)."""
    s = ort_quark.session(model, library, threads, profile=True)
    for _ in range(runs):
        s.run(None, {"x": x})
    path = s.end_profiling()
    with open(path) as f:
        events = json.load(f)
    os.remove(path)
    t = collections.defaultdict(float)
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            t[e["args"]["op_name"]] += e["dur"] / runs / 1e3
    return t


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--runs", type=int, default=5, help="inferences per session per round")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--size", type=int, default=56)
    ap.add_argument("--channels", type=int, default=64)
    ap.add_argument("--library", help="another build of qsimd's library (e.g. CMake's "
                    "libqsimd_ort.so; default: the installed package's)")
    args = ap.parse_args(argv)
    quark_lib = quark_ops.quark_library()
    if quark_lib is None:
        print(f"Quark's library is not available: {quark_ops.skip_reason()}")
        return 1
    model = ort_quark.build_model(args.channels, args.size)
    x = np.random.default_rng(1).standard_normal(
        (1, args.channels, args.size, args.size)).astype(np.float32)
    libs = {"qsimd": args.library, "quark": quark_lib}
    sessions = {k: ort_quark.session(model, v, args.threads) for k, v in libs.items()}
    outs = {k: s.run(None, {"x": x})[0] for k, s in sessions.items()}
    same = np.array_equal(outs["qsimd"].view(np.uint32), outs["quark"].view(np.uint32))
    times = {k: [] for k in sessions}
    for _ in range(args.rounds):
        for k, s in sessions.items():
            t = time.perf_counter()
            for _ in range(args.runs):
                s.run(None, {"x": x})
            times[k].append((time.perf_counter() - t) / args.runs * 1e3)
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"Quark-style network 1x{args.channels}x{args.size}x{args.size}, "
          f"{args.threads} intra-op thread(s), median of {args.rounds} interleaved rounds "
          f"of {args.runs}:")
    print(f"  qsimd's library  {med['qsimd']:8.2f} ms per inference")
    print(f"  Quark's library  {med['quark']:8.2f} ms per inference")
    print(f"  ratio            {med['quark'] / med['qsimd']:8.2f}x  (bar: 5x)   outputs "
          f"{'bit-identical' if same else 'DIFFERENT'}")
    prof = {k: _per_op(model, v, args.threads, x, args.runs) for k, v in libs.items()}
    print("  per op type (ms per inference, onnxruntime's profiler):")
    for op in sorted(set(prof["qsimd"]) | set(prof["quark"]),
                     key=lambda o: -prof["quark"].get(o, 0)):
        print(f"    {op:28s} qsimd {prof['qsimd'].get(op, 0):7.2f}   "
              f"quark {prof['quark'].get(op, 0):7.2f}")
    conv = {k: sum(v for o, v in p.items() if "Conv" in o) for k, p in prof.items()}
    ops = {k: sum(v for o, v in p.items() if "Conv" not in o and o != "Relu")
           for k, p in prof.items()}
    print(f"  Quark's ops: qsimd {ops['qsimd']:.2f} ms, quark {ops['quark']:.2f} ms "
          f"({ops['quark'] / max(ops['qsimd'], 1e-9):.1f}x); convolutions ~{conv['quark']:.2f} ms")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
