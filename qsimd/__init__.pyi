# Types of qsimd's public API (docstrings: the modules themselves, and docs/API.md).
import os
from collections.abc import Sequence
from typing import Any, Literal, NamedTuple, Protocol, SupportsIndex, TypeVar, overload

import numpy as np
from numpy.typing import NDArray
from typing_extensions import Buffer, TypeAlias

from . import quark as quark
from ._core import Dequantizer as Dequantizer, Quantizer as Quantizer
from .quark import quantize_mx as quantize_mx

class _SupportsDLPack(Protocol):
    """A tensor of another library (PyTorch, JAX, ...): the DLPack protocol."""
    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any: ...

class _SupportsArray(Protocol):
    def __array__(self, *args: Any, **kwargs: Any) -> NDArray[Any]: ...

# What x, scale and zero_point accept: arrays (NumPy's, tensors, buffers, objects with
# __array__), NumPy scalars, and Python numbers and lists (converted: floats to float32).
_ArrayIn: TypeAlias = (NDArray[Any] | np.generic | _SupportsDLPack | _SupportsArray | Buffer
                       | float | list[Any] | tuple[Any, ...])
# A dtype: NumPy / ml_dtypes dtypes and types, names ("int4"), ONNX TensorProto codes.
_DTypeSpec: TypeAlias = np.dtype[Any] | type[Any] | str | int
# out=: an array, a tensor or a writable buffer; the call returns it.
_OutT = TypeVar("_OutT", bound=NDArray[Any] | _SupportsDLPack | Buffer)

class PackedTensor(NamedTuple):
    """6-, 4- or 2-bit data in the ONNX raw layout with its element type and logical shape."""
    data: NDArray[np.uint8]
    dtype: Any
    shape: tuple[int, ...]
    def tobytes(self) -> bytes: ...

__version__: str
__all__ = [
    "Quantizer", "Dequantizer", "PackedTensor", "quantize_linear", "dequantize_linear",
    "dynamic_quantize_linear", "dynamic_quantize", "pack", "unpack", "cpu_features",
    "available_isas", "get_isa", "set_isa", "get_include", "get_library_dir",
    "set_num_threads", "get_num_threads", "set_result_cache", "get_result_cache", "quark",
    "quantize_mx", "__version__",
]

@overload
def quantize_linear(x: _ArrayIn, scale: _ArrayIn, zero_point: _ArrayIn | None = None, *,
                    axis: SupportsIndex = 1, block_size: SupportsIndex = 0,
                    output_dtype: _DTypeSpec | None = None, saturate: bool = True,
                    precision: _DTypeSpec | None = None, packed: Literal[False] = False,
                    out: None = None, num_threads: int | None = None) -> NDArray[Any]: ...
@overload
def quantize_linear(x: _ArrayIn, scale: _ArrayIn, zero_point: _ArrayIn | None = None, *,
                    axis: SupportsIndex = 1, block_size: SupportsIndex = 0,
                    output_dtype: _DTypeSpec | None = None, saturate: bool = True,
                    precision: _DTypeSpec | None = None, packed: Literal[False] = False,
                    out: _OutT, num_threads: int | None = None) -> _OutT: ...
@overload
def quantize_linear(x: _ArrayIn, scale: _ArrayIn, zero_point: _ArrayIn | None = None, *,
                    axis: SupportsIndex = 1, block_size: SupportsIndex = 0,
                    output_dtype: _DTypeSpec | None = None, saturate: bool = True,
                    precision: _DTypeSpec | None = None, packed: Literal[True],
                    out: NDArray[np.uint8] | _SupportsDLPack | Buffer | None = None,
                    num_threads: int | None = None) -> PackedTensor: ...
@overload
def dequantize_linear(x: _ArrayIn | PackedTensor, scale: _ArrayIn,
                      zero_point: _ArrayIn | None = None, *, axis: SupportsIndex = 1,
                      block_size: SupportsIndex = 0, output_dtype: _DTypeSpec | None = None,
                      out: None = None, num_threads: int | None = None) -> NDArray[Any]: ...
@overload
def dequantize_linear(x: _ArrayIn | PackedTensor, scale: _ArrayIn,
                      zero_point: _ArrayIn | None = None, *, axis: SupportsIndex = 1,
                      block_size: SupportsIndex = 0, output_dtype: _DTypeSpec | None = None,
                      out: _OutT, num_threads: int | None = None) -> _OutT: ...
@overload
def dynamic_quantize_linear(
        x: _ArrayIn, *, out: None = None,
) -> tuple[NDArray[np.uint8], NDArray[np.float32], NDArray[np.uint8]]: ...
@overload
def dynamic_quantize_linear(
        x: _ArrayIn, *, out: _OutT) -> tuple[_OutT, NDArray[np.float32], NDArray[np.uint8]]: ...
@overload
def dynamic_quantize(
        x: _ArrayIn, *, axis: SupportsIndex = -1, block_size: SupportsIndex | None = None,
        output_dtype: _DTypeSpec = "uint8", symmetric: bool = False, out: None = None,
        num_threads: int | None = None,
) -> tuple[NDArray[Any], NDArray[np.float32], NDArray[Any]]: ...
@overload
def dynamic_quantize(
        x: _ArrayIn, *, axis: SupportsIndex = -1, block_size: SupportsIndex | None = None,
        output_dtype: _DTypeSpec = "uint8", symmetric: bool = False, out: _OutT,
        num_threads: int | None = None,
) -> tuple[_OutT, NDArray[np.float32], NDArray[Any]]: ...
def pack(a: _ArrayIn) -> NDArray[np.uint8]: ...
def unpack(data: _ArrayIn | bytes, dtype: _DTypeSpec,
           shape: SupportsIndex | Sequence[SupportsIndex]) -> NDArray[Any]: ...
def cpu_features() -> dict[str, bool]: ...
def available_isas() -> list[str]: ...
def get_isa() -> str: ...
def set_isa(name: str | None = None) -> None: ...
def get_include() -> str: ...
def get_library_dir() -> str: ...
def set_num_threads(n: int) -> None: ...
def get_num_threads() -> int: ...
def set_result_cache(max_bytes: int) -> None: ...
def get_result_cache() -> int: ...
