"""Regression tests for what the API fuzzer (tests/qfuzz.py) found: each input here once
escaped as the wrong exception type or was refused although valid."""
import ml_dtypes
import numpy as np
import pytest

import qsimd

Q, D = qsimd.quantize_linear, qsimd.dequantize_linear
F = np.ones((2, 3), np.float32)
S3 = np.ones(3, np.float32)


@pytest.mark.parametrize("value", [2**63, -2**63 - 1, 2**64, 2**100, -2**100])
def test_attributes_beyond_int64(value):
    # used to escape from the C conversion as OverflowError
    with pytest.raises(ValueError, match="axis .* out of range"):
        Q(F, S3, axis=value)
    with pytest.raises(ValueError, match="axis .* out of range"):
        D(np.zeros((2, 3), np.uint8), S3, axis=value)
    with pytest.raises(ValueError, match="block_size .* out of range"):
        Q(F, np.ones((2, 1), np.float32), block_size=value)
    with pytest.raises(ValueError, match="block_size .* out of range"):
        D(qsimd.PackedTensor(b"", "uint2", (0, 3)), np.ones(3, np.float16), block_size=value)


def test_attributes_at_int64_limits_reach_the_c_checks():
    with pytest.raises(ValueError, match="axis -9223372036854775808 is out of range"):
        Q(F, S3, axis=-2**63)
    with pytest.raises(ValueError, match="block_size"):
        Q(F, np.ones((2, 2), np.float32), block_size=2**63 - 1)
    # one scale element: per-tensor whatever the axis says (ONNX), even at the limit
    assert Q(F, np.float32(1), axis=2**63 - 1).tolist() == [[1] * 3] * 2


@pytest.mark.parametrize("zp", [-129, 300, [0, 1], 2**40])
@pytest.mark.parametrize("spec", ["float32", 1, ml_dtypes.float8_e8m0fnu, 24])
def test_python_zero_point_with_unsupported_output_type(zp, spec):
    # used to raise KeyError while converting the zero point to the output type
    with pytest.raises(TypeError, match="output type .* is not supported by quantize_linear"):
        Q(np.ones(2, np.float32), 1.0, zp, output_dtype=spec)


def test_empty_python_lists_are_integers():
    # NumPy types [] as float64; as a zero point or a dequantize x it holds no floats
    got = Q(np.zeros((0,), np.float32), np.zeros(0, np.float32), [], axis=0,
            output_dtype="int4")
    assert got.shape == (0,) and got.dtype == ml_dtypes.int4
    got = Q(np.zeros((2, 0), np.float32), np.zeros((2, 0), np.float32), [[], []], axis=1,
            block_size=1, output_dtype="uint2")
    assert got.shape == (2, 0)
    got = D([], np.float32(2))
    assert got.shape == (0,) and got.dtype == np.float32
    with pytest.raises(TypeError, match="zero_point must hold integers"):
        Q(np.zeros(1, np.float32), np.ones(1, np.float32), [1.5], axis=0)


@pytest.mark.parametrize("name", ["scalar\x00", "a\x00b", "\udcff", "sca\u0142ar"])
def test_set_isa_names_that_c_cannot_see(name):
    # used to be cut at the NUL ("unknown instruction set 'a'") or fail to encode
    before = qsimd.get_isa()
    with pytest.raises(ValueError, match="unknown instruction set") as e:
        qsimd.set_isa(name)
    assert repr(name) in str(e.value)
    assert qsimd.get_isa() == before


@pytest.mark.parametrize("fn,x", [(Q, np.ones((2, 3), np.float32)), (D, np.zeros((2, 3), np.uint8))])
def test_absurd_broadcast_parameters_are_refused_before_any_copy(fn, x):
    # used to materialise the view (4 GiB and ~10 s for 2**30 float32) before the shape check
    import time
    huge_s = np.broadcast_to(np.float32(1), (2**31,))
    huge_z = np.broadcast_to(np.zeros((), x.dtype if fn is D else np.uint8), (2**40,))
    t = time.perf_counter()
    with pytest.raises(ValueError, match="scale has 2147483648 elements, more than any layout"):
        fn(x, huge_s, axis=0)
    with pytest.raises(ValueError, match="zero_point has 1099511627776 elements"):
        fn(x, np.ones(2, np.float32), huge_z, axis=0)
    assert time.perf_counter() - t < 1.0
    # the limit is the largest legitimate layout: per-axis on the longest axis still works
    assert fn(x, np.ones(3, np.float32), axis=1).shape == (2, 3)
    assert fn(x[:, :0], np.ones(2, np.float32), axis=0).shape == (2, 0)
