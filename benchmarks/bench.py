"""qsimd benchmark: side by side, in one process, medians of many repeats.

Peers (single-threaded): onnxruntime (a one-node InferenceSession), PyTorch
(quantize_per_tensor / quantize_per_channel / dequantize), a NumPy expression of the formula,
and the data-movement floor: NumPy copyto between arrays of the same byte sizes as the
operation reads and writes. Missing peers (the `bench` extra) are skipped and reported. The
"own baseline" column is the qsimd call an issue's bar compares with, timed in the same
interleaved rounds: per-tensor f32->u8 quantize_linear of the same tensor for the per-row
dynamic and MX rows, f32->int4 packed quantize_linear of the same x for the float6 rows.

    python benchmarks/bench.py                 # default sizes 1K .. 16M
    python benchmarks/bench.py --sizes 1K,64K,1M,16M,64M --cases q_u8,dq_u8
    python benchmarks/bench.py --markdown results.md

Prints a markdown table of median times (microseconds) and ratios.
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402

import qsimd  # noqa: E402

try:
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper
except ImportError:   # optional peer
    ort = None
try:
    import warnings

    import torch
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore", message=".*quantized tensor creation functions.*")
except ImportError:   # optional peer
    torch = None


def parse_size(s: str) -> int:
    s = s.strip().upper()
    mult = {"K": 1 << 10, "M": 1 << 20}.get(s[-1], 1)
    return int(s[:-1] if s[-1] in "KM" else s) * mult


def median_times(fns: dict, budget: float = 0.25, max_rounds: int = 400) -> dict:
    """Median seconds per call of each function, measured interleaved: every round times a
    batch of each function in turn (starting with a different one each round), so that drift
    in the machine's speed or memory bandwidth hits all of them alike. A batch lasts at least
    ~50 us, so the timer's own cost (~0.1 us) does not inflate sub-microsecond calls. Each
    batch starts with one untimed call: every function is timed on its own working set, as in
    a loop of calls, not on caches the previous function filled (which would charge a 10 us
    call the reload of what a 16 ms peer evicted, and a 16 ms call next to nothing)."""
    names = list(fns)
    batch = {}
    for k in names:
        for _ in range(3):   # warm up (allocations, first-touch, lazy init)
            fns[k]()
        t0 = time.perf_counter()
        fns[k]()
        one = max(time.perf_counter() - t0, 1e-7)
        batch[k] = (max(1, int(50e-6 / one)), one)
    per_round = sum((b + 1) * one for b, one in batch.values())
    rounds = int(min(max_rounds, max(5, budget * len(names) / per_round)))
    samples = {k: [] for k in names}
    for r in range(rounds):
        for j in range(len(names)):
            k = names[(r + j) % len(names)]
            fn, b = fns[k], batch[k][0]
            fn()
            t0 = time.perf_counter()
            for _ in range(b):
                fn()
            samples[k].append((time.perf_counter() - t0) / b)
    return {k: sorted(v)[len(v) // 2] for k, v in samples.items()}


# --- onnxruntime peers ----------------------------------------------------------------------
def ort_session(op: str, x_type: int, scale: np.ndarray, zp: np.ndarray | None, y_type: int,
                shape, axis: int = 1, block_size: int = 0):
    if ort is None:
        return None
    inits = [onnx.numpy_helper.from_array(scale, "scale")]
    inputs = ["x", "scale"]
    if zp is not None:
        inits.append(onnx.numpy_helper.from_array(zp, "zp"))
        inputs.append("zp")
    attrs = {"axis": axis}
    if block_size:
        attrs["block_size"] = block_size
    node = helper.make_node(op, inputs, ["y"], **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", x_type, list(shape))],
                              [helper.make_tensor_value_info("y", y_type, list(shape))], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    try:
        return ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    except Exception:   # a type this onnxruntime build has no kernel for
        return None


def ort_dyn_session(shape):
    if ort is None:
        return None
    node = helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "s", "z"])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
                              [helper.make_tensor_value_info("y", TensorProto.UINT8, list(shape)),
                               helper.make_tensor_value_info("s", TensorProto.FLOAT, []),
                               helper.make_tensor_value_info("z", TensorProto.UINT8, [])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
    model.ir_version = 10
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    return ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])


def floor_fn(n_in_bytes: int, n_out_bytes: int):
    """copyto between unsigned arrays with the operation's byte sizes (same element count)."""
    ratio = max(n_in_bytes, n_out_bytes) // max(1, min(n_in_bytes, n_out_bytes))
    small = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
    if n_in_bytes >= n_out_bytes:
        count = max(1, n_out_bytes)
        src, dst = np.ones(count, small[ratio]), np.empty(count, np.uint8)
    else:
        count = max(1, n_in_bytes)
        src, dst = np.ones(count, np.uint8), np.empty(count, small[ratio])
    return lambda: np.copyto(dst, src, casting="unsafe")


