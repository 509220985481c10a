"""Large non-contiguous inputs (strided, Fortran-order, transposed, byte-swapped, misaligned)
are processed in pieces (qsimd/_pieces.py) instead of being copied whole: the results must
be bit-identical to the call on the same values in a C-contiguous array (itself tested against
onnx.reference elsewhere), for every op, granularity and output layout, on every ISA; and the
extra memory must not grow with the input."""
import sys
import tracemalloc

import ml_dtypes
import numpy as np
import pytest

import qsimd
from qsimd import _pieces

MiB = 1 << 20


@pytest.fixture
def small_pieces(monkeypatch):
    """Pieces of 97 elements (and inputs over 97 elements take the piece path): many pieces,
    every choice of the split dimension, on small arrays."""
    monkeypatch.setattr(_pieces, "PIECE", 97)


def _dense(x):
    return np.ascontiguousarray(x).astype(x.dtype.newbyteorder("="))


def _layouts(rng, shape, dtype=np.float32, scale=30):
    """Views of `shape` that the general path would copy."""
    base = (rng.standard_normal([2 * d for d in shape]) * scale).astype(dtype)
    strided = base[tuple(slice(None, None, 2) for _ in shape)]
    fortran = np.asfortranarray(strided)
    swapped = _dense(strided).astype(np.dtype(dtype).newbyteorder("S"))
    raw = np.zeros(strided.nbytes + 1, np.uint8)[1:]
    misaligned = raw.view(dtype).reshape(shape) if np.dtype(dtype).itemsize > 1 else fortran
    misaligned[...] = strided
    out = {"strided": strided, "fortran": fortran, "swapped": swapped,
           "misaligned": misaligned}
    if len(shape) >= 2:
        out["transposed"] = np.ascontiguousarray(
            np.swapaxes(strided, 0, -1)).swapaxes(0, -1)
    return out


def _same(got, want):
    if isinstance(want, qsimd.PackedTensor):
        assert isinstance(got, qsimd.PackedTensor)
        assert got.dtype == want.dtype and got.shape == want.shape
        got, want = got.data, want.data
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(got.reshape(-1).view(np.uint8), want.reshape(-1).view(np.uint8))


SHAPES = [(1001,), (7, 45), (3, 5, 29), (2, 3, 4, 11)]


