"""qsimd.dynamic_quantize: per-row / per-block dynamic quantization. Every uint8 group equals
onnx.reference DynamicQuantizeLinear of that group alone, on every ISA; the other types follow
the documented formulas, checked against onnx.reference QuantizeLinear with hand-computed
parameters; the outputs feed DequantizeLinear (blocked) as they are."""
import ml_dtypes
import numpy as np
import pytest

import qsimd
from qtest_util import assert_same as _assert_same, onnx_code, ref_dequantize, ref_dynamic, ref_quantize


def assert_same(actual, expected, what=""):
    """Bit-exact, NumPy scalars (a group's scale) included."""
    _assert_same(np.asarray(actual), np.asarray(expected), what)


def _groups(x, axis, block):
    """(index of the group's scale entry, index of its elements) for every group."""
    a = axis % x.ndim
    d = x.shape[a]
    b = block or d
    nb = -(-d // b)
    other = [range(n) for i, n in enumerate(x.shape) if i != a]
    for rest in np.ndindex(*[len(r) for r in other]):
        for k in range(nb):
            idx = list(rest)
            idx.insert(a, slice(k * b, min(d, (k + 1) * b)))
            sidx = list(rest)
            sidx.insert(a, k)
            yield tuple(sidx), tuple(idx)


def _data(rng, shape):
    x = (rng.standard_normal(shape) * rng.choice([0.01, 1, 300])).astype(np.float32)
    if rng.random() < 0.5:
        x += np.float32(rng.choice([-5, 5]))   # ranges that do not straddle 0
    return x


@pytest.mark.parametrize("shape,axis,block", [
    ((7, 33), -1, None), ((1, 1000), -1, None), ((16, 64), -1, 32), ((5, 100), 1, 7),
    ((3, 4, 50), 1, None), ((3, 40, 5), 1, 16), ((300, 3), 0, None), ((4, 9, 300), 0, 2),
    ((129,), 0, None), ((2, 3, 4), 2, 3)])
def test_uint8_groups_equal_dynamic_quantize_linear(isa, shape, axis, block):
    rng = np.random.default_rng(abs(hash((shape, axis, block))) % 2**32)
    for _ in range(3):
        x = _data(rng, shape)
        y, scale, zp = qsimd.dynamic_quantize(x, axis=axis, block_size=block)
        assert y.dtype == np.uint8 and scale.dtype == np.float32 and zp.dtype == np.uint8
        for sidx, idx in _groups(x, axis, block):
            ry, rs, rz = ref_dynamic(np.ascontiguousarray(x[idx]))
            assert_same(y[idx], ry, f"{shape} {axis} {block} {idx}")
            assert_same(scale[sidx], rs)
            assert_same(zp[sidx], rz)
        # the general path (a Fortran-order x is copied first) gives the same, checked bits
        yf, sf, zf = qsimd.dynamic_quantize(np.asfortranarray(x), axis=axis, block_size=block)
        assert_same(yf, y)
        assert_same(sf, scale)
        assert_same(zf, zp)
        # ONNX DequantizeLinear (blocked) consumes the parameters as they are
        b = block or shape[axis]
        assert_same(qsimd.dequantize_linear(y, scale, zp, axis=axis, block_size=b),
                    ref_dequantize(y, scale, zp, axis=axis, block_size=b))


@pytest.mark.parametrize("out_name", ["int8", "int4"])
@pytest.mark.parametrize("shape,axis,block", [((6, 70), -1, None), ((5, 64), 1, 16),
                                              ((20, 3, 6), 0, 8)])
def test_symmetric(isa, out_name, shape, axis, block):
    dt = np.dtype(np.int8 if out_name == "int8" else ml_dtypes.int4)
    qmax = 127 if out_name == "int8" else 7
    rng = np.random.default_rng(7)
    x = _data(rng, shape)
    y, scale, zp = qsimd.dynamic_quantize(x, axis=axis, block_size=block, output_dtype=dt,
                                          symmetric=True)
    assert zp.dtype == dt and not zp.astype(np.int32).any()
    for sidx, idx in _groups(x, axis, block):
        g = np.ascontiguousarray(x[idx])
        s = np.float32(np.abs(g).max()) / np.float32(qmax)   # the documented formula
        assert_same(scale[sidx], s)
        assert_same(y[idx], ref_quantize(g, s, np.zeros((), dt)))


@pytest.mark.parametrize("out_name", ["uint4", "int4", "int8"])
def test_asymmetric_other_types(isa, out_name):
    dt = np.dtype({"uint4": ml_dtypes.uint4, "int4": ml_dtypes.int4, "int8": np.int8}[out_name])
    info = ml_dtypes.iinfo(dt)
    rng = np.random.default_rng(11)
    x = _data(rng, (9, 45))
    y, scale, zp = qsimd.dynamic_quantize(x, block_size=10, output_dtype=dt)
    for sidx, idx in _groups(x, -1, 10):
        g = x[idx]
        hi, lo = max(np.float32(0), g.max()), min(np.float32(0), g.min())
        s = np.float32(hi - lo) / np.float32(info.max - info.min)
        z = np.round(np.clip(np.float32(info.min) - lo / s, info.min, info.max))
        assert_same(scale[sidx], s)
        assert int(zp[sidx]) == int(z)
        assert_same(y[idx], ref_quantize(np.ascontiguousarray(g), s, np.array(z).astype(dt),
                                         output_dtype=onnx_code(dt)))


def test_special_groups(isa):
    x = np.array([[0, 0, 0, 0],                      # all zero: scale 1/255, zp 0
                  [np.nan, 1, -1, 2],                # NaN ignored for the range, -> qmin
                  [np.nan] * 4,                      # all NaN: as all zero
                  [3, 3, 3, 3]], np.float32)
    y, s, z = qsimd.dynamic_quantize(x)
    assert_same(s[0, 0], np.float32(1) / np.float32(255))
    assert z[0, 0] == 0 and not y[0].any()
    ry, rs, rz = ref_dynamic(x[1, 1:].copy())
    assert_same(s[1, 0], rs)
    assert z[1, 0] == rz and y[1, 0] == 0 and np.array_equal(y[1, 1:], ry)
    assert_same(s[2, 0], np.float32(1) / np.float32(255))
    assert not y[2].any()
    ry, rs, rz = ref_dynamic(x[3].copy())
    assert_same(y[3], ry)
    ys, ss, _ = qsimd.dynamic_quantize(x, output_dtype="int8", symmetric=True)
    assert_same(ss[0, 0], np.float32(1) / np.float32(127))
    assert ys[1, 0] == -128   # NaN -> qmin


def test_threads_and_out(isa):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((600, 1024)).astype(np.float32)
    y1, s1, z1 = qsimd.dynamic_quantize(x, num_threads=1)
    out = np.empty(x.shape, np.uint8)
    y4, s4, z4 = qsimd.dynamic_quantize(x, num_threads=4, out=out)
    assert y4 is out
    assert_same(y4, y1)
    assert_same(s4, s1)
    assert_same(z4, z1)
    for i in (0, 299, 599):
        ry, rs, rz = ref_dynamic(x[i].copy())
        assert_same(y4[i], ry)
        assert_same(s4[i, 0], rs)
    # axis 0 (strided groups), split across threads at slab boundaries
    ya, sa, za = qsimd.dynamic_quantize(x, axis=0, block_size=64, num_threads=4)
    yb, sb, zb = qsimd.dynamic_quantize(x, axis=0, block_size=64, num_threads=1)
    assert_same(ya, yb)
    ry, rs, rz = ref_dynamic(x[64:128, 5].copy())
    assert_same(ya[64:128, 5], ry)
    assert_same(sa[1, 5], rs)


def test_errors():
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(TypeError, match="x must be float32"):
        qsimd.dynamic_quantize(np.zeros((2, 3), np.float64))
    with pytest.raises(TypeError, match="output_dtype .*must be uint8, int8, uint4 or int4, one per byte, got int16"):
        qsimd.dynamic_quantize(x, output_dtype="int16")
    with pytest.raises(ValueError, match=r"symmetric needs a signed output_dtype \(int8 or int4\), got uint8"):
        qsimd.dynamic_quantize(x, symmetric=True)
    with pytest.raises(ValueError, match="axis 2 is out of range"):
        qsimd.dynamic_quantize(x, axis=2)
    with pytest.raises(ValueError, match="block_size must be >= 1"):
        qsimd.dynamic_quantize(x, block_size=0)
    with pytest.raises(ValueError, match="at least one dimension"):
        qsimd.dynamic_quantize(np.float32(1))
    with pytest.raises(ValueError, match="x is empty"):
        qsimd.dynamic_quantize(np.zeros((0, 3), np.float32))
    with pytest.raises(ValueError, match="out must have shape"):
        qsimd.dynamic_quantize(x, out=np.empty((3, 2), np.uint8))
    with pytest.raises(ValueError, match="symmetric must be"):
        qsimd.dynamic_quantize(x, output_dtype="int8", symmetric=2)


def test_block_size_beyond_the_axis_any_layout(isa):
    """A block larger than the axis (up to the int64 limit) is one block: the same for every
    layout of the same values (the fast path's block count once overflowed and refused it)."""
    x = np.random.default_rng(3).standard_normal((5, 7)).astype(np.float32)
    want = qsimd.dynamic_quantize(x, block_size=7)
    for bs in (8, 2**31, 2**62, 2**63 - 1):
        for xv in (x, np.asfortranarray(x), x[::-1][::-1]):
            got = qsimd.dynamic_quantize(xv, block_size=bs)
            for g, w in zip(got, want):
                assert g.shape == w.shape and g.dtype == w.dtype
                assert np.array_equal(g.view(np.uint8), w.view(np.uint8)), bs
