# Types of qsimd.onnx (needs the onnx package: qsimd[onnx]).
import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

import onnx
from numpy.typing import NDArray
from typing_extensions import TypeAlias

from . import Dequantizer, PackedTensor, Quantizer

__all__ = ["BoundaryEntry", "boundary", "split_boundary"]

# a path, a ModelProto, or the serialized bytes
_Model: TypeAlias = str | os.PathLike[str] | bytes | bytearray | memoryview | onnx.ModelProto

@dataclass(frozen=True)
class BoundaryEntry:
    """A graph input quantized by `node` or a graph output dequantized by it."""
    name: str
    kind: Literal["input", "output"]
    node: onnx.NodeProto
    op: Quantizer[NDArray[Any]] | Quantizer[PackedTensor] | Dequantizer

def boundary(model: _Model) -> list[BoundaryEntry]: ...
def split_boundary(
    model: _Model, inputs: Iterable[str] | None = None, outputs: Iterable[str] | None = None,
) -> tuple[onnx.ModelProto, dict[str, Quantizer[Any]], dict[str, Dequantizer]]: ...
