"""A Quark-style quantized network in onnxruntime, its Quark nodes computed by qsimd.

The model: three 3x3 convolutions over 64 channels of 56x56, with AMD Quark's quantization
nodes around them as Quark exports them: MX (int8 and fp8 along the channels), BFP (to_bfp and
to_bfp_prime) and Extended Q/DQ (uint16 activations per tensor, int8 weights per channel).
qsimd.ort.register() makes onnxruntime run those nodes on qsimd's kernels:

    python examples/ort_quark.py                 # runs it, prints a few numbers
    python examples/ort_quark.py --quark LIB     # also Quark's own library: same outputs?

`build_model()` is shared with tests/test_ort.py and benchmarks/ort_quark.py.
"""
from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

Q = "com.amd.quark"


def build_model(channels: int = 64, size: int = 56, seed: int = 0) -> Any:
    """The network as an onnx.ModelProto (input "x": 1 x channels x size x size float32)."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(seed)
    c = channels
    inits, nodes = [], []

    def const(name: str, value: Any) -> str:
        inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def conv(i: int, src: str, dst: str) -> Any:
        w = (rng.standard_normal((c, c, 3, 3)) / np.sqrt(9 * c)).astype(np.float32)
        b = (rng.standard_normal(c) * 0.01).astype(np.float32)
        nodes.append(helper.make_node("Conv", [src, f"w{i}", const(f"b{i}", b)], [dst],
                                      pads=[1, 1, 1, 1]))
        return w

    # conv 1: int8 MX activations along the channels, int8 per-channel Q/DQ weights
    nodes.append(helper.make_node("MXQuantizeDequantize", ["x"], ["a1"], domain=Q,
                                  element_dtype="int8", axis=1, block_size=32))
    w = conv(1, "a1", "c1")
    ws = (np.abs(w).reshape(c, -1).max(axis=1) / 127).astype(np.float32)
    const("w1_f", w)
    const("w1_s", ws)
    const("w1_z", np.zeros(c, np.int8))
    nodes.append(helper.make_node("ExtendedQuantizeLinear", ["w1_f", "w1_s", "w1_z"], ["w1_q"],
                                  domain=Q, axis=0))
    nodes.append(helper.make_node("ExtendedDequantizeLinear", ["w1_q", "w1_s", "w1_z"], ["w1"],
                                  domain=Q, axis=0))
    nodes.append(helper.make_node("Relu", ["c1"], ["r1"]))

    # conv 2: uint16 per-tensor Q/DQ activations, BFP16 weights
    const("a_s", np.float32(1 / 4096))
    const("a_z", np.uint16(0))
    nodes.append(helper.make_node("ExtendedQuantizeLinear", ["r1", "a_s", "a_z"], ["r1_q"],
                                  domain=Q))
    nodes.append(helper.make_node("ExtendedDequantizeLinear", ["r1_q", "a_s", "a_z"], ["a2"],
                                  domain=Q))
    w = conv(2, "a2", "c2")
    const("w2_f", w)
    nodes.append(helper.make_node("BFPQuantizeDequantize", ["w2_f"], ["w2"], domain=Q,
                                  bfp_method="to_bfp", axis=1, bit_width=16, block_size=8))
    nodes.append(helper.make_node("Relu", ["c2"], ["r2"]))

    # conv 3: BFP prime activations along the channels, fp8 MX weights, fp8 MX output
    nodes.append(helper.make_node("BFPQuantizeDequantize", ["r2"], ["a3"], domain=Q,
                                  bfp_method="to_bfp_prime", axis=1, bit_width=13,
                                  block_size=16, sub_block_size=2, sub_block_shift_bits=1))
    w = conv(3, "a3", "c3")
    const("w3_f", w)
    nodes.append(helper.make_node("MXQuantizeDequantize", ["w3_f"], ["w3"], domain=Q,
                                  element_dtype="fp8_e4m3", axis=1, block_size=32))
    nodes.append(helper.make_node("MXQuantizeDequantize", ["c3"], ["y"], domain=Q,
                                  element_dtype="fp8_e4m3", axis=1, block_size=32))

    graph = helper.make_graph(
        nodes, "quark_style",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, size, size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, c, size, size])], inits)
    # IR 8 (opset 17's): onnx's default IR may be newer than an older onnxruntime reads
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                   helper.make_opsetid(Q, 1)], ir_version=8)


def session(model: Any, library: str | None = None, threads: int = 1,
            profile: bool = False) -> Any:
    """An onnxruntime session of `model` with qsimd's ops (library None) or another custom-op
    library (e.g. Quark's), on `threads` intra-op threads; `profile`: onnxruntime's profiler
    on (the benchmark reads where the time goes)."""
    import onnxruntime as ort

    import qsimd.ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.enable_profiling = profile
    if library is None:
        qsimd.ort.register(so)
    else:
        so.register_custom_ops_library(library)
    return ort.InferenceSession(model.SerializeToString(), so,
                                providers=["CPUExecutionProvider"])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quark", help="Quark's custom-op library (.so) to compare with")
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args(argv)
    model = build_model()
    x = np.random.default_rng(1).standard_normal((1, 64, 56, 56)).astype(np.float32)
    sess = session(model)
    y = sess.run(None, {"x": x})[0]
    t = time.perf_counter()
    for _ in range(args.runs):
        sess.run(None, {"x": x})
    ms = (time.perf_counter() - t) / args.runs * 1e3
    print(f"qsimd: {ms:.2f} ms per inference (1 intra-op thread); "
          f"output {y.shape}, mean |y| {float(np.abs(y).mean()):.4f}")
    if args.quark:
        want = session(model, args.quark).run(None, {"x": x})[0]
        same = np.array_equal(y.view(np.uint32), want.view(np.uint32))
        print(f"Quark's library: {'bit for bit the same output' if same else 'DIFFERENT'}")
        return 0 if same else 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
