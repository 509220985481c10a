"""AMD Quark's ExtendedQuantizeLinear / ExtendedDequantizeLinear (domain ``com.amd.quark``).

Quark extends ONNX QuantizeLinear / DequantizeLinear with int32, uint32, float16 and bfloat16
quantized types. qsimd's :func:`qsimd.quantize_linear` and :func:`qsimd.dequantize_linear`
accept them directly (as `output_dtype` or as the zero point's dtype); this module only gives
them Quark's names and argument names, and refuses types outside Quark's list, for code moving
over from Quark's custom-op library.

Numerics (CONTRACT.md):
- int32 / uint32 outputs: ``saturate(round_half_even(x / scale) + zero_point)`` as for the ONNX
  integer types, clamped in double (so 2**31 never wraps), the zero point exact.
- float16 / bfloat16 outputs: ``to_type(x / scale + zero_point)``, NOT rounded to an integer.
  The quotient has the precision of the integer path; the zero point is added in float32 (as
  Quark's CPU kernel does; an absent one is +0, so x = -0 gives +0) and the sum is rounded to
  nearest even (overflow gives inf).
- dequantize int32 / uint32: ``(x - zero_point) * scale`` with an exact int64 difference;
  float16 / bfloat16: ``(float32(x) - float32(zero_point)) * scale``, all in float32.

API decisions where Quark's op and qsimd differ:
- Inputs: Quark's schema takes float32 x and float32 scales only. These functions accept
  everything :func:`qsimd.quantize_linear` / :func:`qsimd.dequantize_linear` accept (float16,
  bfloat16 or int32 x; float16 / bfloat16 scales), with the same numerics as there;
  with float32 x and scales the results are Quark's. Dequantize returns the scale's type as
  ONNX DequantizeLinear does (float16 for a float16 scale), not always float32: pass float32
  scales for Quark's output type.
- ``axis`` defaults to 1, ONNX's default and the default Quark's op declares. Quark's kernel
  uses axis 0 when a node has no ``axis`` attribute: when translating such a node with
  per-channel parameters, pass ``axis=0``.
"""
from __future__ import annotations

import numpy as np

from ._api import _typed_array, dequantize_linear, quantize_linear
from ._dtypes import CODE_TO_DTYPE, DTYPE_TO_CODE, name_of, resolve

#: The quantized types of ExtendedQuantizeLinear / ExtendedDequantizeLinear (T3 / T1).
QUARK_TYPES = ("int8", "uint8", "int16", "uint16", "int32", "uint32", "float16", "bfloat16")
_QUARK_CODES = tuple(resolve(t, "type") for t in QUARK_TYPES)


def _check(code: int, argname: str) -> None:
    if code not in _QUARK_CODES:
        raise TypeError(f"{argname}: {name_of(code)} is not one of Quark's types "
                        f"({', '.join(QUARK_TYPES)}); use qsimd.quantize_linear / "
                        f"dequantize_linear for the other ONNX types")


def _array_code(value):
    if isinstance(value, np.ndarray):
        return DTYPE_TO_CODE.get(value.dtype.newbyteorder("="))
    a = np.asarray(value)
    return DTYPE_TO_CODE.get(a.dtype) if a.dtype.kind != "O" else None


def extended_quantize_linear(x, y_scale, y_zero_point=None, *, axis=1, output_dtype=None,
                             out=None, num_threads=None):
    """ExtendedQuantizeLinear: the zero point's dtype (or `output_dtype`) selects the output
    type among :data:`QUARK_TYPES`; uint8 with zero point 0 when neither is given."""
    if output_dtype is not None:
        _check(resolve(output_dtype, "output_dtype"), "output_dtype")
    elif y_zero_point is not None:
        code = _array_code(y_zero_point)
        if code is not None:
            _check(code, "y_zero_point")
    return quantize_linear(x, y_scale, y_zero_point, axis=axis, output_dtype=output_dtype,
                           out=out, num_threads=num_threads)


def extended_dequantize_linear(x, x_scale, x_zero_point=None, *, axis=1, out=None,
                               num_threads=None):
    """ExtendedDequantizeLinear: x of one of :data:`QUARK_TYPES`; the result has the scale's
    type (float32 in Quark)."""
    hint = _array_code(x_zero_point) if x_zero_point is not None else None
    _, code = _typed_array(x, "x", hint if hint in _QUARK_CODES else 6,
                           tuple(CODE_TO_DTYPE))
    _check(code, "x")
    return dequantize_linear(x, x_scale, x_zero_point, axis=axis, out=out,
                             num_threads=num_threads)


__all__ = ["QUARK_TYPES", "extended_quantize_linear", "extended_dequantize_linear"]