# --- cases ----------------------------------------------------------------------------------
def case_quant(n, out_name, per="tensor", block=0, x_dtype=np.float32, packed=False, use_out=True):
    rng = np.random.default_rng(1)
    shape = (n,) if per == "tensor" else ((max(1, n // (64 * 56 * 56)), 64, 56, 56)
                                         if per == "axis" and n >= 64 * 56 * 56 else
                                         (max(1, n // 4096), 16, 256) if per == "axis" else (n // 4096 or 1, 4096))
    size = int(np.prod(shape))
    x = (rng.standard_normal(shape) * 4).astype(x_dtype)
    ydt = np.dtype(getattr(ml_dtypes, out_name, None) or out_name)
    onnx_code = {"uint8": 2, "int8": 3, "int16": 5, "int4": 22, "uint4": 21}[out_name]
    if per == "tensor":
        scale = np.array(0.05, x_dtype)
        zp = np.array(0, ydt)
    elif per == "axis":
        scale = (rng.random(shape[1]) * 0.1 + 0.01).astype(x_dtype)
        zp = np.zeros(shape[1], ydt)
    else:
        sshape = (shape[0], -(-shape[1] // block))
        scale = (rng.random(sshape) * 0.1 + 0.01).astype(x_dtype)
        zp = np.zeros(sshape, ydt)
    axis = 1
    bits = 4 if out_name in ("int4", "uint4") else 8 * ydt.itemsize
    out = np.empty(((size + 1) // 2,) if packed else shape, np.uint8 if packed else ydt)
    # explicit keywords: a **dict call costs ~0.3 us more than the quantization of 1K elements
    if use_out:
        ours = lambda: qsimd.quantize_linear(x, scale, zp, axis=axis, block_size=block,  # noqa: E731
                                             packed=packed, out=out)
    else:
        ours = lambda: qsimd.quantize_linear(x, scale, zp, axis=axis, block_size=block,  # noqa: E731
                                             packed=packed)
    peers = {}
    if out_name in ("uint8", "int8", "int16"):
        lo, hi = np.iinfo(ydt).min, np.iinfo(ydt).max
        sb = scale if per == "tensor" else (scale.reshape(1, -1, *([1] * (len(shape) - 2))) if per == "axis"
                                            else np.repeat(scale, block, axis=1)[:, :shape[1]])
        peers["numpy"] = lambda: np.clip(np.rint(x / sb), lo, hi).astype(ydt)
    xcode = {np.float32: TensorProto.FLOAT, np.float16: TensorProto.FLOAT16}.get(x_dtype) if ort else None
    sess = ort_session("QuantizeLinear", xcode, scale, zp, onnx_code, shape, axis, block) if ort else None
    if sess is not None and bits == 4:
        # onnxruntime cannot hand Int4x2 results to NumPy: bind the output to an OrtValue it
        # allocates per run instead (the quantization itself is timed, not a conversion)
        try:
            io = sess.io_binding()
            io.bind_cpu_input("x", x)
            io.bind_output("y", "cpu")
            sess.run_with_iobinding(io)
            peers["onnxruntime"] = lambda: sess.run_with_iobinding(io)
        except Exception:   # noqa: BLE001 - a build without int4 kernels: no peer
            pass
    elif sess is not None:
        peers["onnxruntime"] = lambda: sess.run(None, {"x": x})
    if torch is not None and x_dtype == np.float32 and out_name == "int4" and per == "tensor" and packed:
        # torch has no signed 4-bit dtype: what a torch user writes (round, clamp, pack nibbles)
        tx4 = torch.from_numpy(x.reshape(-1))

        def torch_int4():
            q = torch.clamp(torch.round(tx4 / 0.05), -8, 7).to(torch.int8)
            if q.numel() % 2:
                q = torch.cat([q, q.new_zeros(1)])
            return (q[0::2] & 15) | (q[1::2] << 4)
        peers["torch"] = torch_int4
    if torch is not None and x_dtype == np.float32 and out_name in ("uint8", "int8") and per != "block":
        tx = torch.from_numpy(x)
        tdt = torch.quint8 if out_name == "uint8" else torch.qint8
        if per == "tensor":
            peers["torch"] = lambda: torch.quantize_per_tensor(tx, 0.05, 0, tdt)
        else:
            ts, tz = torch.from_numpy(scale.astype(np.float64)), torch.zeros(shape[1], dtype=torch.int64)
            peers["torch"] = lambda: torch.quantize_per_channel(tx, ts, tz, 1, tdt)
    if torch is not None and x_dtype == np.float32 and out_name == "uint4" and per == "tensor":
        tx = torch.from_numpy(x)
        peers["torch"] = lambda: torch.quantize_per_tensor(tx, 0.05, 0, torch.quint4x2)
    in_bytes = size * np.dtype(x_dtype).itemsize
    out_bytes = size * bits // 8
    return ours, peers, floor_fn(in_bytes, out_bytes), size


def case_dequant(n, in_name, per="tensor", out_dtype=np.float32, use_out=True):
    rng = np.random.default_rng(2)
    xdt = np.dtype(getattr(ml_dtypes, in_name, None) or in_name)
    lo, hi = (-8, 8) if in_name == "int4" else (0, 256)
    x = rng.integers(lo, hi, n).astype(xdt)
    scale = np.array(0.05, out_dtype)
    zp = np.array(3 if in_name == "uint8" else 1, xdt)
    out = np.empty(n, out_dtype)
    ours = (lambda: qsimd.dequantize_linear(x, scale, zp, out=out)) if use_out else \
        (lambda: qsimd.dequantize_linear(x, scale, zp))
    peers = {}
    if in_name == "uint8":
        peers["numpy"] = lambda: ((x.astype(np.int32) - 3).astype(np.float32) * scale).astype(out_dtype)
    ocode = {np.float32: TensorProto.FLOAT, np.float16: TensorProto.FLOAT16}.get(out_dtype) if ort else None
    xcode = {"uint8": TensorProto.UINT8, "int8": TensorProto.INT8, "int4": TensorProto.INT4}[in_name] if ort else None
    sess = ort_session("DequantizeLinear", xcode, scale, zp, ocode, (n,), 1) if ort else None
    if sess is not None:
        # x is the graph input: onnxruntime takes int4 as ml_dtypes arrays
        peers["onnxruntime"] = lambda: sess.run(None, {"x": x})
    if torch is not None and in_name == "uint8" and out_dtype == np.float32:
        q = torch.quantize_per_tensor(torch.from_numpy(x.astype(np.float32) * 0.05), 0.05, 3, torch.quint8)
        peers["torch"] = lambda: q.dequantize()
    bits = 4 if in_name == "int4" else 8
    return ours, peers, floor_fn(n * bits // 8 if bits == 8 else n, n * np.dtype(out_dtype).itemsize), n


def case_dequant_f16(n, use_out=True):
    """AMD Quark's float16 DequantizeLinear input (scale 1, no zero point: a widening). The
    onnxruntime column is its own Cast float16 -> float32 of the same array (the bar)."""
    x = (np.random.default_rng(7).standard_normal(n) * 3).astype(np.float16)
    scale = np.float32(1.0)
    out = np.empty(n, np.float32)
    ours = (lambda: qsimd.dequantize_linear(x, scale, out=out)) if use_out else \
        (lambda: qsimd.dequantize_linear(x, scale))
    peers = {"numpy": lambda: x.astype(np.float32)}
    if ort is not None:
        node = helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT)
        graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT16, [n])],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n])])
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        so.inter_op_num_threads = 1
        sess = ort.InferenceSession(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
                                    .SerializeToString(), so, providers=["CPUExecutionProvider"])
        peers["onnxruntime"] = lambda: sess.run(None, {"x": x})
    if torch is not None:
        tx = torch.from_numpy(x)
        peers["torch"] = lambda: tx.float()
    return ours, peers, floor_fn(2 * n, 4 * n), n


def _pack_nibbles(codes: np.ndarray) -> np.ndarray:
    c = codes.view(np.uint8)
    if c.size % 2:
        c = np.concatenate([c, np.zeros(1, np.uint8)])
    return c[0::2] | (c[1::2] << np.uint8(4))


def case_quant_fp(n, out_name, packed=False, use_out=True):
    """f32 -> float8e4m3fn / float4e2m1 per-tensor (saturate=1, the ONNX default). The NumPy
    peer is the plain ml_dtypes cast (no clip), plus the nibble packing for float4."""
    rng = np.random.default_rng(4)
    x = (rng.standard_normal(n) * 4).astype(np.float32)
    ydt = np.dtype({"float8e4m3fn": ml_dtypes.float8_e4m3fn,
                    "float4e2m1": ml_dtypes.float4_e2m1fn}[out_name])
    scale = np.array(0.05, np.float32)
    zp = np.zeros((), ydt)
    out = np.empty(((n + 1) // 2,) if packed else (n,), np.uint8 if packed else ydt)
    if use_out:
        ours = lambda: qsimd.quantize_linear(x, scale, zp, packed=packed, out=out)  # noqa: E731
    else:
        ours = lambda: qsimd.quantize_linear(x, scale, zp, packed=packed)  # noqa: E731
    peers = {}
    if packed:
        peers["numpy"] = lambda: _pack_nibbles((x / scale).astype(ydt))
    else:
        peers["numpy"] = lambda: (x / scale).astype(ydt)
    code = {"float8e4m3fn": 17, "float4e2m1": 23}[out_name]
    sess = ort_session("QuantizeLinear", TensorProto.FLOAT, scale, zp, code, (n,)) if ort else None
    if sess is not None:
        peers["onnxruntime"] = lambda: sess.run(None, {"x": x})
    return ours, peers, floor_fn(4 * n, n if not packed else max(1, n // 2)), n


def case_dequant_fp(n, in_name, packed=False, use_out=True):
    rng = np.random.default_rng(5)
    xdt = np.dtype({"float8e4m3fn": ml_dtypes.float8_e4m3fn,
                    "float4e2m1": ml_dtypes.float4_e2m1fn}[in_name])
    x = (rng.standard_normal(n) * 4).astype(np.float32).astype(xdt)
    scale = np.array(0.05, np.float32)
    src = qsimd.PackedTensor(qsimd.pack(x), in_name, x.shape) if packed else x
    out = np.empty(n, np.float32)
    ours = (lambda: qsimd.dequantize_linear(src, scale, out=out)) if use_out else \
        (lambda: qsimd.dequantize_linear(src, scale))
    peers = {}
    if packed:
        raw = qsimd.pack(x)

        def np_unpack_dq():
            c = np.empty(raw.size * 2, np.uint8)
            c[0::2], c[1::2] = raw & np.uint8(15), raw >> np.uint8(4)
            return c[:n].view(xdt).astype(np.float32) * scale
        peers["numpy"] = np_unpack_dq
    else:
        peers["numpy"] = lambda: x.astype(np.float32) * scale
    code = {"float8e4m3fn": 17, "float4e2m1": 23}[in_name]
    sess = ort_session("DequantizeLinear", code, scale, None, TensorProto.FLOAT, (n,)) if ort else None
    if sess is not None:
        peers["onnxruntime"] = lambda: sess.run(None, {"x": x})
    return ours, peers, floor_fn(n if not packed else max(1, n // 2), 4 * n), n


def case_quant_f6(n, out_name, packed=True, use_out=True):
    """f32 -> float6e2m3 / float6e3m2 (opset 28) per-tensor, no zero point, packed 4 codes in
    3 bytes. The NumPy peer is the ml_dtypes cast plus onnx.numpy_helper's 6-bit packing;
    onnxruntime has no float6 kernels (1.32: "MLDataType ... not registered")."""
    from onnx import numpy_helper
    rng = np.random.default_rng(4)
    x = (rng.standard_normal(n) * 4).astype(np.float32)
    ydt = np.dtype({"float6e2m3": ml_dtypes.float6_e2m3fn,
                    "float6e3m2": ml_dtypes.float6_e3m2fn}[out_name])
    scale = np.array(0.05, np.float32)
    nbytes = (n * 6 + 7) // 8 if packed else n
    out = np.empty((nbytes,), np.uint8) if packed else np.empty((n,), ydt)
    if use_out:
        ours = lambda: qsimd.quantize_linear(x, scale, output_dtype=out_name,  # noqa: E731
                                             packed=packed, out=out)
    else:
        ours = lambda: qsimd.quantize_linear(x, scale, output_dtype=out_name,  # noqa: E731
                                             packed=packed)
    if packed:
        peers = {"numpy": lambda: numpy_helper._pack_6bit((x / scale).astype(ydt).view(np.uint8))}
    else:
        peers = {"numpy": lambda: (x / scale).astype(ydt)}
    # the bar: within 1.5x of f32 -> int4 packed of the same x (n / 2 bytes out)
    i4 = np.empty((n + 1) // 2, np.uint8)
    peers["own baseline"] = lambda: qsimd.quantize_linear(x, scale, output_dtype="int4",  # noqa: E731
                                                          packed=True, out=i4)
    # floor: the one-byte-per-element copy (no copy has the 16:3 ratio; it writes n, not 3n/4)
    return ours, peers, floor_fn(4 * n, n), n


def case_dynamic(n, use_out=True):
    rng = np.random.default_rng(3)
    x = rng.standard_normal(n).astype(np.float32)
    out = np.empty(n, np.uint8)
    if use_out:
        ours = lambda: qsimd.dynamic_quantize_linear(x, out=out)  # noqa: E731
    else:
        ours = lambda: qsimd.dynamic_quantize_linear(x)  # noqa: E731
    peers = {}

    def np_dyn():
        hi, lo = max(0.0, float(x.max())), min(0.0, float(x.min()))
        s = np.float32((hi - lo) / 255)
        z = np.clip(np.rint(-lo / s), 0, 255)
        return np.clip(np.rint(x / s) + z, 0, 255).astype(np.uint8)
    peers["numpy"] = np_dyn
    sess = ort_dyn_session((n,)) if ort else None
    if sess is not None:
        peers["onnxruntime"] = lambda: sess.run(None, {"x": x})
    return ours, peers, floor_fn(4 * n, n), n


def case_dynamic_rows(n, use_out=True, out_name="uint8"):
    """Per-row dynamic quantization of (n / 1024, 1024) float32 (rows of 1024 elements, one
    scale and zero point each). Peers: torch's per-token helpers (choose_qparams_per_token_
    asymmetric + quantize_per_token, int8 asymmetric: the same work for an 8-bit type), and
    qsimd's own per-tensor quantize_linear of the same tensor with a given scale (the bar:
    per-row at most 1.3x of it)."""
    rng = np.random.default_rng(4)
    x = rng.standard_normal((max(1, n // 1024), min(n, 1024))).astype(np.float32)
    dt = np.dtype(np.uint8 if out_name == "uint8" else np.int8)
    out = np.empty(x.shape, dt)
    kw = {"out": out} if use_out else {}
    ours = lambda: qsimd.dynamic_quantize(x, output_dtype=dt, **kw)  # noqa: E731
    peers = {"own baseline": lambda: qsimd.quantize_linear(x, np.float32(0.05), dt.type(0), **kw)}

    def np_rows():
        hi = np.maximum(x.max(axis=1, keepdims=True), 0)
        lo = np.minimum(x.min(axis=1, keepdims=True), 0)
        s = ((hi - lo) / np.float32(255)).astype(np.float32)
        z = np.clip(np.rint(-lo / s), 0, 255)
        return np.clip(np.rint(x / s) + z, 0, 255).astype(np.uint8), s, z
    peers["numpy"] = np_rows
    if torch is not None:
        try:
            from torch.ao.quantization.fx import _decomposed as tdec
            tx = torch.from_numpy(x)

            def torch_rows():
                s, z = tdec.choose_qparams_per_token_asymmetric(tx, torch.int8)
                return tdec.quantize_per_token(tx, s, z, -128, 127, torch.int8), s, z
            peers["torch"] = torch_rows
        except ImportError:   # older torch: no per-token helpers
            pass
    return ours, peers, floor_fn(4 * x.size, x.size), x.size


_QUARK_LIB = None   # AMD Quark's custom-op library (--quark or QSIMD_QUARK_LIB), else no peer


def _quark_graph_session(graph):
    """A one-thread onnxruntime session of `graph` with Quark's custom-op library loaded."""
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("com.amd.quark", 1)])
    so = ort.SessionOptions()
    so.register_custom_ops_library(_QUARK_LIB)
    so.intra_op_num_threads = 1
    return ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])


def _quark_session(op, shape, **attrs):
    if not _QUARK_LIB or ort is None:
        return None
    node = helper.make_node(op, ["x"], ["y"], domain="com.amd.quark", **attrs)
    graph = helper.make_graph([node], "q", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    return _quark_graph_session(graph)


def case_mx(n, element_dtype, use_out=True):
    """Quark's MXQuantizeDequantize, blocks of 32 along the last axis; the onnxruntime column
    is Quark's own op (its custom-op library) when available."""
    shape = (max(1, n // 1024), min(n, 1024))
    x = (np.random.default_rng(1).standard_normal(shape) * 4).astype(np.float32)
    out = np.empty(shape, np.float32) if use_out else None
    ours = lambda: qsimd.quark.mx_quantize_dequantize(x, element_dtype, 1, 32, num_threads=1,  # noqa: E731
                                                      out=out)
    peers = {}
    sess = _quark_session("MXQuantizeDequantize", shape, element_dtype=element_dtype, axis=1,
                          block_size=32)
    if sess is not None:
        peers["onnxruntime"] = lambda: sess.run(None, {"x": x})
    # the bar: within 3x of qsimd's per-tensor f32 -> u8 quantization of the same tensor
    qout = np.empty(shape, np.uint8)
    peers["own baseline"] = lambda: qsimd.quantize_linear(x, np.float32(0.05), np.uint8(0), out=qout,  # noqa: E731
                                                          num_threads=1)
    size = int(np.prod(shape))
    return ours, peers, floor_fn(4 * size, 4 * size), size


def _quark_qdq_session(op, in_code, out_code, n, scale, zp):
    """Quark's ExtendedQuantizeLinear / ExtendedDequantizeLinear with constant parameters."""
    if not _QUARK_LIB or ort is None:
        return None
    inits = [onnx.numpy_helper.from_array(np.asarray(scale, np.float32), "s"),
             onnx.numpy_helper.from_array(np.asarray(zp), "z")]
    node = helper.make_node(op, ["x", "s", "z"], ["y"], domain="com.amd.quark", axis=0)
    graph = helper.make_graph([node], "q", [helper.make_tensor_value_info("x", in_code, [n])],
                              [helper.make_tensor_value_info("y", out_code, [n])], initializer=inits)
    return _quark_graph_session(graph)


def case_quark_q(n, out_name, use_out=True):
    """AMD Quark's ExtendedQuantizeLinear float32 -> int32 / bfloat16 (per-tensor, zero point
    0); the onnxruntime column is Quark's own op when --quark builds it."""
    x = (np.random.default_rng(5).standard_normal(n) * 4).astype(np.float32)
    ydt = np.dtype(getattr(ml_dtypes, out_name, None) or out_name)
    scale, zp = np.float32(0.05), np.zeros((), ydt)
    out = np.empty(n, ydt)
    kw = {"out": out} if use_out else {}
    ours = lambda: qsimd.quark.extended_quantize_linear(x, scale, zp, **kw)  # noqa: E731
    peers = {}
    code = {"int32": TensorProto.INT32, "bfloat16": TensorProto.BFLOAT16}[out_name] if ort else None
    sess = _quark_qdq_session("ExtendedQuantizeLinear", TensorProto.FLOAT, code, n, scale, zp) \
        if ort else None
    if sess is not None and out_name == "bfloat16":
        # onnxruntime cannot hand bfloat16 results to NumPy: an OrtValue it allocates per run
        io = sess.io_binding()
        io.bind_cpu_input("x", x)
        io.bind_output("y", "cpu")
        peers["onnxruntime"] = lambda: sess.run_with_iobinding(io)
    elif sess is not None:
        peers["onnxruntime"] = lambda: sess.run(None, {"x": x})
    return ours, peers, floor_fn(4 * n, n * ydt.itemsize), n


def case_quark_dq_i32(n, use_out=True):
    """AMD Quark's ExtendedDequantizeLinear int32 -> float32 (per-tensor, zero point 3)."""
    x = np.random.default_rng(6).integers(-(1 << 20), 1 << 20, n).astype(np.int32)
    scale, zp = np.float32(0.05), np.int32(3)
    out = np.empty(n, np.float32)
    kw = {"out": out} if use_out else {}
    ours = lambda: qsimd.quark.extended_dequantize_linear(x, scale, zp, **kw)  # noqa: E731
    peers = {}
    sess = _quark_qdq_session("ExtendedDequantizeLinear", TensorProto.INT32, TensorProto.FLOAT, n,
                              scale, zp) if ort else None
    if sess is not None:
        peers["onnxruntime"] = lambda: sess.run(None, {"x": x})
    return ours, peers, floor_fn(4 * n, 4 * n), n


CASES = {
    "q_u8": ("quantize f32->u8 per-tensor", lambda n, o: case_quant(n, "uint8", use_out=o)),
    "q_i8": ("quantize f32->i8 per-tensor", lambda n, o: case_quant(n, "int8", use_out=o)),
    "q_i16": ("quantize f32->i16 per-tensor", lambda n, o: case_quant(n, "int16", use_out=o)),
    "q_i4p": ("quantize f32->int4 packed per-tensor", lambda n, o: case_quant(n, "int4", packed=True, use_out=o)),
    "q_u8_axis": ("quantize f32->u8 per-axis (axis=1)", lambda n, o: case_quant(n, "uint8", per="axis", use_out=o)),
    "q_u8_b32": ("quantize f32->u8 blocked (last axis, 32)", lambda n, o: case_quant(n, "uint8", per="block", block=32, use_out=o)),
    "q_i4_b128": ("quantize f32->int4 blocked (last axis, 128)", lambda n, o: case_quant(n, "int4", per="block", block=128, use_out=o)),
    "q_f16_u8": ("quantize f16->u8 per-tensor", lambda n, o: case_quant(n, "uint8", x_dtype=np.float16, use_out=o)),
    "dq_u8": ("dequantize u8->f32 per-tensor", lambda n, o: case_dequant(n, "uint8", use_out=o)),
    "dq_i4": ("dequantize int4->f32 per-tensor", lambda n, o: case_dequant(n, "int4", use_out=o)),
    "dq_u8_f16": ("dequantize u8->f16 per-tensor", lambda n, o: case_dequant(n, "uint8", out_dtype=np.float16, use_out=o)),
    "dyn": ("DynamicQuantizeLinear f32->u8", lambda n, o: case_dynamic(n, o)),
    "dyn_row": ("dynamic_quantize per row of 1024 f32->u8", lambda n, o: case_dynamic_rows(n, o)),
    "dyn_row_i8": ("dynamic_quantize per row of 1024 f32->i8 asym", lambda n, o: case_dynamic_rows(n, o, "int8")),
    "q_e4m3": ("quantize f32->float8e4m3fn per-tensor", lambda n, o: case_quant_fp(n, "float8e4m3fn", use_out=o)),
    "dq_e4m3": ("dequantize float8e4m3fn->f32 per-tensor", lambda n, o: case_dequant_fp(n, "float8e4m3fn", use_out=o)),
    "q_f4p": ("quantize f32->float4e2m1 packed per-tensor", lambda n, o: case_quant_fp(n, "float4e2m1", packed=True, use_out=o)),
    "dq_f4p": ("dequantize float4e2m1 packed->f32 per-tensor", lambda n, o: case_dequant_fp(n, "float4e2m1", packed=True, use_out=o)),
    "dq_f16": ("dequantize float16 (Quark) ->f32, vs Cast", lambda n, o: case_dequant_f16(n, use_out=o)),
    "q_f6e2m3p": ("quantize f32->float6e2m3 packed per-tensor", lambda n, o: case_quant_f6(n, "float6e2m3", use_out=o)),
    "q_f6e3m2p": ("quantize f32->float6e3m2 packed per-tensor", lambda n, o: case_quant_f6(n, "float6e3m2", use_out=o)),
    "mx_e4m3": ("Quark MX fake-quantize fp8_e4m3 (block 32)", lambda n, o: case_mx(n, "fp8_e4m3", o)),
    "mx_f4": ("Quark MX fake-quantize fp4_e2m1 (block 32)", lambda n, o: case_mx(n, "fp4_e2m1", o)),
    "mx_i8": ("Quark MX fake-quantize int8 (block 32)", lambda n, o: case_mx(n, "int8", o)),
    "quark_q_i32": ("Quark ExtendedQuantizeLinear f32->int32", lambda n, o: case_quark_q(n, "int32", o)),
    "quark_q_bf16": ("Quark ExtendedQuantizeLinear f32->bfloat16", lambda n, o: case_quark_q(n, "bfloat16", o)),
    "quark_dq_i32": ("Quark ExtendedDequantizeLinear int32->f32", lambda n, o: case_quark_dq_i32(n, o)),
}
PEERS = ("numpy", "onnxruntime", "torch", "own baseline")


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    vers = [f"qsimd {qsimd.__version__} ({qsimd.get_isa()})", f"numpy {np.__version__}"]
    if ort is not None:
        vers.append(f"onnxruntime {ort.__version__}")
    if torch is not None:
        vers.append(f"torch {torch.__version__}")
    return f"{cpu}, {os.cpu_count()} cores; " + ", ".join(vers) + "; single thread"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1K,16K,64K,1M,16M")
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--no-out", action="store_true", help="let qsimd allocate (default: out=)")
    ap.add_argument("--isa", default=None, help="force an instruction set")
    ap.add_argument("--budget", type=float, default=0.2, help="seconds per measurement")
    ap.add_argument("--markdown", default=None, help="also write the table to this file")
    ap.add_argument("--quark", action="store_true",
                    help="mx_* rows: build AMD Quark's op library (tests/quark_ops.py: pip download "
                         "and g++) as their onnxruntime peer; QSIMD_QUARK_LIB names a built one")
    args = ap.parse_args(argv)
    global _QUARK_LIB
    _QUARK_LIB = os.environ.get("QSIMD_QUARK_LIB")
    if args.quark and not _QUARK_LIB:
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
        import quark_ops
        _QUARK_LIB = quark_ops.quark_library()
        if _QUARK_LIB is None:
            print(f"Quark's ops unavailable: {quark_ops.skip_reason()}", file=sys.stderr)
    if args.isa:
        qsimd.set_isa(args.isa)
    sizes = [parse_size(s) for s in args.sizes.split(",")]
    skipped = [p for p, m in (("onnxruntime", ort), ("torch", torch)) if m is None]
    lines = [f"Machine: {machine()}", ""]
    if skipped:
        lines.append(f"Skipped peers (not installed; `pip install qsimd[bench]`): {', '.join(skipped)}")
        lines.append("")
    head = "| case | n | qsimd µs | " + " | ".join(f"{p} µs" for p in PEERS) + \
        " | floor µs | qsimd/floor | " + " | ".join(f"{p}/qsimd" for p in PEERS) + " |"
    lines += [head, "|" + "---|" * (head.count("|") - 1)]
    print("\n".join(lines), flush=True)
    notes = set()
    for key in args.cases.split(","):
        title, make = CASES[key]
        for n in sizes:
            ours, peers, floor, size = make(n, not args.no_out)
            fns = {"qsimd": ours, "floor": floor}
            for p, fn in peers.items():
                try:
                    fn()
                except Exception as e:   # e.g. onnxruntime cannot hand int4 back to NumPy
                    notes.add(f"{p} skipped for '{title}': {type(e).__name__}: {str(e)[:80]}")
                    continue
                fns[p] = fn
            t = median_times(fns, args.budget)
            t_ours, t_floor = t.pop("qsimd"), t.pop("floor")
            t_peer = t
            cells = [title, f"{size:,}", f"{t_ours * 1e6:.2f}"]
            cells += [f"{t_peer[p] * 1e6:.2f}" if p in t_peer else "–" for p in PEERS]
            cells += [f"{t_floor * 1e6:.2f}", f"{t_ours / t_floor:.2f}"]
            cells += [f"{t_peer[p] / t_ours:.2f}" if p in t_peer else "–" for p in PEERS]
            row = "| " + " | ".join(cells) + " |"
            lines.append(row)
            print(row, flush=True)
    if notes:
        lines.append("")
        lines += sorted(notes)
        print("\n".join(sorted(notes)))
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
