"""qsimd.quark: the API decisions where qsimd and AMD Quark's ops differ (documented in
qsimd/quark.py), MXQuantizeDequantize / BFPQuantizeDequantize against hand-computed values,
and, when Quark's op library can be built (tests/quark_ops.py), against the real ops."""
import ml_dtypes
import numpy as np
import pytest

import qsimd
from qsimd import quark

BF16 = np.dtype(ml_dtypes.bfloat16)


# ------------------------------------------------------------------ Extended Q/DQ decisions

@pytest.mark.parametrize("otn", ["float16", "bfloat16"])
def test_extended_negative_zero_without_zero_point(isa, otn):
    # x / scale + 0 with the zero point absent, as with an explicit 0: -0 gives +0
    x = np.array([-0.0, 0.0, -0.0, 1.0], np.float32)
    dt = np.float16 if otn == "float16" else BF16
    got = quark.extended_quantize_linear(x, np.float32(0.5), output_dtype=otn)
    assert got.dtype == dt and got.view(np.uint16).tolist()[:3] == [0, 0, 0]
    got = quark.extended_quantize_linear(x, np.float32(0.5), np.zeros((), dt))
    assert got.view(np.uint16).tolist()[:3] == [0, 0, 0]
    # per-axis and blocked parameters take the same path
    x2 = np.full((2, 40), -0.0, np.float32)
    got = quark.extended_quantize_linear(x2, np.ones(2, np.float32), axis=0, output_dtype=otn)
    assert not got.view(np.uint16).any()


def test_extended_default_axis_is_one():
    # axis defaults to 1 (ONNX, and the default Quark declares); Quark's kernel takes 0 for a
    # node without the attribute, so such nodes are translated with axis=0 explicitly
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    s4 = np.array([1, 2, 4, 8], np.float32)
    zp4 = np.zeros(4, np.int32)
    got = quark.extended_quantize_linear(x, s4, zp4)
    assert got.tolist() == np.rint(x / s4).astype(np.int32).tolist()
    s3 = np.array([1, 2, 4], np.float32)
    got = quark.extended_quantize_linear(x, s3, np.zeros(3, np.int32), axis=0)
    assert got.tolist() == np.rint(x / s3[:, None]).astype(np.int32).tolist()
    with pytest.raises(ValueError):
        quark.extended_quantize_linear(x, s3, np.zeros(3, np.int32))   # axis 1 has 4
    dq = quark.extended_dequantize_linear(np.ones((3, 4), np.int32), s4)
    assert dq.tolist() == [s4.tolist()] * 3


@pytest.mark.parametrize("xdt", [np.float16, BF16, np.int32])
def test_extended_accepts_qsimd_inputs(xdt):
    # a superset of Quark's float32-only schema, with qsimd.quantize_linear's numerics
    x = np.array([-3, 0, 1, 2, 7, 100], np.float32).astype(xdt)
    for zp in (np.int32(3), np.uint16(3), np.float16(0.5)):
        got = quark.extended_quantize_linear(x, np.float32(2), zp)
        want = qsimd.quantize_linear(x, np.float32(2), zp)
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes()


def test_extended_refuses_other_types():
    # the fast check (a dict of dtypes) and the general one must both refuse non-Quark types
    x = np.array([1.0, -2.0, 3.0], np.float32)
    for zp in (np.zeros((), ml_dtypes.int4), ml_dtypes.float8_e4m3fn(0)):
        with pytest.raises(TypeError, match="Quark's types"):
            quark.extended_quantize_linear(x, np.float32(1), zp)
    for q in (np.zeros(3, ml_dtypes.int4), np.zeros(3, ml_dtypes.float8_e4m3fn),
              np.zeros(3, np.int64)):
        with pytest.raises(TypeError):
            quark.extended_dequantize_linear(q, np.float32(1))
    # byte-swapped arrays of Quark's types take the general path and are accepted
    q = np.array([1, -2, 3], ">i4")
    assert quark.extended_dequantize_linear(q, np.float32(0.5)).tolist() == [0.5, -1.0, 1.5]


