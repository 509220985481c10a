"""Misuse that `mypy --strict` must reject (.ci/typing.sh): every line with an error comment
must be reported, and no other. Not meant to run."""
import numpy as np

import qsimd
import qsimd.onnx
from qsimd import quark

x = np.zeros((2, 8), np.float32)

qsimd.quantize_linear(x, "0.05")  # error: a string is not a scale
qsimd.quantize_linear(x, 0.05, axis="1")  # error: axis is an integer
qsimd.quantize_linear(x, 0.05, saturate="yes")  # error: saturate is a bool
qsimd.quantize_linear(x, 0.05, out=[0] * 16)  # error: a list is not an out= array
qsimd.quantize_linear(x, 0.05, bogus=1)  # error: no such keyword
qsimd.quantize_lineer(x, 0.05)  # error: no such function
qsimd.dequantize_linear(x, 0.05, num_threads="2")  # error: num_threads is an int
packed: qsimd.PackedTensor = qsimd.quantize_linear(x, 0.5)  # error: not packed=True
plain: np.ndarray = qsimd.quantize_linear(x, 0.5, output_dtype="int4", packed=True)  # error
qsimd.Quantizer(0.05)(x, x, x)  # error: at most x and out
qsimd.Dequantizer(0.05, axis=1.5)  # error: axis is an integer
quark.mx_quantize_dequantize(x, "fp9")  # error: not an MX element type
quark.quantize_mx(x)  # error: the element type is required
qsimd.onnx.boundary(42)  # error: not a model
qsimd.onnx.split_boundary("m.onnx", inputs=[1])  # error: names are strings
n: int = qsimd.get_isa()  # error: the instruction set is a name
