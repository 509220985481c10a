"""docs/CONTRACT.md rules where onnx.reference is undefined or differs, with expectations worked
out by hand; storage (pack/unpack) against onnx.numpy_helper; layout independence and out=."""
import ml_dtypes
import numpy as np
import pytest
from onnx import TensorProto, numpy_helper

import qsimd
from qtest_util import (
    BF16, OUT_TYPES, QUICK, SUBBYTE, assert_same, ref_dequantize, ref_dynamic, ref_quantize,
)

NAN, INF = np.nan, np.inf
FLOAT_X = [np.float32, np.float16, ml_dtypes.bfloat16]


def _zps(qmin, qmax):
    """Zero points to try: both ends, zero, an odd and an even inner value."""
    return sorted({qmin, qmax, 0, min(qmax, 1), (qmin + qmax) // 2, (qmin + qmax) // 2 + 1})


def _q(x, scale, zp, otn, **kw):
    dt = OUT_TYPES[otn][0]
    return qsimd.quantize_linear(np.asarray(x), np.asarray(scale),
                                 None if zp is None else np.array(zp).astype(dt),
                                 output_dtype=otn, **kw)


def _clip(v, lo, hi):
    return min(max(v, lo), hi)


def _ints(a):
    return np.asarray(a).astype(np.int64).tolist()


# ------------------------------------------------------------ rule 3: NaN, inf, saturation
@pytest.mark.parametrize("otn", list(OUT_TYPES))
@pytest.mark.parametrize("xt", FLOAT_X)
def test_nan_inf_huge_saturate_by_value(isa, xt, otn):
    _, _, qmin, qmax = OUT_TYPES[otn]
    big = 60000.0 if xt == np.float16 else 1e30
    x = np.array([NAN, -NAN, INF, -INF, big, -big, 2.0**31 if xt != np.float16 else 65504,
                  3e9 if xt != np.float16 else -65504], xt)
    want_by_sign = [qmin, qmin, qmax, qmin, qmax, qmin, qmax,
                    qmax if xt != np.float16 else qmin]
    for zp in _zps(qmin, qmax):
        # float16 quotients overflow to inf (60000 / 0.25), the others are beyond every range
        for s in ((1.0, 1e-3) if xt != np.float16 else (0.25, 0.0625)):
            got = _q(x, np.array(s, xt), zp, otn)
            assert _ints(got) == want_by_sign, (zp, s)


@pytest.mark.parametrize("otn", list(OUT_TYPES))
def test_nan_scale_and_int32_extremes(isa, otn):
    _, _, qmin, qmax = OUT_TYPES[otn]
    x = np.array([2**31 - 1, -2**31, 1, 0, -1], np.int32)
    for zp in _zps(qmin, qmax):
        # int32 x divides in f64: (2^31 - 1) / 1e-3 is far beyond every range
        # 1 / f32(1e-3) = 999.99995 -> 1000
        assert _ints(_q(x, np.float32(1e-3), zp, otn)) == [
            qmax, qmin, _clip(1000 + zp, qmin, qmax), zp, _clip(zp - 1000, qmin, qmax)]
        for st in (np.float32, np.float16, BF16):
            assert _ints(_q(x, np.array(NAN, st), zp, otn)) == [qmin] * 5
        assert _ints(_q(x[:3], np.int32(1), zp, otn)) == [qmax, qmin, _clip(1 + zp, qmin, qmax)]


@pytest.mark.parametrize("otn", list(OUT_TYPES))
@pytest.mark.parametrize("xt", FLOAT_X + [np.int32])
@pytest.mark.parametrize("st", [np.float32, np.float16, BF16])
def test_zero_scale_saturates_by_sign(isa, xt, st, otn):
    _, _, qmin, qmax = OUT_TYPES[otn]
    x = np.array([3, -3, 0, 1], xt)
    for zp in _zps(qmin, qmax):
        # x / +0: +inf, -inf, NaN (0/0), +inf ; x / -0: -inf, +inf, NaN, -inf
        assert _ints(_q(x, np.array(0.0, st), zp, otn)) == [qmax, qmin, qmin, qmax]
        assert _ints(_q(x, np.array(-0.0, st), zp, otn)) == [qmin, qmax, qmin, qmin]
    assert _ints(_q(x, np.int32(0), None, otn)) == [qmax, qmin, qmin, qmax]


def test_nan_int8_with_negative_zero_point(isa):
    """The reference wraps INT32_MIN + (-3) to 127 here; the contract says qmin."""
    x = np.array([NAN, -INF, 0.0], np.float32)
    assert _ints(_q(x, np.float32(1), -3, "int8")) == [-128, -128, -3]
    assert _ints(_q(x, np.float32(0), -3, "int8")) == [-128, -128, -128]   # 0/0 -> NaN


# ------------------------------------------------------------ rules 1-2: rounding and zp
@pytest.mark.parametrize("xt", FLOAT_X)
def test_ties_to_even_then_zero_point(isa, xt):
    q = [0.5, 1.5, 2.5, 3.5, -0.5, -1.5, -2.5, -3.5, 0.0, -0.0, 2.4999, 2.5001]
    x = np.array(q, np.float32).astype(xt)
    even = [0, 2, 2, 4, 0, -2, -2, -4, 0, 0, 2, 3]
    if xt != np.float32:   # 2.4999 / 2.5001 are not representable in 16 bits: they are 2.5
        even[-2:] = [2, 2]
    for zp in (0, 1, 2, -1, -3, 5):   # odd and even zero points: added after rounding
        got = _q(x, np.float32(1), zp, "int8")
        assert _ints(got) == [e + zp for e in even], zp
    # zp = 1, q = 2.5 -> 2 + 1 = 3 (not rint(3.5) = 4); zp = -3, q = 0.5 -> -3
    assert _ints(_q(np.array([2.5], xt), np.float32(1), 1, "uint8")) == [3]
    assert _ints(_q(np.array([0.5], xt), np.float32(1), -3, "int8")) == [-3]


def test_int32_ties(isa):
    # int32 x with scale 2: exact ties in f64
    x = np.array([1, 3, 5, -1, -3, -5, 2**31 - 1], np.int32)
    assert _ints(_q(x, np.float32(2), 0, "int16")) == [0, 2, 2, 0, -2, -2, 32767]
    assert _ints(_q(x, np.int32(2), 7, "int16")) == [7, 9, 9, 7, 5, 5, 32767]


@pytest.mark.parametrize("otn", list(OUT_TYPES))
def test_range_edges(isa, otn):
    _, _, qmin, qmax = OUT_TYPES[otn]
    for zp in _zps(qmin, qmax):
        lo, hi = qmin - zp, qmax - zp
        q = np.array([hi - 0.5, hi + 0.5, hi + 0.49, lo + 0.5, lo - 0.5, lo - 0.51, hi, lo],
                     np.float64)
        want = [v + zp for v in (_rne(hi - 0.5), hi, hi, _rne(lo + 0.5), lo, lo, hi, lo)]
        want = [min(max(v, qmin), qmax) for v in want]
        assert _ints(_q(q.astype(np.float32), np.float32(1), zp, otn)) == want, zp


def _rne(v):
    """Round half to even for v = k + 0.5 or integers (hand rule, no library)."""
    f = int(np.floor(v))
    if v - f != 0.5:
        return int(round(v))
    return f if f % 2 == 0 else f + 1


def test_denormals_not_flushed(isa):
    tiny = np.float32(2.0**-149)
    x = np.array([3 * tiny, 2 * tiny, -3 * tiny, 5 * tiny], np.float32)
    # 3/2 = 1.5 -> 2 ; 2/2 -> 1 ; -1.5 -> -2 ; 2.5 -> 2
    assert _ints(_q(x, 2 * tiny, 0, "int8")) == [2, 1, -2, 2]
    h = np.float16(2.0**-24)   # smallest float16 subnormal
    xh = np.array([3, 5, 7], np.float16) * h
    assert _ints(_q(xh, np.array(2 * h), 0, "int8")) == [2, 2, 4]


# ------------------------------------------------------------ DequantizeLinear
def test_dequantize_int32_exact_subtraction(isa):
    x = np.array([16777217, 2**31 - 1, -2**31, 16777217, 0, 2**31 - 1], np.int32)
    zp = np.array(0, np.int32)
    got = qsimd.dequantize_linear(x, np.float32(1), zp)
    # zero point 0: each x rounded once to f32 (2^24 + 1 is a tie -> 2^24)
    assert got.tolist() == [16777216.0, 2147483648.0, -2147483648.0, 16777216.0, 0.0,
                            2147483648.0]
    # x - zp in int64, then one rounding: 16777217 - 1 = 16777216 exactly (the reference,
    # which subtracts after an f32 cast, gives 16777215)
    def dq(xv, zv, s=1.0, **kw):
        return qsimd.dequantize_linear(np.array([xv], np.int32), np.float32(s),
                                       np.array(zv, np.int32), **kw)[0]
    assert dq(16777217, 1) == np.float32(16777216)
    assert dq(16777217, -2) == np.float32(16777220)     # 16777219: tie -> even 16777220
    assert dq(2**31 - 1, -2**31) == np.float32(2.0**32)       # 2^32 - 1 rounds up
    assert dq(-2**31, 2**31 - 1) == np.float32(-(2.0**32))
    assert dq(2**31 - 1, 2**31 - 2) == np.float32(1)
    assert dq(-2**31, -2**31 + 1) == np.float32(-1)
    assert dq(2**31 - 1, 2**31 - 1, 3.0e38) == 0.0
    assert dq(2**31 - 1, 0, 2.0**-31) == np.float32(1)   # f32(2^31 - 1) = 2^31


def test_dequantize_uint32(isa):
    x = np.array([0, 1, 2**32 - 1, 2**31, 16777217, 7], np.uint32)
    got = qsimd.dequantize_linear(x, np.float32(1))
    assert got.dtype == np.float32
    assert got.tolist() == [0.0, 1.0, 4294967296.0, 2147483648.0, 16777216.0, 7.0]
    zp = np.array([2**32 - 1, 0, 2**32 - 2, 2**31 - 1, 1, 7], np.uint32)
    got = qsimd.dequantize_linear(x, np.full(6, 0.5, np.float32), zp, axis=0)
    assert got.tolist() == [-2147483648.0, 0.5, 0.5, 0.5, 8388608.0, 0.0]
    got = qsimd.dequantize_linear(x, np.float32(2), np.array(2**32 - 1, np.uint32),
                                  output_dtype="bfloat16")
    assert got.dtype == BF16
    # -(2^32 - 1) * 2 = -8589934590 -> f32 -8589934592 -> bf16 -2^33 (exact)
    assert float(got[0]) == -(2.0**33)


def test_dequantize_f16_output_rounds_the_f32_product(isa):
    """d = 7 - 2 = 5, s = 13428327 / 2^15 (a float32). d * s = 2049 + 3/2^15 exactly; the
    float32 product is 2049 (the error 3/2^15 is below half an f32 ulp, 2^-13); 2049 is a
    float16 tie between 2048 and 2050 -> 2048 (even). Rounding the exact product straight to
    float16, as the reference does for int32 x with a zero point, gives 2050."""
    x, zp = np.array([7], np.int32), np.array(2, np.int32)
    s = np.float32(13428327 / 2**15)
    assert float(s) * 2**15 == 13428327
    got = qsimd.dequantize_linear(x, s, zp, output_dtype="float16")
    assert got.dtype == np.float16 and got.tolist() == [2048.0]
    assert qsimd.dequantize_linear(x, s, zp).tolist() == [2049.0]
    assert ref_dequantize(x, np.array(s), zp, output_dtype=TensorProto.FLOAT16).tolist() \
        == [2050.0]   # the documented divergence (why test_reference keeps this out)


@pytest.mark.parametrize("xtn", list(SUBBYTE))
def test_dequantize_subbyte_high_bits_ignored(isa, xtn):
    """ml_dtypes reads only the low bits of each byte; so must qsimd."""
    dt, _, qmin, qmax = OUT_TYPES[xtn]
    bits = SUBBYTE[xtn]
    codes = np.arange(2**bits, dtype=np.uint8)
    noisy = (codes | np.uint8(0xFF << bits & 0xFF)).view(dt)
    got = qsimd.dequantize_linear(noisy, np.float32(1))
    want = [c - 2**bits if (qmin < 0 and c >= 2**(bits - 1)) else c for c in range(2**bits)]
    assert got.tolist() == [float(v) for v in want]
    assert got.tolist() == noisy.astype(np.float32).tolist()   # as ml_dtypes reads them


# ------------------------------------------------------------ DynamicQuantizeLinear
def _dyn(x):
    y, s, z = qsimd.dynamic_quantize_linear(np.array(x, np.float32))
    assert y.dtype == np.uint8 and s.dtype == np.float32 and z.dtype == np.uint8
    assert s.shape == () and z.shape == ()
    return y.tolist(), float(s), int(z)


def test_dynamic_contract(isa):
    # NaN ignored for the range; NaN itself -> 0. Range [0, 255] -> scale 1, zp 0
    assert _dyn([NAN, 0, 255, 51]) == ([0, 0, 255, 51], 1.0, 0)
    # range [-51, 204] -> scale 1, zp 51; NaN -> qmin 0 whatever the zero point
    assert _dyn([NAN, -51, 204, 0]) == ([0, 0, 255, 51], 1.0, 51)
    # all NaN: range [0, 0] -> scale 1/255 (as the reference's max == min case)
    y, s, z = _dyn([NAN, NAN])
    assert (y, z) == ([0, 0], 0) and np.float32(s).view(np.uint32) == 0x3B808081
    # all zero: scale = 1/255 = 0x3B808081, zp 0
    y, s, z = _dyn(np.zeros((2, 3)))
    assert (y, z) == ([[0] * 3] * 2, 0) and np.float32(s).view(np.uint32) == 0x3B808081
    # -inf: scale inf, zp 255 (the reference's min/max order); -inf/inf = NaN -> 0
    assert _dyn([-INF, 1.0, -1.0]) == ([0, 255, 255], INF, 255)
    # +inf: scale inf, zp 0; inf/inf = NaN -> 0, -1/inf = -0 -> 0
    assert _dyn([INF, -1.0]) == ([0, 0], INF, 0)
    # zero-point tie rounds to even: [-1.5, 253.5] -> scale 1, -m/scale = 1.5 -> 2
    assert _dyn([-1.5, 253.5, 0.5]) == ([0, 255, 2], 1.0, 2)


def test_dynamic_scale_underflow(isa):
    """Range [0, 2^-149]: (M - m) / 255 rounds to 0 in float32, so -m / scale = 0/0 = NaN.
    The contract's clamp(NaN, 0, 255) is read as the reference's Python min/max does it
    (min(255, NaN) = 255), so zp = 255. y: 2^-149 / 0 = inf -> 255; 0 / 0 = NaN -> 0."""
    tiny = 2.0**-149
    assert _dyn([tiny, 0.0]) == ([255, 0], 0.0, 255)
    want = ref_dynamic(np.array([tiny, 0.0], np.float32))
    assert float(want[1]) == 0.0 and int(want[2]) == 255 and int(want[0][0]) == 255


def test_dynamic_agrees_with_reference_on_finite_part(isa):
    """Where the reference is defined (no NaN), the rules above agree with it."""
    for x in ([-1.5, 253.5, 0.5], [0, 255, 51], [-51, 204, 0], np.zeros(4), [-INF, 1.0]):
        x = np.array(x, np.float32)
        got, want = qsimd.dynamic_quantize_linear(x), ref_dynamic(x)
        assert_same(got[1], want[1])
        assert_same(got[2], want[2])
        with np.errstate(invalid="ignore"):
            finite = np.isfinite(x / want[1])   # -inf / inf is NaN: undefined there
        assert_same(got[0][finite], want[0][finite])


# ------------------------------------------------------------ pack / unpack
PACKED_EXAMPLES = [
    (ml_dtypes.int4, [1, -2, 3, -4, 5], "e1c305"),
    (ml_dtypes.int2, [1, -2, -1, 0, 1], "3901"),
    (ml_dtypes.uint4, [15, 0, 1], "0f01"),
    (ml_dtypes.uint2, [3, 0, 1, 2, 3, 3], "930f"),   # 3 | 0<<2 | 1<<4 | 2<<6 = 0x93
    (ml_dtypes.int4, [], ""),
    (ml_dtypes.int2, [-2], "02"),
]


@pytest.mark.parametrize("dt,vals,hexbytes", PACKED_EXAMPLES)
def test_pack_known_bytes(dt, vals, hexbytes):
    a = np.array(vals, dt)
    packed = qsimd.pack(a)
    assert packed.dtype == np.uint8 and packed.ndim == 1
    assert packed.tobytes().hex() == hexbytes
    assert numpy_helper.from_array(a).raw_data.hex() == hexbytes   # ONNX agrees
    back = qsimd.unpack(packed, np.dtype(dt), len(vals))
    assert_same(back, a)


@pytest.mark.parametrize("name", list(SUBBYTE))
def test_pack_unpack_vs_numpy_helper(name):
    dt, code, qmin, qmax = OUT_TYPES[name]
    rng = np.random.default_rng(11)
    for shape in [(0,), (1,), (2, 3), (7,), (3, 1, 5), (4, 4), ()]:
        a = rng.integers(qmin, qmax + 1, shape).astype(dt)
        raw = numpy_helper.from_array(a).raw_data
        assert qsimd.pack(a).tobytes() == raw
        # unpack takes bytes, a uint8 array, any spelling of the dtype
        for spec in (dt, name, code):
            u = qsimd.unpack(raw, spec, shape)
            assert_same(u, a)
            assert_same(u, numpy_helper.to_array(numpy_helper.from_array(a)))
        assert_same(qsimd.unpack(np.frombuffer(raw, np.uint8), dt, shape), a)
        # non-contiguous input to pack
        if a.ndim == 2:
            assert qsimd.pack(a.T).tobytes() == numpy_helper.from_array(
                np.ascontiguousarray(a.T)).raw_data


def test_unpack_bytes_roundtrip_all_patterns():
    """Every byte value survives unpack -> pack (all code combinations)."""
    allbytes = np.arange(256, dtype=np.uint8)
    for name, bits in SUBBYTE.items():
        dt = OUT_TYPES[name][0]
        u = qsimd.unpack(allbytes, dt, 256 * 8 // bits)
        assert qsimd.pack(u).tobytes() == allbytes.tobytes()
        t = _tensor_from_raw(allbytes.tobytes(), OUT_TYPES[name][1], 256 * 8 // bits)
        assert_same(u, numpy_helper.to_array(t))


def _tensor_from_raw(raw, code, n):
    t = TensorProto()
    t.data_type = code
    t.dims.extend([n])
    t.raw_data = raw
    return t


# ------------------------------------------------------------ packed output
@pytest.mark.parametrize("name", list(SUBBYTE))
@pytest.mark.parametrize("gran", ["tensor", "axis", "block"])
def test_packed_output(isa, name, gran):
    """packed=True: ONNX raw bytes, also when runs start mid-byte (odd row lengths)."""
    dt, code, qmin, qmax = OUT_TYPES[name]
    rng = np.random.default_rng(5)
    for shape in [(3, 5), (5, 3), (1, 1), (7, 9), (2, 3, 5)]:
        x = (rng.normal(0, 4, shape) + 0.5).astype(np.float32)
        axis, block = 1, 0
        if gran == "tensor":
            scale = np.float32(0.7)
        elif gran == "axis":
            scale = rng.uniform(0.2, 2, shape[1]).astype(np.float32)
        else:
            block = 2
            sshape = list(shape)
            sshape[1] = -(-shape[1] // 2)
            scale = rng.uniform(0.2, 2, sshape).astype(np.float32)
        zp = rng.integers(qmin, qmax + 1, np.shape(scale)).astype(dt)
        want = ref_quantize(x, np.asarray(scale), zp, axis=axis, block_size=block)
        raw = numpy_helper.from_array(want).raw_data
        got = qsimd.quantize_linear(x, scale, zp, axis=axis, block_size=block, packed=True)
        assert isinstance(got, qsimd.PackedTensor)
        assert got.dtype == np.dtype(dt) and got.shape == x.shape
        assert got.data.dtype == np.uint8 and got.data.shape == (len(raw),)
        assert got.tobytes() == raw
        assert got.tobytes() == qsimd.pack(want).tobytes()
        unpacked = qsimd.quantize_linear(x, scale, zp, axis=axis, block_size=block)
        assert qsimd.pack(unpacked).tobytes() == raw
        # into a caller's buffer whose padding bits start dirty
        out = np.full(len(raw), 0xFF, np.uint8)
        assert qsimd.quantize_linear(x, scale, zp, axis=axis, block_size=block, packed=True,
                                     out=out).data is out
        assert out.tobytes() == raw


# ------------------------------------------------------------ layout independence
def _layouts(a):
    """The same values in other memory layouts."""
    yield "contiguous", a
    if a.ndim:   # (np.asfortranarray makes a 0-d array 1-d)
        yield "fortran", np.asfortranarray(a)
        big = np.zeros(a.shape[:-1] + (a.shape[-1] * 2,), a.dtype)
        big[..., ::2] = a
        yield "strided", big[..., ::2]
        rev = np.ascontiguousarray(a[..., ::-1])
        yield "reversed", rev[..., ::-1]
    buf = np.zeros(a.nbytes + 1, np.uint8)
    mis = buf[1:].view(a.dtype).reshape(a.shape)
    mis[...] = a
    assert a.dtype.itemsize == 1 or a.size == 0 or not mis.flags.aligned
    yield "misaligned", mis
    if a.dtype.itemsize > 1 and a.dtype.byteorder in "=<>" and a.dtype.kind in "fiu" \
            and a.dtype.type not in (BF16.type,):
        yield "byteswapped", a.astype(a.dtype.newbyteorder("S"))


LAYOUT_SHAPES = [(4, 6), (3, 1, 5), (7,), (), (0, 3)]


@pytest.mark.parametrize("xt,otn", [(np.float32, "int8"), (np.float16, "uint4"),
                                    (ml_dtypes.bfloat16, "int16"), (np.int32, "int2")],
                         ids=["f32-int8", "f16-uint4", "bf16-int16", "i32-int2"])
@pytest.mark.parametrize("shape", LAYOUT_SHAPES, ids=str)
def test_layouts_quantize(isa, shape, xt, otn):
    dt, _, qmin, qmax = OUT_TYPES[otn]
    rng = np.random.default_rng(3)
    x = (rng.normal(0, 40, shape)).astype(xt)
    per_axis = len(shape) >= 2
    scale = rng.uniform(0.5, 2, shape[1]).astype(np.float32) if per_axis else np.float32(0.5)
    zp = (rng.integers(qmin, qmax + 1, np.shape(scale))).astype(dt)
    want = ref_quantize(x, np.asarray(scale), zp, axis=1)
    for name, xl in _layouts(x):
        assert_same(qsimd.quantize_linear(xl, scale, zp, axis=1), want, f"x {name}")
        if name == "byteswapped" and x.size:
            assert not xl.dtype.isnative
    if per_axis:
        for name, sl in _layouts(scale):
            assert_same(qsimd.quantize_linear(x, sl, zp, axis=1), want, f"scale {name}")
        for name, zl in _layouts(zp):
            assert_same(qsimd.quantize_linear(x, scale, zl, axis=1), want, f"zp {name}")


@pytest.mark.parametrize("xtn", ["int16", "int4", "uint2", "uint8"])
@pytest.mark.parametrize("shape", LAYOUT_SHAPES, ids=str)
def test_layouts_dequantize(isa, shape, xtn):
    dt, _, qmin, qmax = OUT_TYPES[xtn]
    rng = np.random.default_rng(4)
    x = rng.integers(qmin, qmax + 1, shape).astype(dt)
    scale = np.float32(0.25)
    zp = np.array(qmax // 2, dt)
    want = ref_dequantize(x, np.asarray(scale), zp)
    for name, xl in _layouts(x):
        assert_same(qsimd.dequantize_linear(xl, scale, zp), want, f"x {name}")


def test_layouts_dynamic(isa):
    x = np.random.default_rng(9).normal(0, 3, (5, 4)).astype(np.float32)
    want = ref_dynamic(x)
    for name, xl in _layouts(x):
        got = qsimd.dynamic_quantize_linear(xl)
        for g, w in zip(got, want):
            assert_same(g, w, name)


def test_dynamic_out(isa):
    """out= receives y (and is returned as y): contiguous, strided, Fortran-order, or
    overlapping x (the general path then goes through a temporary)."""
    x = np.random.default_rng(10).normal(0, 3, (6, 40)).astype(np.float32)
    want = ref_dynamic(x)
    outs = {"contiguous": np.empty((6, 40), np.uint8),
            "strided": np.empty((6, 80), np.uint8)[:, ::2],
            "fortran": np.empty((6, 40), np.uint8, order="F")}
    for name, out in outs.items():
        out[...] = 7
        got = qsimd.dynamic_quantize_linear(x, out=out)
        assert got[0] is out, name
        for g, w in zip(got, want):
            assert_same(g, w, name)
    xc = x.copy()
    alias = xc.view(np.uint8)[:, :40]   # the first bytes of each row of x itself
    got = qsimd.dynamic_quantize_linear(xc, out=alias)
    assert got[0] is alias
    assert_same(alias, want[0], "overlapping x")
    with pytest.raises(ValueError, match="^out must have shape"):
        qsimd.dynamic_quantize_linear(x, out=np.empty((6, 41), np.uint8))
    with pytest.raises(ValueError, match="^out must have dtype"):
        qsimd.dynamic_quantize_linear(x, out=np.empty((6, 40), np.int8))
    with pytest.raises(TypeError, match="^out must be"):
        qsimd.dynamic_quantize_linear(x, out=[0] * 240)


def test_python_data_and_0d(isa):
    """Python lists / floats become float32, Python ints become int32 (exact f64 quotient)."""
    got = qsimd.quantize_linear([0.5, 1.5, -2.5], 1.0)
    assert_same(got, np.array([0, 2, 0], np.uint8))
    assert qsimd.quantize_linear(16777217, 2.0**25, output_dtype="int8").tolist() == 1
    y = qsimd.quantize_linear(np.float32(3.5), np.float32(1))
    assert y.shape == () and y.dtype == np.uint8 and int(y) == 4
    d = qsimd.dequantize_linear(np.uint8(7), np.float32(0.5), np.uint8(3))
    assert d.shape == () and float(d) == 2.0


# ------------------------------------------------------------ out=
def test_out_exact_and_strided(isa):
    x = np.array([[0.4, 1.5, 2.5], [-1.5, 300, -300]], np.float32)
    want = np.array([[0, 2, 2], [-2, 127, -128]], np.int8)
    out = np.empty((2, 3), np.int8)
    assert qsimd.quantize_linear(x, np.float32(1), output_dtype="int8", out=out) is out
    assert_same(out, want)
    holder = np.zeros((2, 6), np.int8)
    out = holder[:, ::2]
    assert qsimd.quantize_linear(x, np.float32(1), output_dtype="int8", out=out) is out
    assert_same(out, want)
    assert (holder[:, 1::2] == 0).all()   # untouched between the strides
    fo = np.empty((2, 3), np.int8, order="F")
    assert qsimd.quantize_linear(x, np.float32(1), output_dtype="int8", out=fo) is fo
    assert_same(fo, want)
    xq = np.array([[1, 2], [3, 4]], np.uint8)
    dout = np.empty((2, 2), np.float32)[::-1]
    assert qsimd.dequantize_linear(xq, np.float32(0.5), out=dout) is dout
    assert dout.tolist() == [[0.5, 1.0], [1.5, 2.0]]


def test_out_overlapping_input(isa):
    # DequantizeLinear in place: int32 codes and float32 results share memory
    buf = np.array([1, 2, 3, -4, 2**24 + 1], np.int32)
    out = buf.view(np.float32)
    got = qsimd.dequantize_linear(buf, np.float32(2), np.array(1, np.int32), out=out)
    assert got is out
    assert out.tolist() == [0.0, 2.0, 4.0, -10.0, 33554432.0]
    # QuantizeLinear into the first bytes of its own input
    raw = np.zeros(16, np.uint8)
    x = raw.view(np.float32)
    x[:] = [1.5, 2.5, 255.0, -1.0]
    out = raw[:4]
    assert qsimd.quantize_linear(x, np.float32(1), out=out) is out
    assert out.tolist() == [2, 2, 255, 0]
    # a scale that overlaps the output
    s = np.ones(4, np.float32)
    x = np.array([[2.5, 3.5, 4.5, 5.5]], np.float32)
    out = s.view(np.uint8)[:4].reshape(1, 4)
    assert qsimd.quantize_linear(x, s, axis=1, out=out) is out
    assert out.tolist() == [[2, 4, 4, 6]]


# ------------------------------------------------------------ special values at every position
@pytest.mark.parametrize("xt", FLOAT_X)
def test_special_values_at_every_position(isa, xt):
    """NaN / +-inf / -0 in every lane of every length up to 40 (SIMD heads, bodies, tails):
    NaN and -inf give qmin, +inf qmax, the rest as the reference."""
    rng = np.random.default_rng(31)
    for n in range(1, 21 if QUICK else 41):
        base = (rng.normal(0, 50, n)).astype(xt)
        s = np.array(0.75, np.float32)
        want = ref_quantize(base, s, np.array(-3, np.int8))
        for pos in range(n):
            for special, code in ((NAN, -128), (INF, 127), (-INF, -128), (-0.0, -3)):
                x = base.copy()
                x[pos] = special
                got = _q(x, s, -3, "int8")
                expected = want.copy()
                expected[pos] = code
                assert_same(got, expected, f"n={n} pos={pos} {special}")


def test_dynamic_nan_at_every_position(isa):
    """NaN is ignored for the range wherever it sits, and quantizes to 0."""
    rng = np.random.default_rng(32)
    for n in range(2, 21 if QUICK else 41):
        base = rng.normal(1, 3, n).astype(np.float32)
        for pos in range(n):
            x = base.copy()
            x[pos] = NAN
            keep = np.delete(x, pos)
            _, ws, wz = ref_dynamic(keep)   # the range of the finite elements
            y, s, z = qsimd.dynamic_quantize_linear(x)
            assert_same(s, ws, f"scale n={n} pos={pos}")
            assert_same(z, wz, f"zp n={n} pos={pos}")
            want_y = ref_quantize(x[np.arange(n) != pos], ws.reshape(()), wz)
            assert y[pos] == 0
            assert_same(np.delete(y, pos), want_y, f"y n={n} pos={pos}")
