"""Move a QDQ model's boundary quantization out of the graph.

Builds a small float model (three MatMul + Add layers), quantizes it with onnxruntime's own
static QDQ quantizer (per-tensor and per-channel weights), splits the boundary with
qsimd.onnx.split_boundary, checks that onnxruntime on the core model fed qsimd-quantized
inputs gives the original model's outputs bit for bit, and times one request both ways.

    pip install qsimd[onnx] onnxruntime
    python examples/serve_boundary.py [--batch 64]
"""
from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                      quantize_static)

import qsimd
import qsimd.onnx


def float_model(rng: np.random.Generator, batch: int,
                dims: tuple[int, ...] = (256, 512, 512, 64)) -> onnx.ModelProto:
    inits: list[onnx.TensorProto] = []
    nodes: list[onnx.NodeProto] = []
    prev = "X"
    for i in range(len(dims) - 1):
        w = (rng.standard_normal((dims[i], dims[i + 1])) / np.sqrt(dims[i])).astype(np.float32)
        b = (rng.standard_normal(dims[i + 1]) * 0.1).astype(np.float32)
        inits += [numpy_helper.from_array(w, f"W{i}"), numpy_helper.from_array(b, f"B{i}")]
        nodes.append(helper.make_node("MatMul", [prev, f"W{i}"], [f"m{i}"]))
        last = i == len(dims) - 2
        nodes.append(helper.make_node("Add", [f"m{i}", f"B{i}"], ["Y" if last else f"s{i}"]))
        if not last:
            nodes.append(helper.make_node("Relu", [f"s{i}"], [f"r{i}"]))
            prev = f"r{i}"
    g = helper.make_graph(nodes, "mlp",
                          [helper.make_tensor_value_info("X", TensorProto.FLOAT, [batch, dims[0]])],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [batch, dims[-1]])],
                          inits)
    # IR 8, opset 17's: what every onnxruntime of the last years loads
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


class Calibration(CalibrationDataReader):  # type: ignore[misc]  # onnxruntime has no types
    def __init__(self, rng: np.random.Generator, batch: int, n: int = 16) -> None:
        self.it: Iterator[dict[str, np.ndarray]] = iter(
            [{"X": rng.standard_normal((batch, 256)).astype(np.float32)} for _ in range(n)])

    def get_next(self) -> dict[str, np.ndarray] | None:
        return next(self.it, None)


def session(model: onnx.ModelProto) -> Any:
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    return ort.InferenceSession(model.SerializeToString(), so,
                                providers=["CPUExecutionProvider"])


def median_us(fn: Callable[[], object], repeat: int = 200) -> float:
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return 1e6 * float(np.median(ts))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=64)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as d:
        fpath, qpath = os.path.join(d, "f.onnx"), os.path.join(d, "q.onnx")
        onnx.save(float_model(rng, args.batch), fpath)
        for per_channel in (False, True):
            quantize_static(fpath, qpath, Calibration(rng, args.batch),
                            quant_format=QuantFormat.QDQ, per_channel=per_channel,
                            activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
            model = onnx.load(qpath)
            print(f"--- quantize_static QDQ, per_channel={per_channel}")
            for e in qsimd.onnx.boundary(model):
                print(f"  {e.kind:6} {e.name}: {e.op}")
            core, quantizers, dequantizers = qsimd.onnx.split_boundary(model)
            full, inner = session(model), session(core)
            q, dq = quantizers["X"], dequantizers["Y"]

            x = rng.standard_normal((args.batch, 256)).astype(np.float32)
            xq = np.empty(x.shape, q.output_dtype)
            y = np.empty((args.batch, 64), np.float32)

            def original() -> Any:
                return full.run(None, {"X": x})[0]

            def split() -> np.ndarray:
                q(x, out=xq)   # qsimd quantizes the request ...
                return dq(inner.run(None, {"X": xq})[0], out=y)   # ... and dequantizes

            same = True
            for scale in (0.01, 1, 100):   # typical, small and saturating requests
                xx = (rng.standard_normal(x.shape) * scale).astype(np.float32)
                want = full.run(None, {"X": xx})[0]
                got = dq(inner.run(None, {"X": q(xx)})[0])
                same &= np.array_equal(want.view(np.uint32), got.view(np.uint32))
            print(f"  bit-identical outputs: {same}")
            t_full, t_split = median_us(original), median_us(split)
            t_inner = median_us(lambda: inner.run(None, {"X": xq}))
            print(f"  per request: original model {t_full:.1f} us; qsimd + core model "
                  f"{t_split:.1f} us ({t_full - t_split:+.1f} us saved); core model alone "
                  f"{t_inner:.1f} us, the server's share when clients send quantized inputs "
                  f"({t_full - t_inner:+.1f} us saved, and {x.nbytes} -> {xq.nbytes} bytes "
                  f"on the wire)")

if __name__ == "__main__":
    main()
