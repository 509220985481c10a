"""`out=` overlapping the inputs: the documented rule is that the result equals the
non-overlapping call, whatever the overlap (exact in-place, partial either way, misaligned,
overlapping the scale, the zero point or the packed bytes of a PackedTensor)."""
import ml_dtypes
import numpy as np
import pytest

import qsimd

Q, D = qsimd.quantize_linear, qsimd.dequantize_linear
RNG = np.random.default_rng(77)


def _place(x, out_shape, out_dtype, shift):
    """x and an empty out in one byte buffer, out starting `shift` bytes after x's start
    (negative: before). Returns (x view, out view, buffer)."""
    out_dtype = np.dtype(out_dtype)
    onb = int(np.prod(out_shape)) * out_dtype.itemsize
    xo, oo = max(0, -shift), max(0, shift)
    raw = np.zeros(max(xo + x.nbytes, oo + onb) + 8, np.uint8)
    xv = np.ndarray(x.shape, x.dtype, buffer=raw, offset=xo)
    xv[...] = x
    ov = np.ndarray(out_shape, out_dtype, buffer=raw, offset=oo)
    return xv, ov, raw


def _shifts(x_nbytes, out_nbytes, itemsize):
    """Exact, partial both ways, inside, and misaligned overlaps."""
    s = {0, itemsize, -itemsize, x_nbytes - out_nbytes, (x_nbytes - out_nbytes) // 2,
         -(out_nbytes // 2), x_nbytes // 2, 1, -1, 3}
    return sorted(v for v in s if -out_nbytes < v < x_nbytes)


def _check(fn, x, args, kwargs, out_shape, out_dtype):
    want = fn(x.copy(), *args, **kwargs)
    odt = np.dtype(out_dtype)
    for shift in _shifts(x.nbytes, int(np.prod(out_shape)) * odt.itemsize, odt.itemsize):
        xv, ov, _ = _place(x, out_shape, odt, shift)
        assert np.may_share_memory(xv, ov)
        got = fn(xv, *args, out=ov, **kwargs)
        assert (got.data if isinstance(got, qsimd.PackedTensor) else got) is ov
        assert got.tobytes() == want.tobytes(), (fn.__name__, x.dtype, odt, shift)


@pytest.mark.parametrize("xt,yt", [(np.int32, np.float32), (np.uint32, np.float32),
                                   (np.int32, np.float16), (np.int16, np.float16),
                                   (np.uint16, ml_dtypes.bfloat16),
                                   (np.int32, ml_dtypes.bfloat16), (np.uint8, np.float32)])
def test_dequantize_out_overlapping_x(isa, xt, yt):
    info = np.iinfo(xt)
    x = RNG.integers(max(info.min, -2**30), min(info.max, 2**30), (6, 10)).astype(xt)
    s = (RNG.random(10) + 0.25).astype(np.float32)
    zp = RNG.integers(-50, 50, 10).astype(xt) if info.min < 0 else None
    _check(D, x, (s, zp), dict(axis=1, output_dtype=yt), x.shape, yt)
    _check(D, x, (np.float32(0.5),), dict(output_dtype=yt), x.shape, yt)   # fast-path shape
    sb = (RNG.random((6, 4)) + 0.25).astype(np.float32)
    _check(D, x, (sb,), dict(axis=1, block_size=3, output_dtype=yt), x.shape, yt)


@pytest.mark.parametrize("xt,yt,packed", [
    (np.float32, np.uint8, False), (np.float32, np.int8, False), (np.float32, np.int16, False),
    (np.float32, ml_dtypes.int4, False), (np.float32, ml_dtypes.uint2, True),
    (np.float16, np.int16, False), (ml_dtypes.bfloat16, np.uint16, False),
    (np.int32, np.int16, False), (np.int32, ml_dtypes.int4, True), (np.float16, np.uint8, False),
])
def test_quantize_out_overlapping_x(isa, xt, yt, packed):
    x = (RNG.standard_normal((5, 12)) * 40).astype(xt)
    s = (RNG.random(12) + 0.1).astype(np.float32)
    bits = {np.dtype(ml_dtypes.int4): 4, np.dtype(ml_dtypes.uint2): 2}.get(np.dtype(yt), 8)
    oshape = ((x.size * bits + 7) // 8,) if packed else x.shape
    odt = np.uint8 if packed else yt
    _check(Q, x, (s,), dict(axis=1, output_dtype=yt, packed=packed), oshape, odt)
    _check(Q, x, (np.float32(0.3),), dict(output_dtype=yt, packed=packed), oshape, odt)


def test_exact_in_place():
    # the common spelling of in-place: out is a view of x's own memory
    codes = np.array([[1, -7, 2**24 + 1], [0, 5, -2**31]], np.int32)
    want = D(codes.copy(), np.float32(0.5), np.int32(1))
    out = codes.view(np.float32)
    assert D(codes, np.float32(0.5), np.int32(1), out=out) is out
    assert out.tobytes() == want.tobytes()
    h = np.array([1.5, -2.5, np.inf, np.nan], np.float16)
    want = Q(h.copy(), np.float16(0.5), output_dtype="int16")
    out = h.view(np.int16)
    assert Q(h, np.float16(0.5), output_dtype="int16", out=out) is out
    assert out.tolist() == want.tolist() == [3, -5, 32767, -32768]


def test_out_overlapping_scale_and_zero_point():
    x = (RNG.standard_normal((3, 8)) * 10).astype(np.float32)
    params = np.zeros(64, np.uint8)
    s = params[:32].view(np.float32)
    s[:] = RNG.random(8) + 0.5
    zp = params[32:40].view(np.int8)
    zp[:] = RNG.integers(-5, 5, 8)
    want = Q(x, s.copy(), zp.copy(), axis=1)
    for lo in (0, 4, 28, 30, 33, 40):   # over the scale, the zero point, both, neither
        p = params.copy()
        sv, zv = p[:32].view(np.float32), p[32:40].view(np.int8)
        out = np.ndarray((3, 8), np.int8, buffer=p, offset=lo) if lo + 24 <= 64 else None
        if out is None:
            continue
        assert Q(x, sv, zv, axis=1, out=out) is out
        assert out.tobytes() == want.tobytes(), lo
    # dequantize: out over the float16 scale it reads
    q = RNG.integers(0, 255, (4, 6)).astype(np.uint8)
    buf = np.zeros(48, np.float16)
    sd = buf[:6]
    sd[:] = RNG.random(6) + 0.5
    want = D(q, sd.copy(), axis=1)
    out = buf[:24].reshape(4, 6)
    assert D(q, sd, axis=1, out=out) is out
    assert out.tobytes() == want.tobytes()


def test_out_overlapping_packed_input():
    x = RNG.integers(-8, 8, (4, 10)).astype(ml_dtypes.int4)
    data = qsimd.pack(x)                          # 20 bytes
    want = D(qsimd.PackedTensor(data, "int4", (4, 10)), np.float32(0.25))
    for shift in (0, 4, 12, -8):
        xv, ov, _ = _place(data, (4, 10), np.float32, shift)
        got = D(qsimd.PackedTensor(xv, "int4", (4, 10)), np.float32(0.25), out=ov)
        assert got is ov and got.tobytes() == want.tobytes(), shift


def test_overlap_never_reaches_the_c_core(monkeypatch):
    """The rule is implemented in Python: the C call only ever sees disjoint buffers."""
    from qsimd import _api
    seen = []
    real_q = _api._core.quantize_fast

    def spy(x, scale, zp, *rest):
        y = real_q(x, scale, zp, *rest)
        if y is not None:   # the C call was made, on these buffers (rest[-2]: out)
            seen.append(any(np.may_share_memory(rest[-2], a) for a in (x, scale, zp)
                            if isinstance(a, np.ndarray)))
        return y

    monkeypatch.setattr(_api._core, "quantize_fast", spy)
    x = np.arange(16, dtype=np.float32)
    Q(x, np.ones(16, np.float32), axis=0, out=x.view(np.uint8)[:16])
    Q(x, np.float32(1), output_dtype="int16", out=x.view(np.int16)[3:19])
    assert seen == [False, False]
