"""Every error path: the right exception type, a message naming the argument, never a crash
and never a silent result."""
import ml_dtypes
import numpy as np
import pytest
from onnx import TensorProto

import qsimd
from qtest_util import assert_same, ref_quantize

Q, D = qsimd.quantize_linear, qsimd.dequantize_linear
F = np.ones((2, 3), np.float32)
U8 = np.zeros((2, 3), np.uint8)
S3 = np.ones(3, np.float32)


def _raises(exc, match, fn, *args, **kw):
    with pytest.raises(exc, match=match):
        fn(*args, **kw)


# ------------------------------------------------------------------ TypeError: types
@pytest.mark.parametrize("x", [
    np.array([1, None], object), np.ones(2, np.complex64), np.ones(2, bool), np.ones(2),
    np.ones(2, np.int64), np.ones(2, np.uint8), np.ones(2, ml_dtypes.float8_e4m3fn),
    np.array(["a"]),
], ids=lambda a: str(a.dtype))
def test_quantize_x_type(x):
    _raises(TypeError, "^x ", Q, x, 1.0)


@pytest.mark.parametrize("scale", [
    np.ones(1), np.ones(1, np.complex64), np.ones(1, bool), np.ones(1, np.int64),
    np.array([1, None], object), np.ones(1, np.uint8),
], ids=lambda a: str(a.dtype))
def test_scale_type(scale):
    _raises(TypeError, "^scale ", Q, F, scale)
    _raises(TypeError, "^scale ", D, U8, scale)


def test_dequantize_int32_scale_array():
    # ONNX DequantizeLinear scales are float32 / float16 / bfloat16 only
    _raises(TypeError, "scale", D, U8, np.ones(1, np.int32))


@pytest.mark.parametrize("x", [
    np.ones(2, np.float32), np.ones(2), np.ones(2, bool), np.ones(2, np.int64),
    np.ones(2, ml_dtypes.float8_e8m0fnu), np.ones(2, np.uint64), np.array([1, None], object),
], ids=lambda a: str(a.dtype))
def test_dequantize_x_type(x):
    _raises(TypeError, "^x ", D, x, 1.0)


@pytest.mark.parametrize("spec", [
    "int3", "foo", 999, -1, True, np.float64, "float64", 11, "complex64", 14, object,
])
def test_bad_output_dtype_names(spec):
    _raises(TypeError, "output_dtype", Q, F, 1.0, output_dtype=spec)
    _raises(TypeError, "output_dtype", D, U8, 1.0, output_dtype=spec)


@pytest.mark.parametrize("spec", [
    TensorProto.FLOAT8E8M0, ml_dtypes.float8_e8m0fnu, np.float32, "float", TensorProto.FLOAT,
])
def test_unsupported_quantize_output(spec):
    # e8m0 is a scale type only; float32 is not a quantized type
    _raises(TypeError, "output type", Q, F, 1.0, output_dtype=spec)


@pytest.mark.parametrize("spec", ["int8", np.uint8, ml_dtypes.int4, TensorProto.INT32,
                                  ml_dtypes.float8_e4m3fn, "float4e2m1"])
def test_unsupported_dequantize_output(spec):
    _raises(TypeError, "output_dtype", D, U8, 1.0, output_dtype=spec)


@pytest.mark.parametrize("prec", ["int8", np.float64, 11, "float8e4m3fn", TensorProto.INT32,
                                  True, "nope", 999])
def test_unsupported_precision(prec):
    _raises(TypeError, "precision", Q, F, 1.0, precision=prec)


@pytest.mark.parametrize("arg", ["axis", "block_size"])
@pytest.mark.parametrize("value", [1.0, "1", None, True, np.float32(1), [1]])
def test_non_integer_axis_and_block_size(arg, value):
    _raises(TypeError, arg, Q, F, 1.0, **{arg: value})
    _raises(TypeError, arg, D, U8, 1.0, **{arg: value})


def test_numpy_integer_axis_is_fine(isa):
    got = Q(F, S3, axis=np.int64(-1))
    assert_same(got, ref_quantize(F, S3, axis=-1))


@pytest.mark.parametrize("arg", ["saturate", "packed"])
@pytest.mark.parametrize("value", [2, "yes", None, 0.5])
def test_bad_flags(arg, value):
    _raises(ValueError, arg, Q, F, 1.0, output_dtype="int4", **{arg: value})