def test_extended_dequantize_scale_type():
    # the result has the scale's type, as ONNX DequantizeLinear (Quark: always float32)
    q = np.array([1, -2, 3], np.int32)
    assert quark.extended_dequantize_linear(q, np.float32(0.5)).dtype == np.float32
    got = quark.extended_dequantize_linear(q, np.float16(0.5))
    assert got.dtype == np.float16 and got.tolist() == [0.5, -1.0, 1.5]
    got = quark.extended_dequantize_linear(q.astype(np.float16), np.float32(0.5),
                                           np.float16(1))
    assert got.dtype == np.float32 and got.tolist() == [0.0, -1.5, 1.0]


# ------------------------------------------------------------------ MX / BFP data

MX_TYPES = ["fp8_e5m2", "fp8_e4m3", "fp6_e3m2", "fp6_e2m3", "fp4_e2m1", "int8"]


def hostile(rng, shape, special_rate):
    """float32 data that reaches every path: blocks of very different magnitudes, exact
    ties of every rounding step (small integers times powers of two), +-0, subnormals,
    float32's extremes, random bit patterns, and NaN / inf at `special_rate`."""
    n = int(np.prod(shape))
    kind = rng.integers(0, 7, n)
    normal = (rng.standard_normal(n) * 2.0 ** rng.integers(-12, 12, n)).astype(np.float32)
    ties = (rng.integers(-700, 700, n) * 2.0 ** rng.integers(-14, 4, n)).astype(np.float32)
    # integers of 2..24 bits with one quantum per row (the rows' scaling keeps it): every
    # rounding step of every width meets exact halves
    rows = n // shape[-1] if len(shape) > 1 else 1
    width = np.repeat(2 ** rng.integers(2, 25, rows), n // rows)
    ints = (rng.integers(-2**24, 2**24, n) % width * rng.choice([-1, 1], n)).astype(np.float32)
    kind = np.where(rng.random(n) < 0.3, 7, kind)
    bits = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    anyf = np.where(((bits >> 23) & 0xFF) == 0xFF, bits & 0x807FFFFF, bits).view(np.float32)
    sub = (bits & 0x807FFFFF).view(np.float32)
    zeros = np.where(rng.random(n) < 0.5, np.float32(0), np.float32(-0.0))
    big = (rng.choice([-1, 1], n) * np.float32(3.4028235e38)
           * rng.choice([1.0, 0.75, 0.5], n)).astype(np.float32)
    x = np.select([kind == 0, kind == 1, kind == 2, kind == 3, kind == 4, kind == 5],
                  [normal, ties, anyf, sub, zeros, big], normal).astype(np.float32)
    x = np.where(kind == 7, ints, x).astype(np.float32)
    # whole rows scaled by powers of two: blocks of every exponent range
    x = x.reshape(-1, shape[-1]) if len(shape) > 1 else x.reshape(1, -1)
    rows = np.ldexp(np.float32(1), rng.integers(-130, 60, x.shape[0])).astype(np.float32)
    with np.errstate(over="ignore"):
        x = (x * rows[:, None]).astype(np.float32)
    x = x.reshape(shape)
    if special_rate:
        flat = x.reshape(-1)
        hit = rng.random(n) < special_rate
        flat[hit] = rng.choice(np.array([np.nan, np.inf, -np.inf, -np.nan], np.float32),
                               int(hit.sum()))
        # a NaN with a payload, passed through unchanged
        if n > 3:
            flat[rng.integers(0, n)] = np.uint32(0xFFC12345).view(np.float32)
    return x


def bits_equal(a, b):
    a = np.ascontiguousarray(a, np.float32).view(np.uint32)
    b = np.ascontiguousarray(b, np.float32).view(np.uint32)
    return a.shape == b.shape and np.array_equal(a, b)


def first_diff(x, got, want):
    g = got.reshape(-1).view(np.uint32)
    w = want.reshape(-1).view(np.uint32)
    i = int(np.flatnonzero(g != w)[0])
    return (f"{int((g != w).sum())} of {g.size} differ; first at {i}: x={x.reshape(-1)[i]!r} "
            f"got {got.reshape(-1)[i]!r} ({g[i]:#010x}) want {want.reshape(-1)[i]!r} "
            f"({w[i]:#010x})")


# ------------------------------------------------------------------ against Quark's ops

import zlib  # noqa: E402

import quark_ops  # noqa: E402

# (shape, axis, block_size): last and middle axes, 1-D, short last blocks, a block larger
# than the axis, blocks of one
LAYOUTS = [((70,), 0, 32), ((3, 70), 1, 32), ((3, 70), -1, 8), ((37, 5), 0, 32),
           ((2, 9, 37), 1, 5), ((2, 9, 37), 2, 64), ((4, 33, 3), 1, 32), ((6, 50), 1, 1),
           ((5, 96), 1, 32), ((2, 3, 4, 20), 3, 16),
           ((3, 300), 1, 32),   # rows of 4-block groups (the AVX-512 path) and a short tail
           # the vector kernels' layouts: channel blocks over rows of 49 and 15 columns (whole
           # vectors and a partial one), rows shorter than a block taken in groups, rows of
           # blocks of 8 with a short last block, blocks along the first of two axes
           ((2, 40, 7, 7), 1, 32), ((1, 36, 3, 5), 1, 8), ((40, 7), 1, 32), ((20, 14), 1, 8),
           ((24, 16), 0, 16)]


@pytest.fixture(scope="module")
def quark_lib():
    return quark_ops.require_quark()


@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("etype", MX_TYPES)
def test_mx_matches_quark(quark_lib, isa, etype, mode):
    rng = np.random.default_rng(zlib.crc32(f"mx{etype}{mode}".encode()))
    for i, (shape, axis, bs) in enumerate(LAYOUTS):
        x = hostile(rng, shape, [0, 0.01, 0.2][i % 3])
        attrs = dict(element_dtype=etype, axis=axis, block_size=bs, rounding_mode=mode)
        want = quark_ops.mx(x, **attrs)
        got = quark.mx_quantize_dequantize(x, **attrs)
        assert bits_equal(got, want), f"{attrs} {shape}: {first_diff(x, got, want)}"


@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("bit_width", [10, 13, 16, 24, 32])
def test_to_bfp_matches_quark(quark_lib, isa, bit_width, mode):
    rng = np.random.default_rng(zlib.crc32(f"bfp{bit_width}{mode}".encode()))
    for i, (shape, axis, bs) in enumerate(LAYOUTS):
        tb = i % 2
        # Quark's bfloat16 trick mangles NaNs (kept here): no NaN with it
        x = hostile(rng, shape, [0, 0.01, 0.2][i % 3])
        if tb:
            x[np.isnan(x)] = np.float32(1.5)
        attrs = dict(bfp_method="to_bfp", axis=axis, bit_width=bit_width, block_size=bs,
                     rounding_mode=mode, convert_to_bfloat_before_bfp=tb)
        want = quark_ops.bfp(x, **attrs)
        got = quark.bfp_quantize_dequantize(x, **attrs)
        assert bits_equal(got, want), f"{attrs} {shape}: {first_diff(x, got, want)}"


@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("bit_width", [10, 13, 16, 24, 32])
def test_to_bfp_prime_matches_quark(quark_lib, isa, bit_width, mode):
    rng = np.random.default_rng(zlib.crc32(f"prime{bit_width}{mode}".encode()))
    subs = [(8, 2, 1), (16, 4, 2), (6, 3, 0), (4, 1, 3), (12, 12, 8), (8, 2, 1)]
    for i, (shape, axis, _) in enumerate(LAYOUTS):
        bs, sub, shift = subs[i % len(subs)]
        tb = (i // 2) % 2
        x = hostile(rng, shape, [0, 0.002, 0.05][i % 3])
        if tb:
            x[np.isnan(x)] = np.float32(-2.5)
        attrs = dict(bfp_method="to_bfp_prime", axis=axis, bit_width=bit_width, block_size=bs,
                     rounding_mode=mode, sub_block_size=sub, sub_block_shift_bits=shift,
                     convert_to_bfloat_before_bfp=tb)
        want = quark_ops.bfp(x, **attrs)
        got = quark.bfp_quantize_dequantize(x, **attrs)
        assert bits_equal(got, want), f"{attrs} {shape}: {first_diff(x, got, want)}"


def test_quark_defaults_and_float16(quark_lib):
    # the attribute defaults are Quark's (no attributes on the node), and float16 x
    rng = np.random.default_rng(5)
    x = hostile(rng, (4, 72), 0.01)
    assert bits_equal(quark.mx_quantize_dequantize(x), quark_ops.mx(x))
    assert bits_equal(quark.bfp_quantize_dequantize(x), quark_ops.bfp(x))
    h = np.clip(rng.standard_normal((3, 40)) * 100, -6e4, 6e4).astype(np.float16)
    got = quark.mx_quantize_dequantize(h, "fp4_e2m1")
    assert got.dtype == np.float16
    want = quark.mx_quantize_dequantize(h.astype(np.float32), "fp4_e2m1").astype(np.float16)
    assert got.tobytes() == want.tobytes()


def test_mx_bfp_zero_blocks_and_in_place(quark_lib, isa):
    # activations after a ReLU: whole blocks of zeros (of both signs) beside ordinary ones,
    # along the channel axis and the last axis; the result written over x (out=x) equals
    # the separate result
    rng = np.random.default_rng(11)
    x = np.maximum(rng.standard_normal((2, 64, 5, 9)), 0).astype(np.float32)
    x[:, :32, 1] = 0.0
    x[:, 32:, 3] = -0.0
    x[1, :, :, 2:5] = 0.0
    for axis in (1, 3):
        for attrs in (dict(element_dtype="int8", rounding_mode=2), dict(element_dtype="fp4_e2m1")):
            want = quark_ops.mx(x, axis=axis, **attrs)
            assert bits_equal(quark.mx_quantize_dequantize(x, axis=axis, **attrs), want)
            y = x.copy()
            assert quark.mx_quantize_dequantize(y, axis=axis, out=y, **attrs) is y
            assert bits_equal(y, want), (axis, attrs)
        for method in ("to_bfp", "to_bfp_prime"):
            want = quark_ops.bfp(x, bfp_method=method, axis=axis)
            y = x.copy()
            quark.bfp_quantize_dequantize(y, method, axis=axis, out=y)
            assert bits_equal(y, want), (axis, method)


# ------------------------------------------------------------------ by hand (no Quark)

def _u(a):
    return np.asarray(a, np.float32).view(np.uint32).tolist()


def test_mx_by_hand(isa):
    # block max 3.0 (exponent 1): fp8_e4m3 (emax 8) scale 2^-7; 0.3 * 128 = 38.4 -> 40
    # (spacing 4 in [32, 64)); 1.0 -> 128 exactly; 500 * 2^-7 saturates at 448
    x = np.array([[3.0, 1.0, 0.3, -0.0, 1e-30, np.nan, -np.inf, 3.9]], np.float32)
    got = quark.mx_quantize_dequantize(x, "fp8_e4m3", block_size=8)
    want = [3.0, 1.0, 40 / 128, 0.0, 0.0, np.nan, -np.inf, 448 / 128]
    assert _u(got[0, :5]) == _u(want[:5]) and np.isnan(got[0, 5])
    assert got[0, 6] == -np.inf and got[0, 7] == 3.5
    # fp4_e2m1 (emax 2): max 1.5 -> scale 2^-2; 0.3 * 4 = 1.2 -> 1.0; 0.65 * 4 = 2.6 -> 3
    # (spacing 1 in [2, 4)); -0.05 * 4 = -0.2 -> +0; 0.625 * 4 = 2.5 -> 2 (half to even)
    x = np.array([1.5, 0.3, 0.65, -0.05, 0.625, 0.75 * 4], np.float32)
    got = quark.mx_quantize_dequantize(x[:5], "fp4_e2m1", axis=0, block_size=5)
    assert _u(got) == _u([1.5, 0.25, 0.75, 0.0, 0.5])
    # an all-zero block keeps its zeros: +0 everywhere
    assert _u(quark.mx_quantize_dequantize(np.float32([-0.0, 0.0]), "fp8_e5m2", axis=0)) \
        == [0, 0]


def test_mx_int8_rounding_by_hand(isa):
    # max 1.0 -> scale 1; elements to multiples of 2^-6: +-2^-7 is a tie
    x = np.array([1.0, 2.0**-7, -(2.0**-7), 3 * 2.0**-7, -0.0, -(2.0**-9), 0.01], np.float32)
    q = 2.0**-6
    want = {0: [1.0, q, -q, 2 * q, -0.0, -0.0, q],        # half away from zero, std::round
            1: [1.0, q, -0.0, 2 * q, -0.0, -0.0, q],       # half up: ceil(-0.5) = -0
            2: [1.0, 0.0, 0.0, 2 * q, -0.0, 0.0, q]}       # half even via floor: +0
    for mode, w in want.items():
        got = quark.mx_quantize_dequantize(x, "int8", axis=0, rounding_mode=mode)
        assert _u(got) == _u(w), mode
    # 1.999 * 64 rounds to 128 and is clamped to 127; -128 is in range
    got = quark.mx_quantize_dequantize(np.float32([1.999, -1.999]), "int8", axis=0)
    assert got.tolist() == [127 / 64, -2.0]


def test_bfp_by_hand(isa):
    # bit_width 16: m = 7; block max 1.x -> scale 2^-6, max 2 - 2^-6
    x = np.array([1.0, 0.01, 1.999, -1.999, -0.0, np.inf, 2.0**-7, -(2.0**-7)], np.float32)
    got = quark.bfp_quantize_dequantize(x, "to_bfp", axis=0, block_size=8)
    want = [1.0, 2.0**-6, 2 - 2.0**-6, -(2 - 2.0**-6), -0.0, np.inf, 2.0**-6, -(2.0**-6)]
    assert _u(got) == _u(want)
    got = quark.bfp_quantize_dequantize(x, "to_bfp", axis=0, block_size=8, rounding_mode=1)
    assert _u(got[6:]) == _u([2.0**-6, -0.0])
    # to_bfp_prime, sub-blocks of 2 with shifts of at most 1: [1, 1] shift 0, [0.3, 0.25]
    # shift 1 (exponent 2 below): 0.3 at 2^-7 steps = 38.4 -> 38
    x = np.array([1.0, 1.0, 0.3, 0.25, 2.0**-130, 0.01, -0.0, 1.5], np.float32)
    got = quark.bfp_quantize_dequantize(x, "to_bfp_prime", axis=0, block_size=8)
    # [2^-130, 0.01]: shift capped at 1, so 0.01 at 2^-7 steps (1.28 -> 1); the subnormal
    # flushes to zero; -0 keeps its sign
    assert _u(got) == _u([1.0, 1.0, 38 / 128, 0.25, 0.0, 1 / 128, -0.0, 1.5])
    # NaN or inf anywhere in a to_bfp_prime block: the whole block is 0x7FFFFFFF
    x[3] = np.inf
    got = quark.bfp_quantize_dequantize(x, "to_bfp_prime", axis=0, block_size=4)
    assert got.view(np.uint32).tolist()[:4] == [0x7FFFFFFF] * 4
    assert _u(got[4:]) == _u([0.0, 1 / 128, -0.0, 1.5])


def test_bfp_bfloat_first_keeps_nan_and_input(isa):
    x = np.array([1.0 + 2.0**-9, np.uint32(0x7F800001).view(np.float32), 3.0, 1.0],
                 np.float32)
    keep = x.copy()
    got = quark.bfp_quantize_dequantize(x, axis=0, block_size=4, bit_width=32,
                                        convert_to_bfloat_before_bfp=1)
    assert x.view(np.uint32).tolist() == keep.view(np.uint32).tolist()   # not written
    assert got[0] == 1.0 and np.isnan(got[1]) and got[2:].tolist() == [3.0, 1.0]


def test_mx_bfp_one_element_and_empty():
    # a one-element tensor is quantized like any block (Quark returns it unchanged)
    assert quark.mx_quantize_dequantize(np.float32([[0.3]]), "fp4_e2m1").tolist() == [[0.25]]
    assert quark.bfp_quantize_dequantize(np.float32([[1.0 + 2.0**-10]])).tolist() == [[1.0]]
    assert quark.mx_quantize_dequantize(np.zeros((0, 3), np.float32)).shape == (0, 3)


@pytest.mark.parametrize("etype", MX_TYPES)
def test_mx_bfp_isas_agree(etype):
    # every instruction set's kernel gives the scalar kernel's bits
    rng = np.random.default_rng(zlib.crc32(etype.encode()))
    x = hostile(rng, (7, 300), 0.01)
    calls = [lambda a, m: quark.mx_quantize_dequantize(a, etype, rounding_mode=m),
             lambda a, m: quark.bfp_quantize_dequantize(a, rounding_mode=m, bit_width=13),
             lambda a, m: quark.bfp_quantize_dequantize(a, "to_bfp_prime", rounding_mode=m)]
    previous = qsimd.get_isa()
    try:
        for mode in range(3):
            for axis in (1, 0):
                for f in calls:
                    xs = np.ascontiguousarray(np.moveaxis(x, 1, 0)) if axis == 0 else x
                    qsimd.set_isa("scalar")
                    want = f(xs, mode)
                    for name in qsimd.available_isas()[1:]:
                        qsimd.set_isa(name)
                        assert bits_equal(f(xs, mode), want), (name, mode, axis)
    finally:
        qsimd.set_isa(None if previous == qsimd.available_isas()[-1] else previous)


def test_mx_bfp_errors():
    x = np.ones((2, 8), np.float32)
    with pytest.raises(ValueError, match="element_dtype"):
        quark.mx_quantize_dequantize(x, "fp8")
    with pytest.raises(ValueError, match="rounding_mode"):
        quark.mx_quantize_dequantize(x, rounding_mode=3)
    with pytest.raises(ValueError, match="axis"):
        quark.mx_quantize_dequantize(np.ones(8, np.float32))   # axis 1 on 1-D x
    with pytest.raises(ValueError, match="block_size"):
        quark.mx_quantize_dequantize(x, block_size=0)
    with pytest.raises(TypeError, match="x must be float32 or float16"):
        quark.mx_quantize_dequantize(x.astype(np.int32))
    with pytest.raises(ValueError, match="at least one dimension"):
        quark.mx_quantize_dequantize(np.float32(1))
    with pytest.raises(ValueError, match="bfp_method"):
        quark.bfp_quantize_dequantize(x, "to_bfp_bad")
    with pytest.raises(ValueError, match="bit_width"):
        quark.bfp_quantize_dequantize(x, bit_width=9)
    with pytest.raises(ValueError, match="divide"):
        quark.bfp_quantize_dequantize(x, "to_bfp_prime", block_size=8, sub_block_size=3)
    with pytest.raises(ValueError, match="sub_block_shift_bits"):
        quark.bfp_quantize_dequantize(x, "to_bfp_prime", sub_block_shift_bits=31)
    with pytest.raises(TypeError, match="block_size"):
        quark.bfp_quantize_dequantize(x, block_size=8.0)
    # to_bfp ignores the sub-block arguments, as Quark does
    quark.bfp_quantize_dequantize(x, block_size=8, sub_block_size=3)


@pytest.mark.parametrize("name", ["\ud800", "fp8_e4m3\udfff", "a\0b"])
def test_mx_bfp_unencodable_names(name):
    """Names without UTF-8 (lone surrogates) or holding NUL: a ValueError naming the argument
    and showing the value, from the fast path as from the general one."""
    x = np.ones((2, 8), np.float32)
    for args in ((x,), (x.astype(np.float16),)):   # fast path, general path
        with pytest.raises(ValueError, match=r"^element_dtype must be one of .*, got '"):
            quark.mx_quantize_dequantize(*args, name)
        with pytest.raises(ValueError, match=r"^bfp_method must be .*, got '"):
            quark.bfp_quantize_dequantize(*args, name)
    with pytest.raises(ValueError, match=r"^element_dtype must be one of .*, got '"):
        quark.quantize_mx(x, name)


@pytest.mark.parametrize("shape,axis,bs", [((600, 1000), 1, 32), ((1000, 3, 199), 2, 16),
                                           ((7, 5000, 17), 1, 32), ((3000, 200), 0, 7)])
def test_mx_bfp_threads(isa, shape, axis, bs):
    # pieces cut at block starts give the one-thread result
    x = hostile(np.random.default_rng(3), shape, 0.001)
    one = quark.mx_quantize_dequantize(x, "fp8_e5m2", axis, bs, num_threads=1)
    assert bits_equal(quark.mx_quantize_dequantize(x, "fp8_e5m2", axis, bs, num_threads=3),
                      one)
    one = quark.bfp_quantize_dequantize(x, "to_bfp_prime", axis, block_size=bs * 2,
                                        sub_block_size=2, num_threads=1)
    assert bits_equal(quark.bfp_quantize_dequantize(x, "to_bfp_prime", axis,
                                                    block_size=bs * 2, sub_block_size=2,
                                                    num_threads=4), one)


# ------------------------------------------------------------------ quantize_mx

MX_ONNX = {"fp8_e4m3": ("float8_e4m3fn", 8), "fp8_e5m2": ("float8_e5m2", 15),
           "fp6_e3m2": ("float6_e3m2fn", 4), "fp6_e2m3": ("float6_e2m3fn", 2),
           "fp4_e2m1": ("float4_e2m1fn", 2), "int8": ("int8", 0)}


def _onnx_dequantize(e, s, axis, bs):
    from onnx import TensorProto, helper
    from onnx.reference import ReferenceEvaluator
    tp = {"float8_e4m3fn": TensorProto.FLOAT8E4M3FN, "float8_e5m2": TensorProto.FLOAT8E5M2,
          "float4_e2m1fn": TensorProto.FLOAT4E2M1, "int8": TensorProto.INT8,
          "float6_e2m3fn": TensorProto.FLOAT6E2M3, "float6_e3m2fn": TensorProto.FLOAT6E3M2,
          }[e.dtype.name]
    node = helper.make_node("DequantizeLinear", ["x", "s"], ["y"], axis=axis, block_size=bs,
                            output_dtype=TensorProto.FLOAT)
    g = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", tp, list(e.shape)),
                      helper.make_tensor_value_info("s", TensorProto.FLOAT8E8M0,
                                                    list(s.shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 28)])   # 28: float6
    return ReferenceEvaluator(m).run(None, {"x": e, "s": s})[0]


@pytest.mark.parametrize("etype", list(MX_ONNX))
def test_quantize_mx_round_trip(isa, etype):
    name, emax = MX_ONNX[etype]
    rng = np.random.default_rng(zlib.crc32(etype.encode()))
    for shape, axis, bs in [((6, 70), -1, 32), ((37, 5), 0, 8), ((2, 9, 37), 1, 5),
                            ((100,), 0, 32)]:
        x = hostile(rng, shape, 0.0)
        x[~np.isfinite(x)] = 1.0
        elements, scales = qsimd.quantize_mx(x, etype, axis=axis, block_size=bs)
        assert elements.dtype.name == name and scales.dtype == ml_dtypes.float8_e8m0fnu
        ax = axis % x.ndim
        assert scales.shape == x.shape[:ax] + (-(-x.shape[ax] // bs),) + x.shape[ax + 1:]
        got = qsimd.dequantize_linear(elements, scales, axis=axis, block_size=bs,
                                      output_dtype="float32")
        ref = _onnx_dequantize(elements, scales, axis, bs)
        assert bits_equal(got, ref)
        # Quark's MX with half to even, where e8m0 holds the block's scale
        want = quark.mx_quantize_dequantize(x, etype, axis=axis, block_size=bs,
                                            rounding_mode=2)
        big = np.abs(np.moveaxis(x, ax, -1))
        pad = -big.shape[-1] % bs
        big = np.pad(big, [(0, 0)] * (big.ndim - 1) + [(0, pad)])
        bmax = big.reshape(big.shape[:-1] + (-1, bs)).max(-1)
        ok = (bmax == 0) | (bmax >= np.float32(2.0 ** (emax - 127)))
        ok = np.repeat(ok, bs, axis=-1)[..., :x.shape[ax]]
        ok = np.moveaxis(ok, -1, ax)
        assert ok.mean() > 0.5
        assert np.array_equal(got[ok], want[ok])          # values: -0 == +0
        nz = ok & (want != 0)
        assert bits_equal(got[nz], want[nz])


def test_quantize_mx_by_hand():
    # block max 3.0: e8m0 code 128 - 8 = 120 (2^-7) for e4m3; int8: 128 - 6 = 122 (2^-5)
    x = np.array([[3.0, 0.3, -0.0, 0.0]], np.float32)
    e, s = qsimd.quantize_mx(x, "fp8_e4m3", block_size=4)
    assert s.view(np.uint8).tolist() == [[120]]
    assert e.astype(np.float32).tolist() == [[384.0, 40.0, -0.0, 0.0]]
    assert np.signbit(e.astype(np.float32)[0, 2])      # -0 kept, as a cast keeps it
    e, s = qsimd.quantize_mx(x, "int8", block_size=4)
    assert s.view(np.uint8).tolist() == [[122]] and e.tolist() == [[96, 10, 0, 0]]
    # tiny and all-zero blocks take e8m0's smallest scale 2^-127 (code 0)
    e, s = qsimd.quantize_mx(np.float32([[0.0, 2.0**-126, 0.0, 0.0]]), "fp4_e2m1",
                             block_size=2)
    assert s.view(np.uint8).tolist() == [[0, 0]]
    assert e.astype(np.float32).tolist() == [[0.0, 2.0, 0.0, 0.0]]
    # NaN / inf do not count for the scale and convert as QuantizeLinear does
    e, s = qsimd.quantize_mx(np.float32([1.0, np.nan, np.inf]), "fp8_e4m3", axis=0)
    assert s.view(np.uint8).tolist() == [119]
    f = e.astype(np.float32)
    assert f[0] == 256.0 and np.isnan(f[1]) and f[2] == 448.0
    with pytest.raises(ValueError, match="element_dtype"):
        qsimd.quantize_mx(x, "fp8")
    with pytest.raises(TypeError, match="float32"):
        qsimd.quantize_mx(x.astype(np.float16), "int8")


@pytest.mark.parametrize("etype", MX_TYPES)
def test_float16_matches_quark(quark_lib, etype):
    # Quark's op casts float16 x to float32 and the result back (onnxruntime's Cast)
    rng = np.random.default_rng(zlib.crc32(f"half{etype}".encode()))
    with np.errstate(over="ignore"):
        h = hostile(rng, (6, 80), 0.01).astype(np.float16)
    for mode in range(3):
        attrs = dict(element_dtype=etype, rounding_mode=mode)
        got = quark.mx_quantize_dequantize(h, **attrs)
        want = quark_ops.mx(h, **attrs)
        assert got.dtype == np.float16 and got.tobytes() == want.tobytes(), attrs
    for method in ("to_bfp", "to_bfp_prime"):
        got = quark.bfp_quantize_dequantize(h, method)
        want = quark_ops.bfp(h, bfp_method=method)
        assert got.tobytes() == want.tobytes(), method


@pytest.mark.filterwarnings("error")
def test_float16_result_beyond_float16_is_inf_without_warning():
    # 65504 rounds to bfloat16's 65536; to_bfp (7 mantissa bits, scale 2^10) keeps it, and
    # float16 has no 65536: the cast back gives inf, as Quark's Cast does, and warns nothing
    # (an application that turns warnings into errors must get the result)
    x = np.full((1, 8), 65504, np.float16)
    for method in ("to_bfp", "to_bfp_prime"):
        y = quark.bfp_quantize_dequantize(x, method, convert_to_bfloat_before_bfp=1)
        assert y.dtype == np.float16 and np.isposinf(y).all(), (method, y)
