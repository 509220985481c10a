"""NEON against the scalar kernels through the public API, on an aarch64 machine (or qemu).

tests/c/test_kernels.c checks each kernel alone; this checks them as the operator layer calls
them: per-tensor, per-axis and blocked layouts, packed outputs whose runs start mid-byte,
float16/bfloat16 inputs and outputs, DynamicQuantizeLinear's min/max. Results must be
bit-identical. Skipped where NEON is unavailable.
"""
import os
import zlib

import ml_dtypes
import numpy as np
import pytest

import qsimd

pytestmark = pytest.mark.skipif("neon" not in qsimd.available_isas(), reason="no NEON here")

BF16 = np.dtype(ml_dtypes.bfloat16)
OUT = {"uint8": (0, 255), "int8": (-128, 127), "uint16": (0, 65535), "int16": (-32768, 32767),
       "uint4": (0, 15), "int4": (-8, 7), "uint2": (0, 3), "int2": (-2, 1)}
ZP_DTYPE = {"uint8": np.uint8, "int8": np.int8, "uint16": np.uint16, "int16": np.int16,
            "uint4": ml_dtypes.uint4, "int4": ml_dtypes.int4, "uint2": ml_dtypes.uint2,
            "int2": ml_dtypes.int2}


def run_both(fn):
    """fn() on scalar and on NEON; the results (tuples of arrays) as raw bytes."""
    out = {}
    previous = qsimd.get_isa()
    try:
        for name in ("scalar", "neon"):
            qsimd.set_isa(name)
            r = fn()
            if isinstance(r, qsimd.PackedTensor):   # packed=True: its bytes (a tuple itself)
                r = (r.data,)
            r = r if isinstance(r, tuple) else (r,)
            out[name] = [np.ascontiguousarray(a).view(np.uint8).tobytes() for a in r]
    finally:
        qsimd.set_isa(None if previous == qsimd.available_isas()[-1] else previous)
    return out["scalar"], out["neon"]


def adversarial(rng, shape, scale, lo, hi):
    """float32 values around x / scale's interesting points: ties, range edges, specials."""
    n = int(np.prod(shape))
    k = rng.integers(lo - 3, hi + 4, n).astype(np.float64)
    pick = rng.integers(0, 8, n)
    v = np.where(pick == 0, (k + 0.5) * scale, k * scale)
    v = np.where(pick == 1, (rng.random(n) * (hi - lo + 6) + lo - 3) * scale, v)
    v = v.astype(np.float32)
    bits = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)
    v = np.where(pick == 2, bits, v)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1e-45, -1e-40, 3e38,
                        2.0**31 * scale, -(2.0**31) * scale], np.float32)
    v = np.where(pick == 3, special[rng.integers(0, special.size, n)], v)
    return v.reshape(shape)


LAYOUTS = [  # (shape, axis, block_size)
    ((1000,), 0, 0), ((5, 77), 0, 0), ((3, 40, 2), 1, 0), ((6, 33), 1, 0), ((4, 50), 1, 16),
    ((4, 50), 1, 3), ((66, 5), 0, 33), ((2, 9, 70), 2, 35), ((301,), 0, 0), ((7,), 0, 0),
]


