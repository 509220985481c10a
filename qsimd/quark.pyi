# Types of qsimd.quark (AMD Quark's operators).
from typing import Any, Literal, SupportsIndex, overload

import numpy as np
from numpy.typing import NDArray

from . import _ArrayIn, _DTypeSpec, _OutT

QUARK_TYPES: tuple[str, ...]
MX_ELEMENT_TYPES: dict[str, tuple[int, int, int, float]]
__all__ = ["QUARK_TYPES", "MX_ELEMENT_TYPES", "quantize_mx", "extended_quantize_linear",
           "extended_dequantize_linear", "mx_quantize_dequantize", "bfp_quantize_dequantize"]

_MXElement = Literal["fp8_e5m2", "fp8_e4m3", "fp6_e3m2", "fp6_e2m3", "fp4_e2m1", "int8"]
_MXOnnxElement = Literal["fp8_e5m2", "fp8_e4m3", "fp6_e3m2", "fp6_e2m3", "fp4_e2m1", "int8",
                         "float8_e4m3fn", "float8_e5m2", "float6_e3m2fn", "float6_e2m3fn",
                         "float4_e2m1fn"]

@overload
def extended_quantize_linear(x: _ArrayIn, y_scale: _ArrayIn,
                             y_zero_point: _ArrayIn | None = None, *, axis: SupportsIndex = 1,
                             output_dtype: _DTypeSpec | None = None, out: None = None,
                             num_threads: int | None = None) -> NDArray[Any]: ...
@overload
def extended_quantize_linear(x: _ArrayIn, y_scale: _ArrayIn,
                             y_zero_point: _ArrayIn | None = None, *, axis: SupportsIndex = 1,
                             output_dtype: _DTypeSpec | None = None, out: _OutT,
                             num_threads: int | None = None) -> _OutT: ...
@overload
def extended_dequantize_linear(x: _ArrayIn, x_scale: _ArrayIn,
                               x_zero_point: _ArrayIn | None = None, *,
                               axis: SupportsIndex = 1, out: None = None,
                               num_threads: int | None = None) -> NDArray[Any]: ...
@overload
def extended_dequantize_linear(x: _ArrayIn, x_scale: _ArrayIn,
                               x_zero_point: _ArrayIn | None = None, *,
                               axis: SupportsIndex = 1, out: _OutT,
                               num_threads: int | None = None) -> _OutT: ...
@overload
def mx_quantize_dequantize(x: _ArrayIn, element_dtype: _MXElement = "int8",
                           axis: SupportsIndex = 1, block_size: SupportsIndex = 32,
                           rounding_mode: SupportsIndex = 0, *, out: None = None,
                           num_threads: int | None = None) -> NDArray[Any]: ...
@overload
def mx_quantize_dequantize(x: _ArrayIn, element_dtype: _MXElement = "int8",
                           axis: SupportsIndex = 1, block_size: SupportsIndex = 32,
                           rounding_mode: SupportsIndex = 0, *, out: _OutT,
                           num_threads: int | None = None) -> _OutT: ...
@overload
def bfp_quantize_dequantize(x: _ArrayIn,
                            bfp_method: Literal["to_bfp", "to_bfp_prime",
                                                "to_bfp_prime_shared"] = "to_bfp",
                            axis: SupportsIndex = 1, bit_width: SupportsIndex = 16,
                            block_size: SupportsIndex = 8, rounding_mode: SupportsIndex = 0,
                            sub_block_size: SupportsIndex = 2,
                            sub_block_shift_bits: SupportsIndex = 1,
                            convert_to_bfloat_before_bfp: SupportsIndex = 0, *, out: None = None,
                            num_threads: int | None = None) -> NDArray[Any]: ...
@overload
def bfp_quantize_dequantize(x: _ArrayIn,
                            bfp_method: Literal["to_bfp", "to_bfp_prime",
                                                "to_bfp_prime_shared"] = "to_bfp",
                            axis: SupportsIndex = 1, bit_width: SupportsIndex = 16,
                            block_size: SupportsIndex = 8, rounding_mode: SupportsIndex = 0,
                            sub_block_size: SupportsIndex = 2,
                            sub_block_shift_bits: SupportsIndex = 1,
                            convert_to_bfloat_before_bfp: SupportsIndex = 0, *, out: _OutT,
                            num_threads: int | None = None) -> _OutT: ...
@overload
def quantize_mx(x: _ArrayIn, element_dtype: _MXOnnxElement, *, axis: SupportsIndex = -1,
                block_size: SupportsIndex = 32, out: None = None,
                num_threads: int | None = None) -> tuple[NDArray[Any], NDArray[Any]]: ...
@overload
def quantize_mx(x: _ArrayIn, element_dtype: _MXOnnxElement, *, axis: SupportsIndex = -1,
                block_size: SupportsIndex = 32, out: _OutT,
                num_threads: int | None = None) -> tuple[_OutT, NDArray[Any]]: ...
