"""Quantizer(pre=..., pre_axis=..., perm=...): the preprocessing chain fused into
quantization equals its NumPy definition bit for bit -- x.astype(float32), each operation in
float32, np.transpose, then qsimd.quantize_linear (itself checked against onnx.reference
elsewhere; a few cases here go to onnx.reference directly) -- for every input type, chains
of 0 to 4 operations with scalar and per-channel constants (also ones that make inf and NaN),
several permutations, the output types and granularities, on every ISA; and the errors."""
import pickle
import threading
import zlib

import ml_dtypes
import numpy as np
import pytest

import qsimd
from qtest_util import ref_quantize

X_TYPES = [np.uint8, np.int8, np.uint16, np.int16, np.float16, ml_dtypes.bfloat16, np.float32]
UFUNC = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}
SHAPE = (2, 6, 5, 3)   # N, H, W, C
PERMS = [None, (0, 3, 1, 2), (3, 1, 0, 2)]


def chain_ref(x, pre, pre_axis=-1):
    """The definition: float32 throughout, one rounded operation at a time."""
    t = np.asarray(x).astype(np.float32)
    for name, c in pre:
        c = np.asarray(c, dtype=np.float32)
        if c.ndim == 1 and c.size > 1:
            shape = [1] * t.ndim
            shape[pre_axis] = c.size
            c = c.reshape(shape)
        with np.errstate(all="ignore"):
            t = UFUNC[name](t, c, dtype=np.float32)
    return t


def expected(x, pre, perm, scale, zp, pre_axis=-1, **kw):
    t = chain_ref(x, pre, pre_axis)
    if perm is not None:
        t = np.transpose(t, perm)
    return qsimd.quantize_linear(np.ascontiguousarray(t), scale, zp, **kw)


def bits(y):
    """Comparable bytes of a result (NaN payloads included)."""
    if isinstance(y, qsimd.PackedTensor):
        return np.asarray(y.data).tobytes(), str(y.dtype), tuple(y.shape)
    y = np.asarray(y)
    return y.view(np.uint8).tobytes(), str(y.dtype), y.shape


def make_x(rng, xt, shape=SHAPE):
    dt = np.dtype(xt)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(info.min, int(info.max) + 1, shape).astype(dt)
    x = (rng.standard_normal(shape) * 50).astype(np.float32)
    x.reshape(-1)[::17] = np.inf
    x.reshape(-1)[5::23] = np.nan
    x.reshape(-1)[3::29] = -0.0
    return x.astype(dt)


def make_chain(rng, n, c=SHAPE[-1]):
    """n operations with scalar or per-channel constants; some make inf / NaN."""
    pre = []
    for _ in range(n):
        name = ["add", "sub", "mul", "div"][int(rng.integers(4))]
        kind = int(rng.integers(5))
        if kind == 0:
            const = float(rng.standard_normal() * 3)
        elif kind == 1:
            const = (rng.standard_normal(c) * 2).astype(np.float32)
        elif kind == 2:   # division by zero / a huge factor: inf, then NaN
            const = np.array([0.0, 3e38, -0.0][:c] + [1.5] * (c - 3), np.float32)
        elif kind == 3:
            const = 255.0
        else:
            const = [0.485, 0.456, 0.406][:c] + [0.5] * (c - 3)
        pre.append((name, const))
    return pre


# (output_dtype, packed, scale maker): scale as a function of the number of entries
def _scales(rng, n, pow2=False):
    if pow2:   # int32 codes of x * 2^k: every bit of results in [2^(23-k), 2^(31-k))
        return np.exp2(rng.integers(-24, -13, n)).astype(np.float32)
    return (rng.random(n) * 0.2 + 0.01).astype(np.float32)


OUTPUTS = [
    ("uint8", False), ("int8", False), ("int16", False), ("uint16", False),
    ("int4", False), ("int4", True), ("uint4", True), ("uint2", True),
    ("float8_e4m3fn", False), ("float8_e5m2", False), ("float4_e2m1fn", False),
    ("float4_e2m1fn", True), ("float6_e2m3fn", True), ("float6_e3m2fn", False),
    ("int32", False), ("float16", False), ("int32", False),
]