# ------------------------------------------------------------------ ValueError: shapes
@pytest.mark.parametrize("fn,x", [(Q, F), (D, U8)], ids=["Q", "DQ"])
@pytest.mark.parametrize("axis", [2, -3, 7, -100])
def test_axis_out_of_range(fn, x, axis):
    _raises(ValueError, "axis", fn, x, S3, axis=axis)


@pytest.mark.parametrize("fn,x", [(Q, np.ones(3, np.float32)), (D, np.zeros(3, np.uint8))],
                         ids=["Q", "DQ"])
def test_rank1_default_axis(fn, x):
    # per-axis with the default axis=1 on a 1-D x (ONNX: "axis is out of boundary")
    _raises(ValueError, "axis", fn, x, S3)


@pytest.mark.parametrize("fn,x", [(Q, F), (D, U8)], ids=["Q", "DQ"])
def test_per_axis_scale_shape(fn, x):
    _raises(ValueError, "scale", fn, x, np.ones(2, np.float32))          # length mismatch
    _raises(ValueError, "scale", fn, x, np.ones(4, np.float32), axis=1)
    _raises(ValueError, "scale", fn, x, np.ones((2, 3), np.float32))     # 2-D, block_size 0
    _raises(ValueError, "scale", fn, x, np.ones((1, 3), np.float32))
    _raises(ValueError, "scale", fn, x[0, 0], S3)                         # 0-d x


@pytest.mark.parametrize("fn,dt", [(Q, np.float32), (D, np.uint8)], ids=["Q", "DQ"])
def test_blocked_shapes(fn, dt):
    x = np.ones((2, 4), dt)
    _raises(ValueError, "scale", fn, x, np.ones(2, np.float32), block_size=2)      # rank
    _raises(ValueError, "scale", fn, x, np.ones((3, 2), np.float32), block_size=2)  # other dim
    _raises(ValueError, "scale", fn, x, np.ones((2, 2, 1), np.float32), block_size=2)