def _params(rng, shape, axis, block, otn, dtype):
    lo, hi = OUT[otn]
    if block:
        sshape = list(shape)
        sshape[axis] = -(-shape[axis] // block)
        sshape = tuple(sshape)
    elif shape[axis] > 1 and rng.random() < 0.7:
        sshape = (shape[axis],)
    else:
        sshape = ()
    scale = np.float32(2.0) ** rng.integers(-6, 6, sshape).astype(np.float32)
    if rng.random() < 0.5:
        scale = (scale * rng.uniform(0.5, 2.0, sshape)).astype(np.float32)
    with np.errstate(over="ignore"):
        scale = np.asarray(scale, np.float32).astype(dtype)
    zp = np.asarray(rng.integers(lo, hi + 1, sshape)).astype(ZP_DTYPE[otn])
    return scale, zp


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("otn", list(OUT))
def test_quantize_matches_scalar(layout, otn):
    shape, axis, block = layout
    rng = np.random.default_rng(zlib.crc32(repr((layout, otn)).encode()))
    lo, hi = OUT[otn]
    for xdt, prec in ((np.float32, None), (np.float16, None), (BF16, None),
                      (np.float32, "float16"), (np.float32, "bfloat16")):
        scale, zp = _params(rng, shape, axis, block, otn, xdt)
        with np.errstate(invalid="ignore", over="ignore"):   # NaN, huge -> f16/bf16 is meant
            x = adversarial(rng, shape, float(np.max(scale.astype(np.float32))), lo, hi).astype(xdt)
        for packed in ((False, True) if otn in ("uint4", "int4", "uint2", "int2") else (False,)):
            for z in (zp, None):
                a, b = run_both(lambda: qsimd.quantize_linear(
                    x, scale, z, axis=axis, block_size=block, precision=prec, packed=packed,
                    output_dtype=otn))
                assert a == b, (xdt, prec, packed, z is None)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("otn", list(OUT))
def test_dequantize_matches_scalar(layout, otn):
    shape, axis, block = layout
    rng = np.random.default_rng(zlib.crc32(repr((layout, otn, 1)).encode()))
    lo, hi = OUT[otn]
    x = rng.integers(lo, hi + 1, shape).astype(ZP_DTYPE[otn])
    for sdt in (np.float32, np.float16, BF16):
        scale, zp = _params(rng, shape, axis, block, otn, sdt)
        if rng.random() < 0.5:   # products that round to ties and overflow in half precision
            with np.errstate(over="ignore"):
                scale = (scale.astype(np.float32) * np.float32(1 + 2.0**-11) * 2**9).astype(sdt)
        for z in (zp, None):
            for odt in (None, np.float32):
                a, b = run_both(lambda: qsimd.dequantize_linear(
                    x, scale, z, axis=axis, block_size=block, output_dtype=odt))
                assert a == b, (sdt, odt, z is None)


FP = {"float8e4m3fn": (ml_dtypes.float8_e4m3fn, 448.0), "float8e5m2": (ml_dtypes.float8_e5m2, 57344.0),
      "float4e2m1": (ml_dtypes.float4_e2m1fn, 6.0)}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("otn", list(FP))
def test_float8_float4_match_scalar(layout, otn):
    """float32 -> float8 e4m3fn / e5m2 / float4 (packed runs starting mid-byte) and back."""
    shape, axis, block = layout
    rng = np.random.default_rng(zlib.crc32(repr((layout, otn, 2)).encode()))
    dt, top = FP[otn]
    scale, _ = _params(rng, shape, axis, block, "uint8", np.float32)
    with np.errstate(invalid="ignore", over="ignore"):
        x = adversarial(rng, shape, float(np.max(scale)) * top / 128, -130, 130)
    zp = None
    if otn == "float4e2m1":
        zp = rng.choice([0.0, -0.0, 0.5, -1.5, 6.0], np.shape(scale)).astype(np.float32).astype(dt)
    for packed in ((False, True) if otn == "float4e2m1" else (False,)):
        for z in (zp, None):
            for sat in (True, False):
                a, b = run_both(lambda: qsimd.quantize_linear(
                    x, scale, z, axis=axis, block_size=block, packed=packed, saturate=sat,
                    output_dtype=otn))
                assert a == b, (packed, z is None, sat)
    codes = rng.integers(0, 256, shape).astype(np.uint8)
    xq = (codes & 15 if otn == "float4e2m1" else codes).view(dt)
    for odt in (None, np.float16, ml_dtypes.bfloat16):
        a, b = run_both(lambda: qsimd.dequantize_linear(xq, scale, axis=axis, block_size=block,
                                                        output_dtype=odt))
        assert a == b, odt
    if otn == "float4e2m1":
        pt = qsimd.PackedTensor(qsimd.pack(xq), otn, xq.shape)
        a, b = run_both(lambda: qsimd.dequantize_linear(pt, scale, axis=axis, block_size=block))
        assert a == b, "packed"


@pytest.mark.parametrize("n", [1, 15, 16, 17, 100, 1000])
def test_dynamic_quantize_matches_scalar(n):
    rng = np.random.default_rng(n)
    for trial in range(6):
        x = rng.standard_normal(n).astype(np.float32)
        if trial == 1:
            x[rng.integers(0, n, max(1, n // 3))] = np.nan
        if trial == 2:
            x = np.where(rng.random(n) < 0.5, np.float32(0.0), np.float32(-0.0)) * np.abs(x)
        if trial == 3:
            x = np.abs(x)
            x[-1] = -0.0
        if trial == 4:
            x[:] = np.nan
            x[rng.integers(0, n)] = rng.choice([0.0, -0.0, 1.0])
        if trial == 5:
            x[rng.integers(0, n, max(1, n // 5))] = rng.choice([np.inf, -np.inf])
        a, b = run_both(lambda: qsimd.dynamic_quantize_linear(x))
        assert a == b, trial


@pytest.mark.skipif(bool(os.environ.get("QSIMD_ISA")), reason="QSIMD_ISA forces a tier")
def test_neon_is_the_default():
    assert qsimd.available_isas()[-1] == "neon"
    assert qsimd.get_isa() == "neon"