def _zero_point(rng, out, n):
    dt = np.dtype(getattr(ml_dtypes, out, None) or out)
    if out.startswith("float8"):
        return None
    if dt.kind == "f" or dt.kind == "V":
        return np.asarray(rng.integers(-2, 3, n)).astype(dt)
    info = ml_dtypes.iinfo(dt) if dt.itemsize == 1 and out not in ("uint8", "int8") \
        else np.iinfo(dt)
    lo, hi = max(int(info.min), -1000), min(int(info.max), 1000)
    return rng.integers(lo, hi + 1, n).astype(dt)


def _layout(rng, layout, yshape, out, chan_axis):
    """scale, zp and attributes for a layout of the permuted (output) tensor."""
    pow2 = out == "int32"   # Quark's int32 with power-of-two scales sees every bit
    if layout == "tensor":
        s = _scales(rng, 1, pow2)[0]
        z = _zero_point(rng, out, 1)
        return s, (None if z is None else z[0]), dict(axis=1)
    if layout == "channel":   # per-axis along the constants' channel: tables apply
        axis = chan_axis
    else:                      # per-axis along another axis, or blocked
        axis = (chan_axis + 1) % len(yshape)
    if layout == "blocked":
        d = yshape[axis]
        block = 2
        pshape = list(yshape)
        pshape[axis] = -(-d // block)
        s = _scales(rng, int(np.prod(pshape)), pow2).reshape(pshape)
        z = _zero_point(rng, out, int(np.prod(pshape)))
        return s, (None if z is None else z.reshape(pshape)), dict(axis=axis, block_size=block)
    n = yshape[axis]
    return _scales(rng, n, pow2), _zero_point(rng, out, n), dict(axis=axis)


@pytest.mark.parametrize("xt", X_TYPES, ids=lambda t: np.dtype(t).name)
def test_chain_equals_numpy(isa, xt):
    rng = np.random.default_rng(zlib.crc32(f"{isa}-{np.dtype(xt).name}".encode()))
    x = make_x(rng, xt)
    cases = 0
    for oi, (out, packed) in enumerate(OUTPUTS):
        for li, layout in enumerate(("tensor", "channel", "other", "blocked")):
            perm = PERMS[(oi + li) % len(PERMS)]
            pre = make_chain(rng, (oi + 2 * li) % 5)
            yshape = x.shape if perm is None else tuple(x.shape[p] for p in perm)
            chan_axis = (x.ndim - 1) if perm is None else list(perm).index(x.ndim - 1)
            scale, zp, kw = _layout(rng, layout, yshape, out, chan_axis)
            kw.update(output_dtype=out, packed=packed)
            q = qsimd.Quantizer(scale, zp, pre=pre, pre_axis=-1, perm=perm, **kw)
            want = expected(x, pre, perm, scale, zp, **kw)
            got = q(x)
            assert bits(got) == bits(want), (out, packed, layout, perm, pre)
            cases += 1
    assert cases == len(OUTPUTS) * 4


@pytest.mark.parametrize("xt", [np.uint8, np.int8, np.int16, np.float32],
                         ids=lambda t: np.dtype(t).name)
def test_every_input_value(isa, xt):
    """All values of 8-bit inputs, a spread of 16-bit ones, through a normalisation chain with
    per-channel constants, NHWC -> NCHW, int8 per-tensor and per-channel."""
    dt = np.dtype(xt)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        v = np.arange(int(info.min), int(info.max) + 1, max(1, (int(info.max) - int(info.min)) // 4095))
    else:
        v = np.linspace(-300, 300, 4096)
    x = np.resize(v.astype(dt), (1, 4, v.size // 4 // 3 + 1, 3))
    mean = np.array([0.485, 0.456, 0.406], np.float32)
    std = np.array([0.229, 0.224, 0.225], np.float32)
    pre = [("div", 255.0), ("sub", mean), ("div", std)]
    for scale, zp in ((np.float32(0.018), np.int8(-3)),
                      (np.array([0.02, 0.017, 0.019], np.float32), np.array([1, 0, -2], np.int8))):
        q = qsimd.Quantizer(scale, zp, pre=pre, perm=(0, 3, 1, 2))
        want = expected(x, pre, (0, 3, 1, 2), scale, zp)
        assert bits(q(x)) == bits(want)


def test_against_onnx_reference(isa):
    """A few cases straight against onnx.reference's QuantizeLinear on the NumPy chain."""
    rng = np.random.default_rng(7)
    x = rng.integers(0, 256, (2, 4, 5, 3), dtype=np.uint8)
    mean = np.array([0.485, 0.456, 0.406], np.float32)
    pre = [("div", 255.0), ("sub", mean), ("mul", 4.0)]
    t = np.ascontiguousarray(np.transpose(chain_ref(x, pre), (0, 3, 1, 2)))
    for scale, zp, axis in ((np.float32(0.03), np.uint8(128), 1),
                            (np.array([0.02, 0.03, 0.04], np.float32),
                             np.array([-1, 0, 5], np.int8), 1)):
        q = qsimd.Quantizer(scale, zp, axis=axis, pre=pre, perm=(0, 3, 1, 2))
        ref = ref_quantize(t, np.asarray(scale), np.asarray(zp), axis=axis)
        np.testing.assert_array_equal(q(x), ref)
    xf = (rng.standard_normal((1, 3, 4, 2)) * 3).astype(np.float32)
    # finite results only: onnx.reference leaves inf / NaN undefined (the contract defines
    # them; the NumPy-definition tests above cover them)
    pre = [("sub", [0.5, -1.0]), ("div", [0.25, 2.0])]
    q = qsimd.Quantizer(np.float32(0.1), np.int8(0), pre=pre, perm=(0, 3, 1, 2))
    t = np.ascontiguousarray(np.transpose(chain_ref(xf, pre), (0, 3, 1, 2)))
    np.testing.assert_array_equal(q(xf), ref_quantize(t, np.float32(0.1), np.int8(0)))


def test_large_float_pieces(isa):
    """A float input large enough for several pieces, per-tensor and per-axis, packed int4 with
    an odd inner size (pieces of whole packed bytes)."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 67, 129, 3)).astype(np.float32)
    pre = [("mul", 8.0), ("add", [1.0, -2.0, 0.5])]
    for scale, zp, kw in ((np.float32(0.5), np.int8(1), {}),
                          (np.array([0.5, 0.25, 1.0], np.float32), None, dict(axis=1)),
                          (np.float32(0.5), ml_dtypes.int4(0),
                           dict(output_dtype="int4", packed=True)),
                          (np.array([0.5, 0.25, 1.0], np.float32), None,
                           dict(axis=1, output_dtype="int4", packed=True))):
        q = qsimd.Quantizer(scale, zp, pre=pre, perm=(0, 3, 1, 2), **kw)
        want = expected(x, pre, (0, 3, 1, 2), scale, zp, **kw)
        assert bits(q(x)) == bits(want)


@pytest.mark.parametrize("shape,perm", [((2, 7, 75, 3), (0, 3, 1, 2)), ((3, 130), None),
                                        ((1, 5, 97, 3), (3, 0, 1, 2)), ((4, 33, 3), (2, 0, 1)),
                                        ((1, 2, 64, 3), (0, 3, 1, 2)), ((2, 64), None)])
def test_long_rows(isa, shape, perm):
    """Rows long enough for the vector lookups (32 at a time, contiguous or one channel of
    three interleaved), with tails; per-tensor and per-channel int8 / uint8."""
    rng = np.random.default_rng(11)
    x = rng.integers(0, 256, shape, dtype=np.uint8)
    c = shape[-1]
    pre = [("div", 255.0), ("sub", np.linspace(0.3, 0.6, c)), ("div", np.linspace(0.2, 0.3, c))]
    chan = len(shape) - 1 if perm is None else list(perm).index(len(shape) - 1)
    for scale, zp, axis in ((np.float32(0.02), np.int8(-3), 1),
                            ((rng.random(c) * 0.03 + 0.01).astype(np.float32),
                             rng.integers(0, 256, c).astype(np.uint8), chan)):
        q = qsimd.Quantizer(scale, zp, axis=axis, pre=pre, perm=perm)
        want = expected(x, pre, perm, scale, zp, axis=axis)
        assert bits(q(x)) == bits(want)
        x2 = x[..., ::-1].copy()   # every table row used in another order
        assert bits(q(x2)) == bits(expected(x2, pre, perm, scale, zp, axis=axis))
    scalars = [("div", 255.0), ("sub", 0.45), ("div", 0.226)]   # one table: contiguous rows
    q = qsimd.Quantizer(np.float32(0.02), np.int8(1), pre=scalars, perm=perm)
    assert bits(q(x)) == bits(expected(x, scalars, perm, np.float32(0.02), np.int8(1)))


@pytest.mark.parametrize("xt", [np.uint8, np.int8], ids=lambda t: np.dtype(t).name)
def test_tables_as_lines(isa, xt):
    """8-bit inputs to int8 / uint8 codes: where a channel's 256 codes lie on a line the
    vector builds compute the line instead of looking up (three interleaved channels at once
    for HWC -> CHW). Slopes from flat to steeper than one code per input step, rising and
    falling, mostly saturated, offsets that put the codes anywhere in the range; widths around
    the 32-element chunks and a last chunk at the end of x; every code checked against the
    NumPy definition."""
    rng = np.random.default_rng(zlib.crc32(f"lines-{isa}-{np.dtype(xt).name}".encode()))
    layouts = [((1, 224, 224, 3), (0, 3, 1, 2)), ((3, 2, 33, 3), (0, 3, 1, 2)),
               ((2, 1, 95, 3), (0, 3, 1, 2)), ((1, 4, 64, 3), (3, 0, 1, 2)),
               ((2, 3, 70), None), ((1, 2, 31, 3), (0, 3, 1, 2))]
    for case in range(24):
        shape, perm = layouts[case % len(layouts)]
        c = shape[-1]
        x = rng.integers(-128 if xt == np.int8 else 0, 128 if xt == np.int8 else 256, shape)
        x = x.astype(xt)
        gain = np.float32(10.0 ** rng.uniform(-3, 0.7)) * (1 if case % 5 else -1)
        pre = [("div", 255.0),
               ("sub", (rng.random(c) * 0.6).astype(np.float32)),
               ("mul", (gain * (1 + rng.random(c) * 0.2)).astype(np.float32))]
        out = "int8" if case % 2 else "uint8"
        chan = len(shape) - 1 if perm is None else list(perm).index(len(shape) - 1)
        scale = np.float32(10.0 ** rng.uniform(-3.5, -1))
        zp = rng.integers(-128, 128) if out == "int8" else rng.integers(0, 256)
        zp = np.asarray(zp).astype(out)[()]
        kw = {}
        if case % 3 == 0:   # per channel
            scale = (scale * (1 + rng.random(c))).astype(np.float32)
            zp = np.full(c, zp)
            kw = dict(axis=chan)
        q = qsimd.Quantizer(scale, zp, pre=pre, perm=perm, **kw)
        want = expected(x, pre, perm, scale, zp, **kw)
        assert bits(q(x)) == bits(want), (case, shape, perm, out, gain, scale)


def test_many_per_channel_constants(isa):
    """More per-channel constants than the float path keeps repeated per block (8), on
    interleaved channels read in x's order, and on a row longer than a block."""
    rng = np.random.default_rng(5)
    names = ["add", "sub", "mul", "div"]
    for shape, perm in (((2, 5, 7, 3), (0, 3, 1, 2)), ((3, 300), None)):
        c = shape[-1]
        x = (rng.standard_normal(shape) * 20).astype(np.float32)
        pre = [(names[i % 4], (rng.random(c) + 0.5).astype(np.float32)) for i in range(11)]
        q = qsimd.Quantizer(np.float32(0.05), np.int8(3), pre=pre, perm=perm)
        assert bits(q(x)) == bits(expected(x, pre, perm, np.float32(0.05), np.int8(3)))


def test_no_chain_only_perm_and_rank0():
    x = np.arange(24, dtype=np.uint8).reshape(2, 3, 4)
    q = qsimd.Quantizer(np.float32(0.5), np.uint8(3), perm=(2, 0, 1))
    np.testing.assert_array_equal(q(x), expected(x, [], (2, 0, 1), np.float32(0.5), np.uint8(3)))
    q = qsimd.Quantizer(np.float32(0.5), pre=[("add", 1.0)])
    x0 = np.array(7, np.int16)
    np.testing.assert_array_equal(q(x0), expected(x0, [("add", 1.0)], None, np.float32(0.5), None))
    assert q(np.zeros((0, 3), np.uint8)).shape == (0, 3)


def test_out_threads_pickle():
    rng = np.random.default_rng(1)
    x = rng.integers(0, 256, (4, 8, 8, 3), dtype=np.uint8)
    pre = [("div", 255.0), ("sub", [0.4, 0.5, 0.6])]
    q = qsimd.Quantizer(np.float32(0.01), np.int8(0), pre=pre, perm=(0, 3, 1, 2),
                        num_threads=2)
    want = expected(x, pre, (0, 3, 1, 2), np.float32(0.01), np.int8(0))
    out = np.empty((4, 3, 8, 8), np.int8)
    assert q(x, out=out) is out
    np.testing.assert_array_equal(out, want)
    strided = np.empty((4, 3, 8, 16), np.int8)[..., ::2]
    assert q(x, out=strided) is strided
    np.testing.assert_array_equal(strided, want)
    with pytest.raises(ValueError, match="out"):
        q(x, out=np.empty((4, 8, 8, 3), np.int8))
    q2 = pickle.loads(pickle.dumps(q))
    np.testing.assert_array_equal(q2(x), want)
    assert "pre=" in repr(q) and "perm=(0, 3, 1, 2)" in repr(q)
    # packed output into out=
    qp = qsimd.Quantizer(np.float32(0.1), pre=pre, perm=(0, 3, 1, 2), output_dtype="int4",
                         packed=True)
    wantp = expected(x, pre, (0, 3, 1, 2), np.float32(0.1), None, output_dtype="int4",
                     packed=True)
    buf = np.empty(x.size // 2, np.uint8)
    r = qp(x, out=buf)
    assert r.data is buf and r.shape == (4, 3, 8, 8)
    assert bits(r) == bits(wantp)


def test_threads_share_one_quantizer():
    """16-bit tables are built on first use: many threads at once get the same results."""
    rng = np.random.default_rng(2)
    x = rng.integers(-32768, 32768, (2, 16, 16, 3)).astype(np.int16)
    pre = [("sub", [1.0, 2.0, 3.0]), ("div", 300.0)]
    q = qsimd.Quantizer(np.float32(0.5), np.int8(0), pre=pre, perm=(0, 3, 1, 2))
    want = expected(x, pre, (0, 3, 1, 2), np.float32(0.5), np.int8(0))
    results, errors = [], []

    def work():
        try:
            for _ in range(5):
                results.append(q(x))
        except Exception as e:   # noqa: BLE001 - reported below
            errors.append(e)
    threads = [threading.Thread(target=work) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(results) == 30
    for r in results:
        np.testing.assert_array_equal(r, want)


def test_errors():
    s = np.float32(0.1)
    with pytest.raises(ValueError, match=r"pre\[0\].*unknown operation 'pow'"):
        qsimd.Quantizer(s, pre=[("pow", 2.0)])
    with pytest.raises(TypeError, match=r"pre\[0\]"):
        qsimd.Quantizer(s, pre=[("add", "x")])
    with pytest.raises(TypeError, match=r"pre\[0\]"):
        qsimd.Quantizer(s, pre=[("add", True)])
    with pytest.raises(TypeError, match=r"pre\[1\]"):
        qsimd.Quantizer(s, pre=[("add", 1.0), "sub"])
    with pytest.raises(TypeError, match=r"pre\[0\].*str"):
        qsimd.Quantizer(s, pre=[(1, 1.0)])
    with pytest.raises(TypeError, match="pre must"):
        qsimd.Quantizer(s, pre=5)
    with pytest.raises(ValueError, match=r"pre\[0\].*1-D"):
        qsimd.Quantizer(s, pre=[("add", np.ones((2, 2)))])
    with pytest.raises(ValueError, match=r"pre\[0\].*1-D"):
        qsimd.Quantizer(s, pre=[("add", [])])
    with pytest.raises(ValueError, match=r"pre\[1\].*4 values.*3"):
        qsimd.Quantizer(s, pre=[("add", [1, 2, 3]), ("mul", [1, 2, 3, 4])])
    with pytest.raises(ValueError, match="perm must be a permutation"):
        qsimd.Quantizer(s, perm=(0, 0, 1))
    with pytest.raises(ValueError, match="perm must be a permutation"):
        qsimd.Quantizer(s, perm=(0, 3))
    with pytest.raises(TypeError, match="perm"):
        qsimd.Quantizer(s, perm=(0, 1.5))
    with pytest.raises(TypeError, match="perm"):
        qsimd.Quantizer(s, perm=3)
    with pytest.raises(TypeError, match="pre_axis"):
        qsimd.Quantizer(s, pre=[("add", 1.0)], pre_axis=1.5)
    q = qsimd.Quantizer(s, pre=[("sub", [1, 2, 3])], perm=(0, 3, 1, 2))
    with pytest.raises(ValueError, match="pre"):
        q(np.zeros((1, 2, 2, 4), np.uint8))            # 4 channels, 3 constants
    with pytest.raises(ValueError, match="perm"):
        q(np.zeros((2, 2, 3), np.uint8))               # rank 3, perm of 4
    with pytest.raises(TypeError, match="x must be"):
        q(np.zeros((1, 2, 2, 3), np.float64))
    with pytest.raises(TypeError, match="x must be"):
        q(np.zeros((1, 2, 2, 3), np.int32))
    q = qsimd.Quantizer(s, pre=[("sub", [1, 2, 3])], pre_axis=5)
    with pytest.raises(ValueError, match="pre_axis"):
        q(np.zeros((1, 2, 2, 3), np.uint8))
    # the quantization's own parameters against the permuted tensor
    q = qsimd.Quantizer(np.ones(3, np.float32), axis=1, perm=(0, 2, 1))
    with pytest.raises(ValueError, match="x of shape|entries"):
        q(np.zeros((1, 3, 4), np.uint8))
    np.testing.assert_array_equal(q(np.ones((1, 4, 3), np.uint8)), np.ones((1, 3, 4), np.uint8))


def _midpoints(rng, pre, scale, zp, n, y_signed):
    """float32 x whose chained value V = q + zp lies on or next to a half-integer: the
    inverse of the chain in float64 at k + 1/2, then 0 to 3 ulps either way."""
    k = rng.integers(-130 if y_signed else -2, 130 if y_signed else 258, n) + 0.5
    ch = rng.integers(0, 3, n)
    t = (k - np.asarray(zp, np.float64)[ch] if np.ndim(zp) else k - float(zp))
    t = t * (np.asarray(scale, np.float64)[ch] if np.ndim(scale) else float(scale))
    for name, c in reversed(pre):
        c = np.asarray(c, np.float64)
        c = c[ch] if c.ndim else c
        t = {"add": t - c, "sub": t + c, "mul": t / c, "div": t * c}[name]
    x = t.astype(np.float32)
    steps = rng.integers(-3, 4, n).astype(np.int64)
    bitsx = x.view(np.int32).astype(np.int64) + steps * np.where(x < 0, -1, 1)
    return np.clip(bitsx, -2**31, 2**31 - 1).astype(np.int32).view(np.float32), ch


@pytest.mark.parametrize("out", ["int8", "uint8"])
def test_float_frames(isa, out):
    """float32 NHWC frames to 8-bit NCHW codes (one pass over x on AVX2 and AVX-512: the chain
    and the quotient as one line where that provably rounds alike, the defined operations
    elsewhere): values on and next to the codes' rounding midpoints, huge, infinite, NaN,
    signed zeros and subnormals; chains the line cannot stand for (division by zero,
    overflowing constants) and none at all; per tensor and per channel; widths with and
    without a last partial chunk of 32 pixels."""
    rng = np.random.default_rng(zlib.crc32(f"float-frames-{isa}-{out}".encode()))
    y_signed = out == "int8"
    mean = np.array([0.485, 0.456, 0.406], np.float32)
    std = np.array([0.229, 0.224, 0.225], np.float32)
    chains = [[("sub", mean), ("div", std)],
              [("div", 255.0), ("sub", mean), ("div", std)],
              [("mul", np.float32(-3.5)), ("add", [1.0, -2.0, 0.25])],
              [],
              [("sub", 0.5), ("mul", [2.0, 1e-30, 4.0]), ("div", [1e-30, 1.0, 3.0])],
              [("div", [0.0, 1.0, 2.0]), ("sub", mean)],
              [("mul", 3e38), ("sub", 3e38)],
              [("add", 1e30), ("sub", 1e30)]]
    shapes = [(1, 16, 20, 3), (2, 7, 37, 3), (1, 1, 31, 3), (3, 4, 8, 3)]
    for ci, pre in enumerate(chains):
        shape = shapes[ci % len(shapes)]
        per_channel = ci % 2 == 1
        if per_channel:
            scale = (rng.random(3) * 0.03 + 0.005).astype(np.float32)
            zp = rng.integers(-128 if y_signed else 0, 128 if y_signed else 256, 3).astype(out)
            kw = dict(axis=1)
        else:
            scale = np.float32(rng.random() * 0.03 + 0.005)
            zp = np.asarray(rng.integers(-128 if y_signed else 0,
                                         128 if y_signed else 256)).astype(out)[()]
            kw = {}
        n = int(np.prod(shape))
        x = (rng.standard_normal(n) * 1.5 + 0.5).astype(np.float32)
        if pre:
            mid, ch = _midpoints(rng, pre, scale, zp, n // 3, y_signed)
            pos = rng.choice(n // 3, n // 3, replace=False) * 3 + ch
            x[pos] = mid
        special = np.array([np.inf, -np.inf, np.nan, -0.0, 0.0, 3e38, -3e38, 1e-45, -1e-40,
                            2.5e9, -2.5e9, 1e20], np.float32)
        x[rng.choice(n, 40, replace=False)] = rng.choice(special, 40)
        x = x.reshape(shape)
        q = qsimd.Quantizer(scale, zp, pre=pre, perm=(0, 3, 1, 2), **kw)
        want = expected(x, pre, (0, 3, 1, 2), scale, zp, **kw)
        assert bits(q(x)) == bits(want), (ci, pre, shape)


def test_float_frames_many_midpoints(isa):
    """A long run of values next to rounding midpoints through the common normalisation, so
    that the one-pass form falls back to the defined operations again and again."""
    rng = np.random.default_rng(17)
    mean = np.array([0.485, 0.456, 0.406], np.float32)
    std = np.array([0.229, 0.224, 0.225], np.float32)
    pre = [("sub", mean), ("div", std)]
    for scale, zp, kw in ((np.float32(0.0186), np.int8(-2), {}),
                          (np.array([0.02, 0.017, 0.019], np.float32),
                           np.array([3, 0, 250], np.uint8), dict(axis=1))):
        y_signed = np.asarray(zp).dtype == np.int8
        n = 64 * 96 * 3
        x = rng.random(n).astype(np.float32)
        mid, ch = _midpoints(rng, pre, scale, zp, n // 3, y_signed)
        x[np.arange(n // 3) * 3 + ch] = mid
        x = x.reshape(1, 64, 96, 3)
        q = qsimd.Quantizer(scale, zp, pre=pre, perm=(0, 3, 1, 2), **kw)
        assert bits(q(x)) == bits(expected(x, pre, (0, 3, 1, 2), scale, zp, **kw))
