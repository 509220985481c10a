"""`python -m qsimd`: what this machine runs, a self-check on every instruction set, and a
short live benchmark. Finishes in a few seconds. Exit status 1 if the self-check fails."""
from __future__ import annotations

import platform
import sys
import time
from typing import Any, Callable

import ml_dtypes
import numpy as np

import qsimd

# Known values, worked out by hand from the ONNX definitions (and the examples in the ONNX
# operator documentation), not produced by qsimd.
_X = np.array([0, 2, 3, 1000, -254, -1000, 5, -5, 1, -1], np.float32)
_CHECKS: list[tuple[str, Callable[[], Any], np.ndarray]] = [
    ("QuantizeLinear f32->u8, zp 128",
     lambda: qsimd.quantize_linear(_X, np.float32(2), np.uint8(128)),
     np.array([128, 129, 130, 255, 1, 0, 130, 126, 128, 128], np.uint8)),  # 2.5->2, -2.5->-2, .5->0
    ("QuantizeLinear f32->i8, ties to even before zp",
     lambda: qsimd.quantize_linear(np.array([2.5, 3.5, -2.5, 0.5], np.float32), 1.0, np.int8(1)),
     np.array([3, 5, -1, 1], np.int8)),
    ("QuantizeLinear NaN/inf saturate by value",
     lambda: qsimd.quantize_linear(np.array([np.nan, np.inf, -np.inf], np.float32), 1.0, np.uint8(7)),
     np.array([0, 255, 0], np.uint8)),
    ("DequantizeLinear u8->f32",
     lambda: qsimd.dequantize_linear(np.array([0, 3, 128, 255], np.uint8), np.float32(2), np.uint8(128)),
     np.array([-256, -250, 0, 254], np.float32)),
    ("DynamicQuantizeLinear",
     lambda: qsimd.dynamic_quantize_linear(np.array([0, 2, -3, -2.5, 1.34, 0.5], np.float32))[0],
     np.array([153, 255, 0, 26, 221, 179], np.uint8)),
    ("QuantizeLinear to packed int4",
     lambda: qsimd.quantize_linear(np.array([1, -2, 3, -4, 5], np.float32), 1.0,
                                   output_dtype="int4", packed=True).data,
     np.array([0xE1, 0xC3, 0x05], np.uint8)),
    ("DequantizeLinear int4 per-axis",
     lambda: qsimd.dequantize_linear(np.array([[1, -2], [7, -8]], ml_dtypes.int4),
                                     np.array([0.5, 2], np.float32), axis=0),
     np.array([[0.5, -1], [14, -16]], np.float32)),
    # ONNX's test_quantizelinear_e4m3fn: 0, 0.5, 1, 448 (saturated), 96 as e4m3fn bits
    ("QuantizeLinear f32->float8e4m3fn",
     lambda: qsimd.quantize_linear(np.array([0, 1, 2, 100000, 200], np.float32), np.float32(2),
                                   output_dtype="float8e4m3fn").view(np.uint8),
     np.array([0x00, 0x30, 0x38, 0x7E, 0x6C], np.uint8)),
    # 0, 1.25 -> 1, 2.4 -> 2, 4.3 -> 4: codes 0, 2, 4, 6, two per byte, low nibble first
    ("QuantizeLinear f32->float4e2m1 packed",
     lambda: qsimd.quantize_linear(np.array([0, 2.5, 4.8, 8.6], np.float32), np.float32(2),
                                   output_dtype="float4e2m1", packed=True).data,
     np.array([0x20, 0x64], np.uint8)),
    ("DequantizeLinear float8e5m2->f32",
     lambda: qsimd.dequantize_linear(np.array([0x3C, 0x7B, 0xC0], np.uint8).view(
         ml_dtypes.float8_e5m2), np.float32(2)),
     np.array([2, 114688, -4], np.float32)),
]


def self_check() -> bool:
    ok = True
    previous = qsimd.get_isa()
    for isa in qsimd.available_isas():
        qsimd.set_isa(isa)
        failed = []
        for name, fn, want in _CHECKS:
            got = np.asarray(fn())
            if got.dtype != want.dtype or got.shape != want.shape or \
                    got.tobytes() != want.tobytes():
                failed.append(f"{name}: got {got.tolist()}, expected {want.tolist()}")
        print(f"  {isa:<7} {'ok' if not failed else 'FAILED'} ({len(_CHECKS)} checks)")
        for f in failed:
            print(f"          {f}")
        ok &= not failed
    qsimd.set_isa(previous)
    return ok


def _median_time(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    times.sort()
    return times[len(times) // 2]


def benchmark() -> None:
    rng = np.random.default_rng(0)
    print(f"  {'elements':>9}  {'qsimd':>9}  {'numpy':>9}  {'floor':>9}  speed-up vs numpy")
    for n in (1 << 10, 1 << 16, 1 << 20):
        x = rng.standard_normal(n, dtype=np.float32)
        out = np.empty(n, np.uint8)
        src32 = np.empty(n, np.uint32)
        s, zp = np.float32(0.05), np.uint8(128)
        repeat = 200 if n <= 1 << 16 else 30
        tq = _median_time(lambda: qsimd.quantize_linear(x, s, zp, out=out), repeat)
        tn = _median_time(lambda: np.clip(np.rint(x / s) + 128, 0, 255).astype(np.uint8), repeat)
        tf = _median_time(lambda: np.copyto(out, src32, casting="unsafe"), repeat)
        print(f"  {n:>9}  {tq * 1e6:>7.1f}us  {tn * 1e6:>7.1f}us  {tf * 1e6:>7.1f}us  {tn / tq:.1f}x")
    print("  (quantize float32 -> uint8 per-tensor with out=; floor = numpy copy of the same "
          "bytes; full suite: python benchmarks/bench.py)")


def main() -> int:
    print(f"qsimd {qsimd.__version__}  (Python {platform.python_version()}, numpy {np.__version__},"
          f" {platform.machine()})")
    feats = qsimd.cpu_features()
    print("CPU features: " + (" ".join(k for k, v in feats.items() if v) or "(none detected)"))
    print(f"instruction sets available: {', '.join(qsimd.available_isas())}; "
          f"in use: {qsimd.get_isa()}")
    print("self-check:")
    ok = self_check()
    print("benchmark:")
    benchmark()
    print("self-check passed" if ok else "SELF-CHECK FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
