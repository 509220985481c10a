"""Prepared operators (qsimd.Quantizer / qsimd.Dequantizer): a call equals onnx.reference on
randomized per-tensor / per-axis / blocked cases on every ISA; pickling, threads, errors."""
import pickle
import threading

import ml_dtypes
import numpy as np
import pytest

import qsimd
from qtest_util import assert_same, onnx_code, ref_dequantize, ref_quantize

OUT = {"uint8": np.uint8, "int8": np.int8, "int16": np.int16, "uint4": ml_dtypes.uint4,
       "int4": ml_dtypes.int4, "float8e4m3fn": ml_dtypes.float8_e4m3fn}


def _case(rng, layout, shape, out_name):
    """x, scale, zero point, axis, block size for one randomized layout."""
    x = (rng.standard_normal(shape) * 4).astype(np.float32)
    x.reshape(-1)[5:: 41] = 1e4   # saturates (the reference is defined there)
    dt = np.dtype(OUT[out_name])
    axis, block = 1, 0
    if layout == "tensor":
        pshape = ()
    elif layout == "axis":
        axis = int(rng.integers(-len(shape), len(shape)))
        pshape = (shape[axis],)
    else:
        axis = -1
        block = int(rng.integers(1, shape[-1] + 1))
        pshape = shape[:-1] + (-(-shape[-1] // block),)
    scale = (rng.random(pshape) * 0.2 + 0.01).astype(np.float32)
    zp = None
    if out_name != "float8e4m3fn":
        info = ml_dtypes.iinfo(dt)
        zp = rng.integers(info.min, info.max + 1, pshape).astype(dt)
    return x, scale, zp, axis, block


@pytest.mark.parametrize("layout", ["tensor", "axis", "blocked"])
@pytest.mark.parametrize("out_name", list(OUT))
def test_quantizer_equals_reference(isa, layout, out_name):
    rng = np.random.default_rng(hash((layout, out_name)) % 2**32)
    for shape in [(7,), (3, 5, 33), (2, 64), (4, 3, 8)]:
        x, scale, zp, axis, block = _case(rng, layout, shape, out_name)
        od = np.dtype(OUT[out_name])
        q = qsimd.Quantizer(scale, zp, axis=axis, block_size=block, output_dtype=od)
        exp = ref_quantize(x, scale, zp, axis=axis, block_size=block,
                           output_dtype=onnx_code(od))
        assert_same(q(x), exp, f"{layout} {out_name} {shape}")
        out = np.empty(x.shape, od)
        assert q(x, out=out) is out
        assert_same(out, exp)
        assert_same(q(x.astype(np.float32, order="F")), exp)   # general path, same bits
        # dequantize back, per the reference
        dq = qsimd.Dequantizer(scale, zp, axis=axis, block_size=block)
        y = exp
        dexp = ref_dequantize(y, scale, zp, axis=axis, block_size=block)
        assert_same(dq(y), dexp)
        f = np.empty(x.shape, np.float32)
        assert dq(y, out=f) is f
        assert_same(f, dexp)


def test_options_equal_function(isa):
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((4, 8)) * 3).astype(np.float16)
    s = np.float16(0.125)
    for kw in [dict(output_dtype="float8e5m2", saturate=False), dict(precision="float32"),
               dict(output_dtype="int4", packed=True), dict(output_dtype="int32")]:
        q = qsimd.Quantizer(s, **kw)
        assert_same(q(x), qsimd.quantize_linear(x, s, **kw))
    dq = qsimd.Dequantizer(s, output_dtype="float32")
    y = rng.integers(0, 255, 10).astype(np.uint8)
    assert_same(dq(y), ref_dequantize(y, s, output_dtype=onnx_code(np.float32)))
    pt = qsimd.quantize_linear(x, s, output_dtype="int4", packed=True)
    assert_same(qsimd.Dequantizer(s)(pt), qsimd.dequantize_linear(pt, s))


@pytest.mark.parametrize("xdt", [np.float32, np.float16, ml_dtypes.bfloat16, np.int32])
def test_entries_converted_once_equal_reference(isa, xdt):
    """A prepared object converts its entries once, as float32 x reads them, and runs of other
    x types convert their own when they read other forms (float16 x with a float16 scale:
    float16 quotients; int32 x: float64 ones). Blocked along the last axis with more entries
    than a call converts at a time (1024), per-axis on the last axis, every x type, against
    onnx.reference."""
    rng = np.random.default_rng(11)
    x = (rng.standard_normal((6, 2 * 1030)) * 40).astype(np.float32).astype(xdt)
    for stype in (np.float32, np.float16):
        for axis, block in ((-1, 2), (-1, 0), (0, 0)):
            pshape = (x.shape[axis],) if not block else (6, 1030)
            s = (rng.random(pshape) * 0.5 + 0.01).astype(stype)
            z = rng.integers(-20, 20, pshape).astype(np.int8)
            for prec in (None, "float16"):
                kw = dict(axis=axis, block_size=block)
                q = qsimd.Quantizer(s, z, precision=prec, **kw)
                want = ref_quantize(x, s, z, precision=None if prec is None
                                    else onnx_code(np.float16), **kw)
                assert_same(q(x), want, f"{xdt} {stype} {axis} {block} {prec}")
                dq = qsimd.Dequantizer(s, z, **kw)
                assert_same(dq(want), ref_dequantize(want, s, z, **kw))
    # int32 codes, an int32 zero point (its 64-bit form), float8 codes (no zero point)
    s = (rng.random(1030) * 0.5 + 0.01).astype(np.float32)
    c = rng.integers(-2**31, 2**31, (3, 1030)).astype(np.int32)
    z = rng.integers(-2**31, 2**31, 1030).astype(np.int32)
    # docs/CONTRACT.md: x - zp exact, rounded once to float32, times the scale
    want = (c.astype(np.float64) - z).astype(np.float32) * s
    assert_same(qsimd.Dequantizer(s, z, axis=1)(c), want)
    f8 = qsimd.quantize_linear(x.astype(np.float32)[:, :1030], s, axis=1,
                               output_dtype="float8e4m3fn")
    assert_same(qsimd.Dequantizer(s, axis=1)(f8), ref_dequantize(f8, s, axis=1))


def test_entries_over_the_kept_bound():
    """More entries than a prepared object keeps converted (16 MiB of them): runs convert
    per call, as the function does."""
    n = (16 << 20) // 8 + 1   # float32 reciprocals and int32 zero points: 8 bytes an entry
    rng = np.random.default_rng(12)
    x = rng.standard_normal(n).astype(np.float32)
    s = (rng.random(n) * 0.5 + 0.01).astype(np.float32)
    z = rng.integers(0, 256, n).astype(np.uint8)
    q = qsimd.Quantizer(s, z, axis=0)
    got = q(x)
    want = np.clip(np.rint(x.astype(np.float64) / s) + z, 0, 255)   # exact: |x / s| < 2^20
    assert np.array_equal(got, want.astype(np.uint8))
    assert_same(got, qsimd.quantize_linear(x, s, z, axis=0))


def test_nan_follows_contract():
    # docs/CONTRACT.md: NaN -> the output type's minimum for integer outputs, NaN for float8
    x = np.array([np.nan, 1.0], np.float32)
    assert qsimd.Quantizer(0.1, np.int8(5))(x).tolist() == [-128, 15]
    assert qsimd.Quantizer(np.array([0.1, 0.5], np.float32), np.uint8([3, 4]),
                           axis=0)(x).tolist() == [0, 6]
    assert np.isnan(qsimd.Quantizer(0.5, output_dtype="float8e4m3fn")(x)[0].astype(np.float32))


def test_prepared_copies_parameters():
    s = np.array([0.5, 0.25], np.float32)
    q = qsimd.Quantizer(s, axis=0)
    s[:] = 100   # the prepared copy is unaffected
    x = np.array([[1.0], [1.0]], np.float32)
    assert q(x).tolist() == [[2], [4]]
    assert not q.scale.flags.writeable


def test_pickle_and_repr():
    s = np.array([0.1, 0.2, 0.3], np.float32)
    z = np.array([1, 2, 3], np.int8)
    q = qsimd.Quantizer(s, z, axis=-1, saturate=True)
    q2 = pickle.loads(pickle.dumps(q))
    x = np.linspace(-5, 5, 12, dtype=np.float32).reshape(4, 3)
    assert_same(q2(x), q(x))
    assert repr(q2) == repr(q)
    assert "axis=-1" in repr(q) and "int8" in repr(q)
    assert repr(qsimd.Quantizer(0.05, np.uint8(128))) == \
        "Quantizer(scale=float32(0.05), zero_point=uint8(128), output_dtype=uint8)"
    dq = qsimd.Dequantizer(np.float16(0.5), np.uint8(3), output_dtype="float32")
    dq2 = pickle.loads(pickle.dumps(dq))
    y = np.arange(10, dtype=np.uint8)
    assert_same(dq2(y), dq(y))
    assert repr(dq) == repr(dq2)
    assert qsimd.Quantizer(0.5, output_dtype="int4", packed=True).output_dtype == ml_dtypes.int4


def test_threads():
    rng = np.random.default_rng(5)
    s = (rng.random(64) + 0.01).astype(np.float32)
    q = qsimd.Quantizer(s, axis=1, output_dtype="int8")
    xs = [rng.standard_normal((16, 64, 8)).astype(np.float32) for _ in range(8)]
    want = [qsimd.quantize_linear(x, s, axis=1, output_dtype="int8") for x in xs]
    errors = []

    def work(i):
        out = np.empty(xs[i].shape, np.int8)
        for _ in range(200):
            if not np.array_equal(q(xs[i], out=out), want[i]) or \
                    not np.array_equal(q(xs[i]), want[i]):
                errors.append(i)
                return

    ts = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors


def test_errors():
    s = np.array([0.1, 0.2, 0.3], np.float32)
    q = qsimd.Quantizer(s, axis=1)
    with pytest.raises(ValueError, match=r"^x of shape \(2, 4\) does not fit this Quantizer's "
                                         r"parameters: scale has 3 entries but x.shape\[1\] is 4"):
        q(np.zeros((2, 4), np.float32))
    with pytest.raises(ValueError, match=r"^x of shape \(3,\) does not fit.*axis 1 is out"):
        q(np.zeros(3, np.float32))   # axis 1 out of range for 1-D x
    with pytest.raises(TypeError, match="x must be"):
        q(np.zeros((2, 3), np.float64))
    with pytest.raises(TypeError, match="x must be"):
        q(np.zeros((2, 3), np.uint8))
    with pytest.raises(ValueError, match="out must have shape"):
        q(np.zeros((2, 3), np.float32), out=np.empty((3, 2), np.uint8))
    with pytest.raises(ValueError, match="out must have dtype"):
        q(np.zeros((2, 3), np.float32), out=np.empty((2, 3), np.int8))
    with pytest.raises(TypeError, match="missing required argument 'x'"):
        q()
    with pytest.raises(TypeError, match="unexpected"):
        q(np.zeros((2, 3), np.float32), bogus=1)
    with pytest.raises(TypeError, match="at most 2"):
        q(1, 2, 3)
    # blocked: a mismatch only C can see is reported against x
    qb = qsimd.Quantizer(np.ones((2, 2), np.float32), axis=-1, block_size=4)
    with pytest.raises(ValueError, match="x of shape"):
        qb(np.zeros((2, 9), np.float32))
    # construction-time checks
    with pytest.raises(TypeError, match="scale must be"):
        qsimd.Quantizer(np.float64(0.1) * np.ones(2))
    with pytest.raises(ValueError, match="zero_point has type"):
        qsimd.Quantizer(0.1, np.int8(0), output_dtype="uint8")
    with pytest.raises(ValueError, match="zero_point must have the shape of scale"):
        qsimd.Quantizer(s, np.zeros(2, np.uint8))
    with pytest.raises(ValueError, match="block_size must be >= 0"):
        qsimd.Quantizer(s, block_size=-1)
    with pytest.raises(ValueError, match="1-D for per-axis"):
        qsimd.Quantizer(np.ones((2, 2), np.float32))
    # a Python zero point takes each x's type, as in dequantize_linear
    dq3 = qsimd.Dequantizer(0.1, 3)
    for x in (np.arange(6, dtype=np.uint8), np.arange(-3, 3, dtype=np.int8), [1, 2], 5):
        assert_same(dq3(x), qsimd.dequantize_linear(x, 0.1, 3), repr(x))
    with pytest.raises(ValueError, match="zero_point values must lie in"):
        qsimd.Dequantizer(0.1, 300)(np.zeros(2, np.uint8))
    with pytest.raises(ValueError, match="zero_point values must lie in"):
        qsimd.dequantize_linear(np.zeros(2, np.uint8), 0.1, 300)
    assert repr(dq3) == "Dequantizer(scale=float32(0.1), zero_point=3, output_dtype=float32)"
    assert_same(pickle.loads(pickle.dumps(dq3))(np.arange(4, dtype=np.int16)),
                qsimd.dequantize_linear(np.arange(4, dtype=np.int16), 0.1, 3), "pickled")
    # a NumPy scalar zero point gives Python data x its type in both
    dq128 = qsimd.Dequantizer(0.5, np.uint8(128))
    assert_same(dq128(5), qsimd.dequantize_linear(5, 0.5, np.uint8(128)), "scalar x")
    dq = qsimd.Dequantizer(0.1, np.uint8(3))
    with pytest.raises(ValueError, match="zero_point has type uint8 but x has type int8"):
        dq(np.zeros(3, np.int8))
    dqa = qsimd.Dequantizer(s, axis=0)
    with pytest.raises(ValueError, match=r"^x of shape \(4,\) does not fit this "
                                         r"Dequantizer's parameters: scale has 3 entries"):
        dqa(np.zeros(4, np.uint8))
