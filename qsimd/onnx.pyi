# Types of qsimd.onnx (needs the onnx package: qsimd[onnx]).
import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

import onnx
from numpy.typing import ArrayLike, NDArray
from typing_extensions import TypeAlias

from . import Dequantizer, PackedTensor, Quantizer

__all__ = ["BoundaryEntry", "ChainQuantizer", "boundary", "split_boundary"]

# a path, a ModelProto, or the serialized bytes
_Model: TypeAlias = str | os.PathLike[str] | bytes | bytearray | memoryview | onnx.ModelProto

class ChainQuantizer:
    """The quantizer of an input whose preprocessing chain reshapes: x viewed as the chain's
    atoms, the Quantizer, the result viewed as the QuantizeLinear input."""
    quantizer: Quantizer[Any]
    def __init__(self, quantizer: Quantizer[Any], xdims: Iterable[int | None],
                 xshape: Iterable[Any], yshape: Iterable[Any]) -> None: ...
    @property
    def output_dtype(self) -> Any: ...
    def __call__(self, x: ArrayLike, out: NDArray[Any] | None = None) -> NDArray[Any]: ...

@dataclass(frozen=True)
class BoundaryEntry:
    """A graph input quantized by `node` or a graph output dequantized by it."""
    name: str
    kind: Literal["input", "output"]
    node: onnx.NodeProto
    op: Quantizer[NDArray[Any]] | Quantizer[PackedTensor] | ChainQuantizer | Dequantizer

def boundary(model: _Model) -> list[BoundaryEntry]: ...
def split_boundary(
    model: _Model, inputs: Iterable[str] | None = None, outputs: Iterable[str] | None = None,
) -> tuple[onnx.ModelProto, dict[str, Quantizer[Any] | ChainQuantizer],
           dict[str, Dequantizer]]: ...
