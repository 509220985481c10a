"""Blocked along the last axis with more scale entries than the operator layer converts at once
(qs_params_room in csrc/ops/params.c: 32 KB of converted forms, 1024 to 8192 entries by the
forms a kernel reads): runs are cut into chunks of entries, mid-row,
at odd element offsets and mid-byte for packed outputs. Every parameter form the kernels read
(float32 scales, float64 scales for int32 x, int32 / int64 / float zero points) is checked
against the ONNX reference, or docs/CONTRACT.md's NumPy models for AMD Quark's types."""
import ml_dtypes
import numpy as np
import pytest
from onnx import TensorProto

import qsimd
from qtest_util import QUICK, assert_same, ref_dequantize, ref_quantize
from test_types import model_quantize_half, model_quantize_q32

# (rows, D, block): 500 / 334 / 700 / 1200 entries per row, a short last block, so a run per
# row; odd D puts rows mid-byte when packed. Without a short block the rows form one run whose
# chunks straddle rows: (20, 998, 2) and (3, 1536, 32) (fewer entries than a chunk).
SHAPES = [(12, 999, 2), (20, 1000, 3), (8, 2799, 4), (20, 998, 2), (3, 1536, 32), (12, 2399, 2)]


def _case(seed, shape, block, xdt=np.float32):
    rng = np.random.default_rng(seed)
    rows, d = shape
    nb = -(-d // block)
    scale = (rng.random((rows, nb)) * 0.2 + 0.01).astype(np.float32)
    x = rng.normal(0, 40, shape) * np.repeat(scale, block, axis=1)[:, :d]
    x[:, ::7] = np.rint(x[:, ::7] / 0.5) * 0.5   # ties
    if np.dtype(xdt) == np.int32:
        x = np.rint(x * 100).astype(np.int32)
        scale = (scale * 100).astype(np.float32)
    return x.astype(xdt), scale, rng


@pytest.mark.parametrize("rows,d,block", SHAPES)
@pytest.mark.parametrize("out", ["uint8", "int16", "int4", "uint2"])
@pytest.mark.parametrize("packed", [False, True])
def test_integer_outputs(isa, rows, d, block, out, packed):
    if packed and out not in ("int4", "uint2"):
        pytest.skip("packed is for 4- and 2-bit outputs")
    x, scale, rng = _case(rows * d + block, (rows, d), block)
    dt = np.dtype(getattr(ml_dtypes, out, None) or out)
    info = {"uint8": (0, 255), "int16": (-32768, 32767), "int4": (-8, 7), "uint2": (0, 3)}[out]
    zp = rng.integers(info[0], info[1] + 1, scale.shape).astype(dt)
    want = ref_quantize(x, scale, zp, axis=1, block_size=block)
    got = qsimd.quantize_linear(x, scale, zp, axis=-1, block_size=block, packed=packed)
    if packed:
        assert_same(got, qsimd.pack(want), f"{out} packed")
        back = qsimd.dequantize_linear(got, scale, zp,
                                       axis=1, block_size=block)
        assert_same(back, ref_dequantize(want, scale, zp, axis=1, block_size=block),
                    "dequantized from packed", count=True)
    else:
        assert_same(got, want, out, count=True)
        assert_same(qsimd.dequantize_linear(got, scale, zp, axis=1, block_size=block),
                    ref_dequantize(want, scale, zp, axis=1, block_size=block), "dequantized",
                    count=True)


@pytest.mark.parametrize("xdt", [np.float16, ml_dtypes.bfloat16, np.int32])
def test_other_x_types(isa, xdt):
    # float16 x with float16 scales divides in float16; int32 x in float64 (scale64)
    x, scale, rng = _case(7, (2, 999), 2, xdt)
    if np.dtype(xdt) != np.int32:
        scale = scale.astype(xdt)
    zp = rng.integers(-100, 100, scale.shape).astype(np.int8)
    assert_same(qsimd.quantize_linear(x, scale, zp, axis=1, block_size=2),
                ref_quantize(x, scale, zp, axis=1, block_size=2), np.dtype(xdt).name,
                count=True)


def test_float_outputs(isa):
    x, scale, _ = _case(11, (2, 2799), 4)
    for code in (TensorProto.FLOAT8E4M3FN, TensorProto.FLOAT8E5M2FNUZ):
        assert_same(qsimd.quantize_linear(x, scale, axis=1, block_size=4, output_dtype=code),
                    ref_quantize(x, scale, axis=1, block_size=4, output_dtype=code),
                    f"float8 {code}", count=True)
    # float4 adds its zero point in float (the zpf entries)
    zp = np.resize(np.array([0, 0.5, -1, 6, -0.0], np.float32), scale.shape).astype(
        ml_dtypes.float4_e2m1fn)
    want = ref_quantize(x, scale, zp, axis=1, block_size=4)
    assert_same(qsimd.quantize_linear(x, scale, zp, axis=1, block_size=4), want, "float4",
                count=True)
    assert_same(qsimd.quantize_linear(x, scale, zp, axis=1, block_size=4, packed=True),
                qsimd.pack(want), "float4 packed")


@pytest.mark.parametrize("otn", ["int32", "uint32"])
def test_quark_32bit(isa, otn):
    # int64 zero points (zp64): values beyond int32 for uint32
    x, scale, rng = _case(13, (2, 999), 2)
    x = (x * 1e7).astype(np.float32)
    dt = np.dtype(otn)
    lo, hi = (-2**31, 2**31 - 1) if otn == "int32" else (0, 2**32 - 1)
    zp = rng.integers(lo, hi, scale.shape, dtype=np.int64, endpoint=True).astype(dt)
    zfull = np.repeat(zp, 2, axis=1)[:, :999]
    sfull = np.repeat(scale, 2, axis=1)[:, :999]
    assert_same(qsimd.quantize_linear(x, scale, zp, axis=1, block_size=2),
                model_quantize_q32(x, sfull, zfull, otn), otn, count=True)
    q = rng.integers(lo, hi, x.shape, dtype=np.int64, endpoint=True).astype(dt)
    want = ((q.astype(np.int64) - zfull.astype(np.int64)).astype(np.float32) * sfull)
    assert_same(qsimd.dequantize_linear(q, scale, zp, axis=1, block_size=2), want,
                f"dequantize {otn}", count=True)


@pytest.mark.parametrize("otn", ["float16", "bfloat16"])
def test_quark_half(isa, otn):
    x, scale, rng = _case(17, (3, 999), 2)
    odt = np.dtype(np.float16) if otn == "float16" else np.dtype(ml_dtypes.bfloat16)
    zp = (rng.integers(-64, 64, scale.shape) * 0.25).astype(odt)
    zfull = np.repeat(zp, 2, axis=1)[:, :999]
    sfull = np.repeat(scale, 2, axis=1)[:, :999]
    assert_same(qsimd.quantize_linear(x, scale, zp, axis=1, block_size=2),
                model_quantize_half(x, sfull, zfull, otn), otn, count=True)
    h = x.astype(odt)
    want = (h.astype(np.float32) - zfull.astype(np.float32)) * sfull
    assert_same(qsimd.dequantize_linear(h, scale, zp, axis=1, block_size=2), want,
                f"dequantize {otn}", count=True)


@pytest.mark.skipif(QUICK, reason="a 1.2M-element case; the native run covers it")
@pytest.mark.parametrize("packed", [False, True])
@pytest.mark.parametrize("d", [4001, 4000])
def test_threads_split_chunked_rows(isa, packed, d):
    # two threads, each converting its own chunks; rows of 4001 elements (odd, so packed
    # rows start mid-byte) in blocks of 32 with a short last block, or one run of 4000-wide
    # rows cut between threads on a block boundary
    x, scale, rng = _case(19, (300, d), 32)
    zp = rng.integers(-8, 8, scale.shape).astype(ml_dtypes.int4)
    want = ref_quantize(x, scale, zp, axis=1, block_size=32)
    got = qsimd.quantize_linear(x, scale, zp, axis=1, block_size=32, packed=packed,
                                num_threads=2)
    assert_same(got, qsimd.pack(want) if packed else want, "two threads", count=True)


@pytest.mark.parametrize("with_zp", [False, True])
def test_many_reused_entries(isa, with_zp):
    # more entries than fit inline, converted once and reused by every row: per-axis with
    # 300 channels, and blocks along an outer axis (a float32 scale without a zero point
    # needs no converted array at all)
    rng = np.random.default_rng(29)
    x = (rng.standard_normal((3, 300, 5)) * 30).astype(np.float32)
    s = (rng.random(300) * 0.5 + 0.05).astype(np.float32)
    z = rng.integers(-20, 20, 300).astype(np.int8) if with_zp else None
    assert_same(qsimd.quantize_linear(x, s, z, axis=1, output_dtype="int8"),
                ref_quantize(x, s, z, axis=1, output_dtype=TensorProto.INT8), "per-axis",
                count=True)
    sb = (rng.random((3, 100, 5)) * 0.5 + 0.05).astype(np.float32)
    zb = rng.integers(-20, 20, (3, 100, 5)).astype(np.int8) if with_zp else None
    assert_same(qsimd.quantize_linear(x, sb, zb, axis=1, block_size=3, output_dtype="int8"),
                ref_quantize(x, sb, zb, axis=1, block_size=3, output_dtype=TensorProto.INT8),
                "blocked on an outer axis", count=True)


@pytest.mark.parametrize("special", [0.0, -0.0, 1e-45, 2.0**-84, 2.0**101, np.inf, np.nan, -0.5])
def test_one_special_scale_entry(isa, special):
    """One scale entry outside the reciprocal form's range (or negative) at each position of a
    per-axis scale, the others ordinary: the conversion's flags must see it wherever it is (in
    its vector steps and its tail), or the kernels would take its reciprocal. Against
    docs/CONTRACT.md's rule (the reference casts an infinite quotient to int32, which is
    platform behaviour): the float32 quotient rounded half to even, plus the zero point,
    saturated; NaN gives the type's minimum."""
    rng = np.random.default_rng(7)
    d = 37
    x = (rng.standard_normal((3, d)) * 8).astype(np.float32)
    x[0, :5] = [0.0, -0.0, 1e-30, -3.0, 2.5]
    base = (rng.random(d) * 0.5 + 0.05).astype(np.float32)
    z = rng.integers(0, 256, d).astype(np.uint8)
    for p in range(d):
        s = base.copy()
        s[p] = special
        with np.errstate(all="ignore"):
            q = np.rint(x / s).astype(np.float64) + z
        want = np.where(np.isnan(q), 0, np.clip(q, 0, 255)).astype(np.uint8)
        assert_same(qsimd.quantize_linear(x, s, z, axis=1), want, f"entry {p} = {special}")


@pytest.mark.parametrize("out,packed", [("uint8", False), ("int4", True), ("int4", False),
                                        ("int16", False)])
def test_zero_points_all_zero_in_some_chunks(isa, out, packed):
    # zero points that are all 0 over a chunk of entries are passed to the kernels as none
    # (csrc/ops/params.c): chunks of zeros beside chunks with a nonzero entry, a nonzero
    # neighbour sharing a packed byte with the chunk's first entry
    x, scale, rng = _case(5, (20, 1000), 3)
    dt = np.dtype(getattr(ml_dtypes, out, None) or out)
    zp = np.zeros(scale.shape, dt)
    zp[3, 7] = 1
    zp[12, 0] = -1 if dt.kind == "i" or out == "int4" else 2
    zp[19, -1] = 1
    want = ref_quantize(x, scale, zp, axis=1, block_size=3)
    got = qsimd.quantize_linear(x, scale, zp, axis=-1, block_size=3, packed=packed)
    assert_same(got, qsimd.pack(want) if packed else want, out, count=True)
    assert_same(qsimd.dequantize_linear(got, scale, zp, axis=1, block_size=3),
                ref_dequantize(want, scale, zp, axis=1, block_size=3), "dequantized",
                count=True)
    # every entry zero, and per-axis (converted once): the same results as no zero point
    z0 = np.zeros(scale.shape[1], dt)
    x = np.ascontiguousarray(x[:, :scale.shape[1]])
    want = ref_quantize(x, scale[0], z0, axis=1)
    assert_same(qsimd.quantize_linear(x, scale[0], z0, axis=1), want, "per-axis zeros")
    assert_same(qsimd.dequantize_linear(want, scale[0], z0, axis=1),
                ref_dequantize(want, scale[0], z0, axis=1), "per-axis zeros dequantized")
