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


def test_extended_dequantize_scale_type():
    # the result has the scale's type, as ONNX DequantizeLinear (Quark: always float32)
    q = np.array([1, -2, 3], np.int32)
    assert quark.extended_dequantize_linear(q, np.float32(0.5)).dtype == np.float32
    got = quark.extended_dequantize_linear(q, np.float16(0.5))
    assert got.dtype == np.float16 and got.tolist() == [0.5, -1.0, 1.5]
    got = quark.extended_dequantize_linear(q.astype(np.float16), np.float32(0.5),
                                           np.float16(1))
    assert got.dtype == np.float32 and got.tolist() == [0.0, -1.5, 1.0]
