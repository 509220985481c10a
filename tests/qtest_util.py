"""Shared helpers for the qsimd tests: type tables, the ONNX reference wrappers, exact
comparison and the differential counters. No qsimd code is used to compute expectations."""
from __future__ import annotations

import os

import ml_dtypes
import numpy as np

import qsimd

try:
    from onnx import TensorProto, helper
    from onnx.reference import ReferenceEvaluator
except ImportError:   # a Python onnx has no wheel for (free-threaded 3.15): reference tests skip
    helper = ReferenceEvaluator = None

    class TensorProto:   # the ONNX type codes these helpers use (fixed by the ONNX spec)
        FLOAT, UINT8, INT8, UINT16, INT16, INT32, FLOAT16, BFLOAT16 = 1, 2, 3, 4, 5, 6, 10, 16
        FLOAT8E4M3FN, FLOAT8E4M3FNUZ, FLOAT8E5M2, FLOAT8E5M2FNUZ = 17, 18, 19, 20
        UINT4, INT4, FLOAT4E2M1, UINT2, INT2 = 21, 22, 23, 25, 26


def _need_onnx():
    if helper is None:
        import pytest
        pytest.skip("needs the onnx package (no wheel for this Python)")

QUICK = os.environ.get("QSIMD_TEST_QUICK", "") not in ("", "0")


def budget(n: int) -> int:
    """Hypothesis example count: ~5x fewer under QSIMD_TEST_QUICK=1 (qemu emulation)."""
    return max(3, n // 5) if QUICK else n


# Counters shown in the terminal summary (conftest.py): the closing note reports them.
STATS = {"diff_cases": 0, "diff_elements": 0, "conformance": 0}

BF16 = np.dtype(ml_dtypes.bfloat16)

# name -> (dtype, ONNX code, qmin, qmax)
OUT_TYPES = {
    "uint8": (np.dtype(np.uint8), TensorProto.UINT8, 0, 255),
    "int8": (np.dtype(np.int8), TensorProto.INT8, -128, 127),
    "uint16": (np.dtype(np.uint16), TensorProto.UINT16, 0, 65535),
    "int16": (np.dtype(np.int16), TensorProto.INT16, -32768, 32767),
    "uint4": (np.dtype(ml_dtypes.uint4), TensorProto.UINT4, 0, 15),
    "int4": (np.dtype(ml_dtypes.int4), TensorProto.INT4, -8, 7),
    "uint2": (np.dtype(ml_dtypes.uint2), TensorProto.UINT2, 0, 3),
    "int2": (np.dtype(ml_dtypes.int2), TensorProto.INT2, -2, 1),
}
SUBBYTE = {"uint4": 4, "int4": 4, "uint2": 2, "int2": 2}

# x / scale types of QuantizeLinear
FLOAT_TYPES = {
    "float32": (np.dtype(np.float32), TensorProto.FLOAT),
    "float16": (np.dtype(np.float16), TensorProto.FLOAT16),
    "bfloat16": (BF16, TensorProto.BFLOAT16),
}
Q_IN_TYPES = dict(FLOAT_TYPES, int32=(np.dtype(np.int32), TensorProto.INT32))

# float8 / float4 types: name -> (dtype, ONNX code)
FP_TYPES = {
    "float8e4m3fn": (np.dtype(ml_dtypes.float8_e4m3fn), TensorProto.FLOAT8E4M3FN),
    "float8e4m3fnuz": (np.dtype(ml_dtypes.float8_e4m3fnuz), TensorProto.FLOAT8E4M3FNUZ),
    "float8e5m2": (np.dtype(ml_dtypes.float8_e5m2), TensorProto.FLOAT8E5M2),
    "float8e5m2fnuz": (np.dtype(ml_dtypes.float8_e5m2fnuz), TensorProto.FLOAT8E5M2FNUZ),
    "float4e2m1": (np.dtype(ml_dtypes.float4_e2m1fn), TensorProto.FLOAT4E2M1),
}
E8M0 = np.dtype(ml_dtypes.float8_e8m0fnu)


def onnx_code(dtype) -> int:
    _need_onnx()
    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


# ---------------------------------------------------------------- reference models
_MODELS: dict = {}


def _evaluator(op: str, in_dtypes, out_dtypes, attrs: dict, opset: int = 25):
    """One-node model, cached by its signature (building one costs far more than a run)."""
    _need_onnx()
    key = (op, tuple(str(d) for d in in_dtypes), tuple(str(d) for d in out_dtypes),
           tuple(sorted(attrs.items())), opset)
    ev = _MODELS.get(key)
    if ev is None:
        in_names = ["x", "scale", "zero_point"][: len(in_dtypes)]
        out_names = ["y", "y_scale", "y_zero_point"][: len(out_dtypes)]
        node = helper.make_node(op, in_names, out_names,
                                **{k: v for k, v in attrs.items() if v is not None})
        graph = helper.make_graph(
            [node], "g",
            [helper.make_tensor_value_info(n, onnx_code(d), None)
             for n, d in zip(in_names, in_dtypes)],
            [helper.make_tensor_value_info(n, onnx_code(d), None)
             for n, d in zip(out_names, out_dtypes)])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                                  ir_version=11)
        ev = _MODELS[key] = ReferenceEvaluator(model)
    return ev


