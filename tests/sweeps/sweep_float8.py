"""Exhaustive check of qsimd's float32 -> float8 / float4 / float6 conversions against ml_dtypes.

Every one of the 2^32 float32 bit patterns (NaNs, infinities, subnormals, both zeros) is
quantized with scale 1 (x / 1 is x) to float8_e4m3fn, float8_e4m3fnuz, float8_e5m2,
float8_e5m2fnuz, float4_e2m1fn, float6_e2m3fn and float6_e3m2fn, with saturate 0 and 1, on
every instruction set this machine can run, and compared byte for byte with ml_dtypes' cast
(after the ONNX reference's clip to +-max for saturate=1; float4 and float6 saturate in the
cast itself). Float4 and float6 are checked unpacked and packed (float6: 4 codes in 3 bytes,
as onnx.numpy_helper packs them). As an
extra, every float32 is rounded to float8_e8m0fnu through DequantizeLinear (x = 1 with a
per-axis scale holding the values, e8m0 output).

Not a pytest test (it takes minutes): run it by hand or in a nightly job.

    python tests/sweeps/sweep_float8.py [--isa scalar,avx2] [--jobs 2] [--chunk-bits 24]
                                        [--limit-chunks N] [--formats float6e2m3,float6e3m2]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor

import ml_dtypes
import numpy as np

FORMATS = {
    "float8e4m3fn": ml_dtypes.float8_e4m3fn,
    "float8e4m3fnuz": ml_dtypes.float8_e4m3fnuz,
    "float8e5m2": ml_dtypes.float8_e5m2,
    "float8e5m2fnuz": ml_dtypes.float8_e5m2fnuz,
    "float4e2m1": ml_dtypes.float4_e2m1fn,
    "float6e2m3": ml_dtypes.float6_e2m3fn,
    "float6e3m2": ml_dtypes.float6_e3m2fn,
}
FINITE = ("float4e2m1", "float6e2m3", "float6e3m2")   # no inf / NaN: saturate is moot
E8M0_SUB = 1 << 20   # per-axis scale entries per DequantizeLinear call (memory bound)


def _pack4(codes: np.ndarray) -> np.ndarray:
    c = codes.view(np.uint8) & np.uint8(0x0F)
    return (c[0::2] | (c[1::2] << np.uint8(4))).astype(np.uint8)


def _pack6(codes: np.ndarray) -> np.ndarray:
    c = codes.view(np.uint8) & np.uint8(0x3F)   # a multiple of 4 codes
    out = np.empty((c.size // 4, 3), np.uint8)
    out[:, 0] = c[0::4] | (c[1::4] << np.uint8(6))
    out[:, 1] = (c[1::4] >> np.uint8(2)) | (c[2::4] << np.uint8(4))
    out[:, 2] = (c[2::4] >> np.uint8(4)) | (c[3::4] << np.uint8(2))
    return out.reshape(-1)


def _record(bad, key, x, got, want, found):
    idx = np.flatnonzero(got != want)
    if idx.size:
        found.setdefault(key, [0, []])
        found[key][0] += int(idx.size)
        found[key][1].extend((hex(int(x.view(np.uint32)[i])), hex(int(got[i])), hex(int(want[i])))
                             for i in idx[:3 - len(found[key][1])])
    bad[key] = bad.get(key, 0) + int(idx.size)


def check_chunk(args):
    """All checks for the float32 patterns [start, start + size), on each ISA."""
    start, size, isas, formats, e8m0 = args
    import qsimd
    x = (np.arange(size, dtype=np.uint64) + np.uint64(start)).astype(np.uint32).view(np.float32)
    one = np.float32(1)
    counts, bad, found = {}, {}, {}
    with np.errstate(all="ignore"):
        for name, t in ((k, FORMATS[k]) for k in formats):
            fi = ml_dtypes.finfo(t)
            for sat in (0, 1):
                if sat == 0 and name in FINITE and len(formats) < len(FORMATS):
                    continue   # a subset run: saturate is moot for these
                v = np.clip(x, fi.min, fi.max) if sat and name not in FINITE else x
                want = v.astype(t).view(np.uint8)
                for isa in isas:
                    qsimd.set_isa(isa)
                    got = qsimd.quantize_linear(x, one, output_dtype=name,
                                                saturate=bool(sat)).view(np.uint8)
                    key = (isa, name, sat, "")
                    counts[key] = counts.get(key, 0) + size
                    _record(bad, key, x, got, want, found)
                    if name in FINITE and sat:   # float4 / float6 ignore saturate
                        p = qsimd.quantize_linear(x, one, output_dtype=name, packed=True)
                        key = (isa, name, sat, "packed")
                        counts[key] = counts.get(key, 0) + size
                        pw = _pack4(want) if name == "float4e2m1" else _pack6(want)
                        bad[key] = bad.get(key, 0) + int(np.count_nonzero(p != pw))
        ones = np.ones(E8M0_SUB, np.int8)
        for s0 in range(0, size if e8m0 else 0, E8M0_SUB):
            xs = x[s0:s0 + E8M0_SUB]
            want = xs.astype(ml_dtypes.float8_e8m0fnu).view(np.uint8)
            for isa in isas:
                qsimd.set_isa(isa)
                got = qsimd.dequantize_linear(ones[:xs.size], xs, axis=0,
                                              output_dtype="float8e8m0")
                key = (isa, "float8e8m0 (dequantize output)", "-", "")
                counts[key] = counts.get(key, 0) + xs.size
                _record(bad, key, xs, got.view(np.uint8), want, found)
    qsimd.set_isa(None)
    return counts, bad, found


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--isa", default="", help="comma-separated ISAs (default: all available)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--chunk-bits", type=int, default=24)
    ap.add_argument("--limit-chunks", type=int, default=0, help="check only N chunks (smoke)")
    ap.add_argument("--formats", default="", help="comma-separated formats (default: all, and "
                    "the e8m0 rounding)")
    a = ap.parse_args(argv)
    import qsimd
    isas = [s for s in a.isa.split(",") if s] or qsimd.available_isas()
    size = 1 << a.chunk_bits
    starts = list(range(0, 1 << 32, size))
    if a.limit_chunks:
        # spread the sample over the whole range (every exponent, both signs)
        starts = starts[:: max(1, len(starts) // a.limit_chunks)][: a.limit_chunks]
    print(f"qsimd {qsimd.__version__}, ml_dtypes {ml_dtypes.__version__}, numpy {np.__version__}; "
          f"ISAs {isas}; {len(starts)} chunks of 2^{a.chunk_bits}; {a.jobs} processes",
          flush=True)
    t0 = time.perf_counter()
    counts, bad, found = {}, {}, {}
    with ProcessPoolExecutor(max_workers=a.jobs) as pool:
        formats = [f for f in a.formats.split(",") if f] or list(FORMATS)
        jobs = [(s, size, isas, formats, not a.formats) for s in starts]
        for i, (c, b, f) in enumerate(pool.map(check_chunk, jobs)):
            for k, v in c.items():
                counts[k] = counts.get(k, 0) + v
            for k, v in b.items():
                bad[k] = bad.get(k, 0) + v
            for k, (n, ex) in f.items():
                found.setdefault(k, [0, []])
                found[k][0] += n
                found[k][1].extend(ex[: 3 - len(found[k][1])])
            if (i + 1) % 16 == 0 or i + 1 == len(starts):
                print(f"  {i + 1}/{len(starts)} chunks, {time.perf_counter() - t0:.0f} s",
                      flush=True)
    elapsed = time.perf_counter() - t0
    print(f"\n| ISA | format | saturate | layout | inputs checked | mismatches |")
    print("|---|---|---|---|---|---|")
    for k in sorted(counts, key=str):
        isa, name, sat, layout = k
        print(f"| {isa} | {name} | {sat} | {layout or 'one per byte'} | {counts[k]:,} | "
              f"{bad.get(k, 0)} |")
    total = sum(counts.values())
    mism = sum(bad.values())
    print(f"\n{total:,} conversions checked, {mism} mismatches, {elapsed:.0f} s")
    for k, (n, ex) in found.items():
        print(f"  MISMATCH {k}: {n}, e.g. (input, qsimd, ml_dtypes) {ex}")
    return 1 if mism else 0


if __name__ == "__main__":
    sys.exit(main())