@pytest.mark.parametrize("fn,dt", [(Q, np.float32), (D, np.uint8)], ids=["Q", "DQ"])
@pytest.mark.parametrize("d,s", [(4, 2), (5, 2), (7, 3), (9, 4), (6, 6), (10, 3)])
def test_blocked_block_size_range(isa, fn, dt, d, s):
    """Accepted exactly on the spec's range [ceil(D/S), ceil(D/(S-1)) - 1]."""
    lo = -(-d // s)
    hi = -(-d // (s - 1)) - 1 if s > 1 else 10**6
    x = np.arange(3 * d, dtype=dt).reshape(3, d)
    scale = np.linspace(0.5, 2, 3 * s, dtype=np.float32).reshape(3, s)
    for b in range(1, d + 3):
        if lo <= b <= hi:
            assert fn(x, scale, axis=1, block_size=b).shape == x.shape
        else:
            _raises(ValueError, "block_size", fn, x, scale, axis=1, block_size=b)


def test_blocked_reference_is_laxer():
    """D = 4, S = 2, B = 4: the reference silently uses the first column; qsimd refuses."""
    x = np.array([[1.0, 2.0, 3.0, 4.0]], np.float32)
    scale = np.array([[1.0, 0.5]], np.float32)
    assert ref_quantize(x, scale, axis=1, block_size=4).tolist() == [[1, 2, 3, 4]]
    _raises(ValueError, "block_size", Q, x, scale, axis=1, block_size=4)


@pytest.mark.parametrize("fn,x", [(Q, F), (D, U8)], ids=["Q", "DQ"])
def test_negative_block_size(fn, x):
    _raises(ValueError, "block_size", fn, x, 1.0, block_size=-1)   # even per-tensor
    _raises(ValueError, "block_size", fn, x, np.ones((2, 2), np.float32), block_size=-2)


def test_zero_point_shape():
    for zp in (np.zeros(2, np.uint8), np.zeros((1, 3), np.uint8), np.zeros((3, 1), np.uint8),
               np.zeros(4, np.uint8)):
        _raises(ValueError, "zero_point", Q, F, S3, zp)
        _raises(ValueError, "zero_point", D, U8, S3, zp)
    _raises(ValueError, "zero_point", Q, F, 1.0, np.zeros(3, np.uint8))   # per-tensor scale


def test_one_element_zero_point_shapes_are_fine(isa):
    # scale and zero point of one element each are per-tensor whatever their ranks
    got = Q(F, np.ones((1,), np.float32), np.zeros((), np.uint8))
    assert got.tolist() == [[1, 1, 1]] * 2


def test_zero_point_type():
    _raises(ValueError, "zero_point", Q, F, 1.0, np.uint8(0), output_dtype="int8")
    _raises(ValueError, "zero_point", Q, F, 1.0, np.zeros((), ml_dtypes.int4),
            output_dtype=ml_dtypes.uint4)
    _raises(ValueError, "zero_point", D, U8, 1.0, np.int8(0))
    _raises(ValueError, "zero_point", D, np.zeros(3, ml_dtypes.int4), 1.0,
            np.zeros((), ml_dtypes.uint4))
    _raises(TypeError, "zero_point", Q, F, 1.0, np.float32(1))
    _raises(TypeError, "zero_point", Q, F, 1.0, 1.5)
    _raises(TypeError, "output type float8_e8m0fnu", Q, F, 1.0,
            np.zeros((), ml_dtypes.float8_e8m0fnu))


@pytest.mark.parametrize("out,bad", [("uint8", [256, -1]), ("int8", [128, -129]),
                                     ("uint16", [65536, -1]), ("int16", [32768, -32769]),
                                     ("uint4", [16, -1]), ("int4", [8, -9]), ("uint2", [4, -1]),
                                     ("int2", [2, -3])])
def test_python_zero_point_range(isa, out, bad):
    for v in bad:
        _raises(ValueError, "zero_point", Q, F, 1.0, v, output_dtype=out)
        _raises(ValueError, "zero_point", Q, F, S3, [0, v, 0], output_dtype=out)
    edge = bad[0] - 1   # the largest valid value is accepted
    assert Q(np.zeros(1, np.float32), 1.0, edge, output_dtype=out).astype(int).tolist() == [edge]


def test_python_zero_point_defaults():
    _raises(ValueError, "zero_point", Q, F, 1.0, 300)      # default output uint8
    _raises(ValueError, "zero_point", D, U8, 1.0, 300)     # x's type
    _raises(ValueError, "^x ", D, [2**40], 1.0)           # Python ints become int32


# ------------------------------------------------------------------ out=
@pytest.mark.parametrize("fn,x,dt", [(Q, F, np.uint8), (D, U8, np.float32)], ids=["Q", "DQ"])
def test_bad_out(fn, x, dt):
    _raises(ValueError, "out", fn, x, 1.0, out=np.empty((3, 2), dt))
    _raises(ValueError, "out", fn, x, 1.0, out=np.empty((6,), dt))
    _raises(ValueError, "out", fn, x, 1.0, out=np.empty((2, 3), np.int16))
    ro = np.empty((2, 3), dt)
    ro.flags.writeable = False
    _raises(ValueError, "out", fn, x, 1.0, out=ro)
    _raises(ValueError, "out", fn, x, 1.0, out=np.broadcast_to(np.empty(3, dt), (2, 3)))
    _raises(TypeError, "out", fn, x, 1.0, out=[0] * 6)
    # a buffer is a valid out= when it fits (tests/test_interop.py); 24 bytes in a row do not
    _raises(ValueError, "out", fn, x, 1.0, out=memoryview(bytearray(24)))
    _raises(ValueError, "out", fn, x, 1.0, out=b"\0" * 6)   # read-only
    _raises(TypeError, "out", fn, x, 1.0, out="abcdef")


def test_bad_packed_out():
    x = np.ones(5, np.float32)
    _raises(ValueError, "out", Q, x, 1.0, output_dtype="int4", packed=True,
            out=np.empty(5, np.uint8))
    _raises(ValueError, "out", Q, x, 1.0, output_dtype="int4", packed=True,
            out=np.empty(3, np.int8))
    _raises(ValueError, "out", Q, x, 1.0, output_dtype="int4", packed=False,
            out=np.empty(3, np.uint8))


@pytest.mark.parametrize("out", ["uint8", "int8", "uint16", "int16"])
def test_packed_needs_subbyte(out):
    _raises(ValueError, "packed", Q, F, 1.0, output_dtype=out, packed=True)


# ------------------------------------------------------------------ DynamicQuantizeLinear
@pytest.mark.parametrize("shape", [(0,), (3, 0), (0, 0, 2)])
def test_dynamic_empty(shape):
    _raises(ValueError, "empty", qsimd.dynamic_quantize_linear, np.zeros(shape, np.float32))


@pytest.mark.parametrize("x", [np.zeros(3, np.float16), np.zeros(3), np.zeros(3, np.int32),
                               np.zeros(3, ml_dtypes.bfloat16), np.zeros(3, np.uint8)],
                         ids=lambda a: str(a.dtype))
def test_dynamic_types(x):
    _raises(TypeError, "^x must be float32, got", qsimd.dynamic_quantize_linear, x)


# ------------------------------------------------------------------ pack / unpack
def test_unpack_errors():
    _raises(ValueError, "data", qsimd.unpack, b"\x00\x00", "int4", (5,))   # needs 3
    _raises(ValueError, "data", qsimd.unpack, b"\x00", "int2", (5,))       # needs 2
    _raises(ValueError, "data", qsimd.unpack, b"\x00", "uint4", (0,))      # needs 0
    _raises(TypeError, "dtype", qsimd.unpack, b"\x00", "int8", (1,))
    _raises(TypeError, "dtype", qsimd.unpack, b"\x00", np.float32, (1,))
    _raises(TypeError, "dtype", qsimd.unpack, b"\x00", "bogus", (1,))
    _raises(ValueError, "shape", qsimd.unpack, b"", "int4", (-1,))
    _raises(TypeError, "shape", qsimd.unpack, b"", "int4", "ab")
    _raises(TypeError, "shape", qsimd.unpack, b"", "int4", (1.5,))
    _raises(TypeError, "data", qsimd.unpack, np.zeros(1, np.float32), "int4", (2,))


def test_pack_errors():
    _raises(TypeError, "^a ", qsimd.pack, [1, 2])
    _raises(TypeError, "^a ", qsimd.pack, np.zeros(2, np.uint8))
    _raises(TypeError, "^a ", qsimd.pack, np.zeros(2, np.float32))


# ------------------------------------------------------------------ set_isa
def test_set_isa_errors():
    before = qsimd.get_isa()
    _raises(ValueError, "nope", qsimd.set_isa, "nope")
    _raises(TypeError, "name", qsimd.set_isa, 3)
    for name in {"scalar", "sse41", "avx2", "avx512", "neon"} - set(qsimd.available_isas()):
        _raises(ValueError, name, qsimd.set_isa, name)
    assert qsimd.get_isa() == before   # a refused request changes nothing


def test_isa_queries():
    avail = qsimd.available_isas()
    assert avail[0] == "scalar" and len(set(avail)) == len(avail)
    assert isinstance(qsimd.cpu_features(), dict)
    assert all(isinstance(v, bool) for v in qsimd.cpu_features().values())
    previous = qsimd.get_isa()
    try:
        for name in avail:
            qsimd.set_isa(name)
            assert qsimd.get_isa() == name
        qsimd.set_isa(None)
        assert qsimd.get_isa() == avail[-1]   # automatic = the best available
        qsimd.set_isa("auto")
        assert qsimd.get_isa() == avail[-1]
    finally:
        qsimd.set_isa(previous)


def test_rank_limit():
    try:
        x = np.zeros((1,) * 33, np.float32)
    except ValueError:
        pytest.skip("NumPy before 2.0 has no arrays of rank 33")
    _raises(ValueError, "rank", Q, x, 1.0)
    _raises(ValueError, "rank", D, x.astype(np.uint8), 1.0)
    _raises(ValueError, "rank", qsimd.dynamic_quantize_linear, x)


def test_x_type_reported_before_the_result_size():
    """x of a type QuantizeLinear does not take, in a shape whose int16 result numpy cannot
    allocate (0 elements, 2^63 bytes by its dims): the type error, from the plain function and
    a prepared Quantizer alike (the fast paths allocate before C checks x)."""
    x = np.lib.stride_tricks.as_strided(np.zeros(1, np.uint8), shape=(0, 2**62), strides=(0, 0))
    with pytest.raises(TypeError, match="^x must be float32, float16, bfloat16 or int32, got uint8"):
        qsimd.quantize_linear(x, np.float32(1), None, output_dtype=np.int16)
    with pytest.raises(TypeError, match="^x must be float32, float16, bfloat16 or int32, got uint8"):
        qsimd.Quantizer(np.float32(1), output_dtype=np.int16)(x)
