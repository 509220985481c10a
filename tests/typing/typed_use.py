"""Typical use of qsimd, type-checked with `mypy --strict` (.ci/typing.sh): every line must
pass. Run as a script it also checks the runtime types the stubs promise."""
from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
from numpy.typing import NDArray

import qsimd
import qsimd.onnx
from qsimd import quark

x: NDArray[np.float32] = np.linspace(-4, 4, 96, dtype=np.float32).reshape(4, 24)
scale = np.array([0.05, 0.1, 0.2, 0.4], np.float32)

y: NDArray[Any] = qsimd.quantize_linear(x, 0.05, np.uint8(128))
y_axis = qsimd.quantize_linear(x, scale, axis=0, output_dtype="int16")
y_block = qsimd.quantize_linear(x, np.full((4, 3), 0.1, np.float32), axis=1, block_size=8,
                                output_dtype=ml_dtypes.int4)
packed: qsimd.PackedTensor = qsimd.quantize_linear(x, 0.5, output_dtype="int4", packed=True)
raw: bytes = packed.tobytes()
shape: tuple[int, ...] = packed.shape
back: NDArray[Any] = qsimd.dequantize_linear(packed, 0.5)
buf = np.empty(x.shape, np.uint8)
same: NDArray[np.uint8] = qsimd.quantize_linear(x, 0.05, np.uint8(128), out=buf)
f32 = qsimd.dequantize_linear(y, np.float32(0.05), np.uint8(128), output_dtype="float32",
                              num_threads=2)

q8, s8, z8 = qsimd.dynamic_quantize_linear(x)
rows, row_scales, row_zps = qsimd.dynamic_quantize(x, block_size=8, output_dtype="int8",
                                                   symmetric=True)
bytes4: NDArray[np.uint8] = qsimd.pack(y_block)
again = qsimd.unpack(bytes4, "int4", y_block.shape)

q = qsimd.Quantizer(scale, axis=0)
r1: NDArray[Any] = q(x)
r2 = q(x, out=np.empty(x.shape, np.uint8))
qp = qsimd.Quantizer(0.5, output_dtype="int4", packed=True)
r3: qsimd.PackedTensor = qp(x)
dq = qsimd.Dequantizer(np.float32(0.05), np.uint8(128))
r4: NDArray[Any] = dq(y)
frame = np.zeros((1, 4, 4, 3), np.uint8)
qf = qsimd.Quantizer(0.02, np.int8(0), pre=[("div", 255.0), ("sub", [0.5, 0.4, 0.3])],
                     pre_axis=-1, perm=(0, 3, 1, 2))
r5: NDArray[Any] = qf(frame)

mx: NDArray[Any] = quark.mx_quantize_dequantize(x, "fp8_e4m3", axis=1, block_size=8)
bfp = quark.bfp_quantize_dequantize(x, "to_bfp_prime", bit_width=13, block_size=8)
elements, scales_e8m0 = qsimd.quantize_mx(x, "fp4_e2m1", block_size=8)
ext = quark.extended_quantize_linear(x, np.float32(0.05), np.uint16(0))

isas: list[str] = qsimd.available_isas()
features: dict[str, bool] = qsimd.cpu_features()
qsimd.set_num_threads(1)
qsimd.set_isa(None)
include: str = qsimd.get_include()


class Tensorish:
    """Another library's tensor: the DLPack protocol is all qsimd needs."""

    def __init__(self, a: NDArray[np.float32]) -> None:
        self.a = a

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self.a.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return (1, 0)


t: NDArray[Any] = qsimd.quantize_linear(Tensorish(x), 0.05)
t_out = qsimd.dequantize_linear(t, 0.05, out=Tensorish(np.empty(x.shape, np.float32)))
t_out.a += 0


def entries(path: str) -> list[str]:
    return [f"{e.kind} {e.name}: {e.op!r}" for e in qsimd.onnx.boundary(path)]


def serve(model: bytes, feeds: dict[str, NDArray[np.float32]]) -> dict[str, NDArray[Any]]:
    core, quantizers, dequantizers = qsimd.onnx.split_boundary(model, outputs=[])
    return {name: quantizers[name](v) for name, v in feeds.items()}


if __name__ == "__main__":
    assert isinstance(packed, qsimd.PackedTensor) and isinstance(r3, qsimd.PackedTensor)
    assert same is buf and isinstance(r2, np.ndarray)
    print("typed use: ok")
