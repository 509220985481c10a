"""Quick speed check of the kernels per instruction set (not a test, not the full benchmark).

Ratios against a data-movement floor: quantize f32 -> u8 against NumPy's copyto of a uint32
array into a uint8 array (same bytes read and written), dequantize u8 -> f32 against a uint8
-> uint32 copy. Medians of repeated single-threaded calls writing into a preallocated out=.

    python benchmarks/quick_speed.py [sizes...]
"""
import sys

import ml_dtypes
import numpy as np

import qsimd
from bench import median_times   # benchmarks/bench.py, beside this file


def median_time(fn):
    return median_times({"fn": fn}, 0.4)["fn"]


def main(sizes):
    rng = np.random.default_rng(0)
    isas = qsimd.available_isas()
    print(f"{'n':>9} {'op':<22} {'floor us':>9} " + " ".join(f"{i:>9}" for i in isas))
    for n in sizes:
        x = (rng.standard_normal(n) * 3).astype(np.float32)
        s = np.float32(0.05)
        zp = np.uint8(128)
        # touched memory: untouched np.empty pages all read as the one shared zero page
        u32 = rng.integers(0, 256, n, dtype=np.uint32)
        u8 = np.ones(n, np.uint8)
        q_floor = median_time(lambda: np.copyto(u8, u32, casting="unsafe"))
        codes = rng.integers(0, 256, n, dtype=np.uint16).astype(np.uint8)
        f32 = np.ones(n, np.float32)
        d_floor = median_time(lambda: np.copyto(u32, codes, casting="unsafe"))
        packed = np.ones((n + 1) // 2, np.uint8)
        i4zp = np.array(0, ml_dtypes.int4)
        rows = {
            "quantize f32->u8": (q_floor, lambda: qsimd.quantize_linear(x, s, zp, out=u8)),
            "quantize f32->i4 pack": (q_floor, lambda: qsimd.quantize_linear(
                x, s, i4zp, packed=True, out=packed)),
            "dequantize u8->f32": (d_floor, lambda: qsimd.dequantize_linear(codes, s, zp, out=f32)),
        }
        for name, (floor, fn) in rows.items():
            ratios = []
            for isa in isas:
                qsimd.set_isa(isa)
                ratios.append(median_time(fn) / floor)
            qsimd.set_isa(None)
            print(f"{n:>9} {name:<22} {floor * 1e6:>9.1f} " +
                  " ".join(f"{r:>8.2f}x" for r in ratios))


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [1 << 16, 1 << 20, 1 << 24])
