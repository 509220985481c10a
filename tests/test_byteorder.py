"""Big-endian inputs and outputs are read and written by value: every result equals the
little-endian (native) call, on every path (fast path, general path, packed, dynamic)."""
import ml_dtypes
import numpy as np
import pytest

import qsimd

Q, D = qsimd.quantize_linear, qsimd.dequantize_linear
RNG = np.random.default_rng(2024)
BF16 = np.dtype(ml_dtypes.bfloat16)


def be(a):
    """The same values, big-endian (a no-op for one-byte types)."""
    a = np.asarray(a)
    if a.dtype.itemsize == 1:
        return a
    b = a.astype(a.dtype.newbyteorder(">"))
    assert b.dtype.byteorder == ">" and not b.dtype.isnative
    return b


def values(dt, shape):
    dt = np.dtype(dt)
    if dt.kind in "iu" or dt in (np.dtype(ml_dtypes.int4), np.dtype(ml_dtypes.uint4)):
        info = ml_dtypes.iinfo(dt) if dt.kind == "V" else np.iinfo(dt)
        return RNG.integers(max(info.min, -2**20), min(info.max, 2**20) + 1, shape).astype(dt)
    v = RNG.standard_normal(shape) * 50
    v.flat[:4] = [np.nan, np.inf, -0.0, 2.5][: v.size]
    return v.astype(dt)


@pytest.mark.parametrize("xt", [np.float32, np.float16, BF16, np.int32])
@pytest.mark.parametrize("st", [np.float32, np.float16, BF16, np.int32])
@pytest.mark.parametrize("yt", [np.uint16, np.int16, np.uint8, ml_dtypes.int4])
def test_quantize_big_endian(xt, st, yt):
    x = values(xt, (3, 7))
    s = (RNG.random(7) * 4 + 0.5).astype(st) if np.dtype(st).kind == "f" else \
        RNG.integers(1, 5, 7).astype(st)
    zp = values(yt, (7,))
    want = Q(x, s, zp, axis=1)
    for bx, bs, bz in ((1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 1, 1)):
        got = Q(be(x) if bx else x, be(s) if bs else s, be(zp) if bz else zp, axis=1)
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), (bx, bs, bz)
    out = np.empty(x.shape, np.dtype(yt).newbyteorder(">"))
    assert Q(be(x), be(s), be(zp), axis=1, out=out) is out
    assert np.array_equal(out.astype(np.dtype(yt)), want)


@pytest.mark.parametrize("xt", [np.uint16, np.int16, np.int32, np.uint32, np.int8])
@pytest.mark.parametrize("st", [np.float32, np.float16, BF16])
def test_dequantize_big_endian(xt, st):
    x = values(xt, (4, 5))
    s = (RNG.random(5) + 0.5).astype(st)
    zp = values(xt, (5,))
    want = D(x, s, zp, axis=1)
    for bx, bs, bz in ((1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 1, 1)):
        got = D(be(x) if bx else x, be(s) if bs else s, be(zp) if bz else zp, axis=1)
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), (bx, bs, bz)
    out = np.empty(x.shape, np.dtype(st).newbyteorder(">"))
    assert D(be(x), be(s), be(zp), axis=1, out=out) is out
    assert out.astype(st).tobytes() == want.tobytes()


def test_fast_paths_big_endian():
    # the shapes the C fast paths take: a 1-D float32 x and a scalar scale / zero point
    x = values(np.float32, 300)
    want = Q(x, np.float32(0.7), np.int8(-3))
    assert Q(be(x), be(np.array(0.7, np.float32)), np.int8(-3)).tobytes() == want.tobytes()
    out = np.empty(300, ">f4")
    q = RNG.integers(0, 256, 300).astype(np.uint8)
    want = D(q, np.float32(0.7), np.uint8(9))
    assert D(q, be(np.array(0.7, np.float32)), np.uint8(9), out=out) is out
    assert out.astype(np.float32).tobytes() == want.tobytes()


def test_dynamic_and_packed_big_endian():
    x = values(np.float32, (5, 9))
    x.flat[0] = 3.0   # finite range either way
    y, s, z = qsimd.dynamic_quantize_linear(x)
    y2, s2, z2 = qsimd.dynamic_quantize_linear(be(x))
    assert y.tobytes() == y2.tobytes() and s == s2 and z == z2
    codes = RNG.integers(-8, 8, (5, 9)).astype(ml_dtypes.int4)
    p = qsimd.PackedTensor(qsimd.pack(codes), "int4", (5, 9))
    sc = (RNG.random(9) + 0.5).astype(np.float16)
    want = D(p, sc, axis=1)
    assert D(p, be(sc), axis=1).tobytes() == want.tobytes()


def test_big_endian_out_of_the_wrong_type_is_refused():
    with pytest.raises(ValueError, match="out must have dtype int16, got >u2"):
        Q(np.ones(3, np.float32), 1.0, output_dtype="int16", out=np.empty(3, ">u2"))