def _feeds(x, scale, zero_point):
    feeds = {"x": x, "scale": scale}
    if zero_point is not None:
        feeds["zero_point"] = zero_point
    return feeds


def ref_quantize(x, scale, zero_point=None, *, axis=1, block_size=0, output_dtype=None,
                 precision=None, saturate=None):
    """onnx.reference QuantizeLinear. output_dtype / precision: ONNX codes or None;
    saturate: None (the default, 1) or 0/1."""
    _need_onnx()
    if output_dtype is not None:
        out = helper.tensor_dtype_to_np_dtype(output_dtype)
    elif zero_point is not None:
        out = zero_point.dtype
    else:
        out = np.dtype(np.uint8)
    ins = [x.dtype, scale.dtype] + ([zero_point.dtype] if zero_point is not None else [])
    ev = _evaluator("QuantizeLinear", ins, [out],
                    {"axis": axis, "block_size": block_size, "output_dtype": output_dtype,
                     "precision": precision, "saturate": saturate})
    with np.errstate(all="ignore"):
        return ev.run(None, _feeds(x, scale, zero_point))[0]


def ref_dequantize(x, scale, zero_point=None, *, axis=1, block_size=0, output_dtype=None):
    _need_onnx()
    out = helper.tensor_dtype_to_np_dtype(output_dtype) if output_dtype else scale.dtype
    ins = [x.dtype, scale.dtype] + ([zero_point.dtype] if zero_point is not None else [])
    ev = _evaluator("DequantizeLinear", ins, [out],
                    {"axis": axis, "block_size": block_size, "output_dtype": output_dtype})
    with np.errstate(all="ignore"):
        return ev.run(None, _feeds(x, scale, zero_point))[0]


def ref_dynamic(x):
    ev = _evaluator("DynamicQuantizeLinear", [x.dtype],
                    [np.dtype(np.uint8), np.dtype(np.float32), np.dtype(np.uint8)], {},
                    opset=11)
    with np.errstate(all="ignore"):
        return ev.run(None, {"x": x})


def ref_broadcast(value, shape, axis, block_size):
    """scale / zero point expanded as the reference expands it (to find its quotient)."""
    from onnx.reference.ops._quant_utils import reshape_input
    return reshape_input(value, tuple(shape), axis, block_size)


# ---------------------------------------------------------------- comparison
def raw(a) -> np.ndarray:
    """The bytes of each element, one row per element (C order)."""
    a = np.ascontiguousarray(a)
    return a.reshape(-1).view(np.uint8).reshape(a.size, a.dtype.itemsize)


def assert_same(actual, expected, what="", count=False):
    """Bit-exact: same dtype, same shape, same bytes per element. A PackedTensor is compared
    by its bytes (its dtype and shape fields are the callers' to check)."""
    if isinstance(actual, qsimd.PackedTensor):
        actual = actual.data
    if isinstance(expected, qsimd.PackedTensor):
        expected = expected.data
    assert isinstance(actual, np.ndarray), f"{what}: got {type(actual).__name__}"
    expected = np.asarray(expected)
    assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype} != {expected.dtype}"
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    ra, re_ = raw(actual), raw(expected)
    bad = np.flatnonzero((ra != re_).any(axis=1))
    if bad.size:
        fa, fe = np.ascontiguousarray(actual).reshape(-1), expected.reshape(-1)
        rows = ", ".join(f"[{i}] {fa[i]!r} (0x{ra[i][::-1].tobytes().hex()}) != "
                         f"{fe[i]!r} (0x{re_[i][::-1].tobytes().hex()})" for i in bad[:6])
        raise AssertionError(f"{what}: {bad.size} of {actual.size} elements differ: {rows}")
    if count:
        STATS["diff_cases"] += 1
        STATS["diff_elements"] += actual.size