@pytest.mark.parametrize("shape", SHAPES)
def test_quantize_every_granularity(isa, small_pieces, shape):
    rng = np.random.default_rng(len(shape))
    for name, x in _layouts(rng, shape).items():
        assert _pieces.wanted(x) or (name == "fortran" and len(shape) == 1), name
        cases = [dict(scale=np.float32(0.3), zero_point=np.uint8(128)),
                 dict(scale=0.25, zero_point=None, output_dtype="int8")]
        for axis in range(-len(shape), len(shape)):
            d = shape[axis]
            cases.append(dict(scale=rng.uniform(0.05, 1, d).astype(np.float32),
                              zero_point=rng.integers(-8, 8, d).astype(np.int8), axis=axis))
            for block in {1, 2, 3, max(1, d // 2), d + 1}:
                sshape = list(shape)
                sshape[axis] = -(-d // block)
                cases.append(dict(scale=rng.uniform(0.05, 1, sshape).astype(np.float32),
                                  zero_point=rng.integers(0, 16, sshape).astype(ml_dtypes.uint4),
                                  axis=axis, block_size=block))
        for kw in cases:
            kw = dict(kw)
            s, z = kw.pop("scale"), kw.pop("zero_point")
            want = qsimd.quantize_linear(_dense(x), s, z, **kw)
            _same(qsimd.quantize_linear(x, s, z, **kw), want)
            out = np.full(want.shape, 0x5A, want.dtype)
            assert qsimd.quantize_linear(x, s, z, out=out, **kw) is out
            _same(out, want)
            fout = np.asfortranarray(np.zeros(want.shape, want.dtype))   # strided out=
            _same(qsimd.quantize_linear(x, s, z, out=fout, **kw), want)


@pytest.mark.parametrize("shape", SHAPES + [(5, 7, 3)])
@pytest.mark.parametrize("otype", ["int4", "uint2", "float4e2m1"])
def test_quantize_packed_cuts_whole_bytes(isa, small_pieces, shape, otype):
    rng = np.random.default_rng(7)
    for name, x in _layouts(rng, shape, scale=4).items():
        for kw in [dict(scale=np.float32(0.7)),
                   dict(scale=rng.uniform(0.3, 2, shape[-1]).astype(np.float32), axis=-1),
                   dict(scale=rng.uniform(0.3, 2, shape[:-1] + (-(-shape[-1] // 4),))
                        .astype(np.float32), axis=-1, block_size=4),
                   dict(scale=rng.uniform(0.3, 2, (-(-shape[0] // 3),) + shape[1:])
                        .astype(np.float32), axis=0, block_size=3)]:
            want = qsimd.quantize_linear(_dense(x), output_dtype=otype, packed=True, **kw)
            _same(qsimd.quantize_linear(x, output_dtype=otype, packed=True, **kw), want)
            out = np.full(want.data.shape, 0xFF, np.uint8)
            qsimd.quantize_linear(x, output_dtype=otype, packed=True, out=out, **kw)
            _same(out, want.data)


@pytest.mark.parametrize("shape", SHAPES)
def test_quantize_other_types(isa, small_pieces, shape):
    rng = np.random.default_rng(3)
    for dtype in (np.float16, ml_dtypes.bfloat16, np.int32):
        for x in _layouts(rng, shape, dtype=dtype).values():
            for kw in [dict(output_dtype="float8e4m3fn", saturate=False),
                       dict(output_dtype="int16"), dict(output_dtype="float16"),
                       dict(precision="float16")]:
                s = np.float32(0.37) if dtype != np.int32 else np.int32(3)
                want = qsimd.quantize_linear(_dense(x), s, **kw)
                _same(qsimd.quantize_linear(x, s, **kw), want)


@pytest.mark.parametrize("shape", SHAPES)
def test_dequantize(isa, small_pieces, shape):
    rng = np.random.default_rng(11)
    for qtype, lo, hi in ((np.uint8, 0, 256), (np.int16, -999, 999), (ml_dtypes.int4, -8, 8)):
        base = rng.integers(lo, hi, [2 * d for d in shape]).astype(qtype)
        strided = base[tuple(slice(None, None, 2) for _ in shape)]
        for x in (strided, np.asfortranarray(strided)):
            axis = len(shape) - 1
            d = shape[axis]
            for kw in [dict(scale=np.float32(0.5), zero_point=np.array(3, qtype)),
                       dict(scale=rng.uniform(0.1, 1, d).astype(np.float16), axis=axis,
                            zero_point=rng.integers(lo, hi, d).astype(qtype)),
                       dict(scale=rng.uniform(0.1, 1, shape[0]).astype(np.float32), axis=0),
                       dict(scale=rng.uniform(0.1, 1, (-(-shape[0] // 2),) + shape[1:])
                            .astype(np.float32), axis=0, block_size=2,
                            output_dtype="bfloat16")]:
                kw = dict(kw)
                s, z = kw.pop("scale"), kw.pop("zero_point", None)
                want = qsimd.dequantize_linear(_dense(x), s, z, **kw)
                _same(qsimd.dequantize_linear(x, s, z, **kw), want)
                out = np.empty(want.shape, want.dtype)
                qsimd.dequantize_linear(x, s, z, out=out, **kw)
                _same(out, want)


@pytest.mark.parametrize("shape", SHAPES)
def test_dynamic_uses_the_whole_range(isa, small_pieces, shape):
    rng = np.random.default_rng(5)
    for x in _layouts(rng, shape).values():
        x[(0,) * len(shape)] = np.nan   # ignored when finding the range
        x[(1,) + (0,) * (len(shape) - 1)] = -0.0
        want = qsimd.dynamic_quantize_linear(_dense(x))
        got = qsimd.dynamic_quantize_linear(x)
        for g, w in zip(got, want):
            _same(np.asarray(g), np.asarray(w))
        out = np.empty(x.shape, np.uint8)
        assert qsimd.dynamic_quantize_linear(x, out=out)[0] is out
        _same(out, want[0])
    # only positive values, a constant and an all-zero tensor: the range rules at the edges
    for v in (np.abs(rng.standard_normal(shape)).astype(np.float32) + 1,
              np.full(shape, 3.5, np.float32), np.zeros(shape, np.float32)):
        f = np.asfortranarray(v)
        for g, w in zip(qsimd.dynamic_quantize_linear(f), qsimd.dynamic_quantize_linear(v)):
            _same(np.asarray(g), np.asarray(w))


def test_errors_are_those_of_the_whole_call(small_pieces):
    x = np.asfortranarray(np.ones((40, 30), np.float32))
    with pytest.raises(ValueError, match="scale has 7 entries but x.shape"):
        qsimd.quantize_linear(x, np.ones(7, np.float32), axis=1)
    with pytest.raises(ValueError, match="axis 5 is out of range"):
        qsimd.quantize_linear(x, np.ones(30, np.float32), axis=5)
    with pytest.raises(TypeError, match="x must be"):
        qsimd.quantize_linear(x.astype(np.float64), 1.0)
    out = np.full((40, 30), 7, np.uint8)
    with pytest.raises(ValueError, match="zero_point"):
        qsimd.quantize_linear(x, np.ones(30, np.float32), np.zeros(29, np.uint8), out=out)
    assert (out == 7).all()   # nothing written
    with pytest.raises(ValueError, match="out must have shape"):
        qsimd.quantize_linear(x, 1.0, out=np.empty((30, 40), np.uint8))
    z8 = np.zeros(30, ml_dtypes.float8_e4m3fn)
    z8[29] = 1   # checked by value: declined to the whole call, which raises
    with pytest.raises(ValueError, match="zero_point must be zero"):
        qsimd.dequantize_linear(np.asfortranarray(np.zeros((40, 30), ml_dtypes.float8_e4m3fn)),
                                np.ones(30, np.float32), z8)


def test_broadcast_views_keep_the_whole_call_rules():
    """A broadcast view may stand for more elements than memory holds: not cut into pieces
    (that would run for hours), the whole call's MemoryError instead."""
    x = np.broadcast_to(np.float32(1), (1 << 42,))
    assert not _pieces.wanted(x)
    with pytest.raises(MemoryError):
        qsimd.dynamic_quantize_linear(x)


def test_strided_input_memory_is_bounded():
    """x[::2] of 32M float32 (QSIMD_TEST_QUICK: 8M): at most 2 MiB beyond the result."""
    from qtest_util import QUICK
    n = (8 if QUICK else 32) << 20
    x = np.arange(n, dtype=np.float32) * np.float32(1e-3)
    v = x[::2]
    want = qsimd.quantize_linear(np.ascontiguousarray(v[:1 << 20]), np.float32(0.01))
    qf = np.asfortranarray(x.view(np.uint8)[: n // 2].reshape(2048, -1))   # Fortran order
    for op in (lambda: qsimd.quantize_linear(v, np.float32(0.01)),
               lambda: qsimd.dequantize_linear(qf, np.float32(2)),
               lambda: qsimd.dynamic_quantize_linear(v)[0]):
        tracemalloc.start()
        try:
            y = op()
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak - y.nbytes <= 2 * MiB, (peak >> 10, y.nbytes >> 10)
    y = qsimd.quantize_linear(v, np.float32(0.01))
    _same(y[:1 << 20], want)
