"""qsimd.onnx: boundary() and split_boundary(). The split model run by onnxruntime on
qsimd-quantized inputs, its outputs dequantized by qsimd, equals onnxruntime on the original
model bit for bit. onnxruntime is in the `test` extra; the sanitizer run (QSIMD_TEST_NO_ORT=1,
.ci/sanitizers.sh) leaves it out, as it would put onnxruntime itself under ASan."""
import os
import pickle

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import qsimd
import qsimd.onnx as qonnx

if os.environ.get("QSIMD_TEST_NO_ORT"):
    pytest.skip("onnxruntime left out (QSIMD_TEST_NO_ORT)", allow_module_level=True)
ort = pytest.importorskip("onnxruntime")


def _mlp(rng, dims=(16, 32, 32, 8), batch=4):
    """A small float model: three MatMul + Add layers with Relu between them."""
    inits, nodes, prev = [], [], "X"
    for i in range(len(dims) - 1):
        w = (rng.standard_normal((dims[i], dims[i + 1])) * 0.3).astype(np.float32)
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
    # IR 8 (opset 17's): older onnxruntimes (1.23, CPython 3.10's) load IR 11 at most
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def _session(model):
    """One thread, basic graph optimizations: at ORT_ENABLE_EXTENDED and above onnxruntime
    fuses Q -> DQ -> MatMul into integer kernels that are not exact on every CPU (int8
    activations on AVX2 without VNNI), and the core model, without its input QuantizeLinear,
    fuses its first layer differently (split_boundary's docstring)."""
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    return ort.InferenceSession(model.SerializeToString(), so,
                                providers=["CPUExecutionProvider"])


def _ort_value(a):
    """ml_dtypes arrays (float8) reach onnxruntime through OrtValue, reinterpreted."""
    if a.dtype.kind in "iuf" and a.dtype.num < 256:
        return a
    code = helper.np_dtype_to_tensor_dtype(a.dtype)
    if a.dtype.itemsize != 1 or code in (TensorProto.INT4, TensorProto.UINT4):
        return a   # sub-byte types are packed in onnxruntime: not reinterpretable
    return ort.OrtValue.ortvalue_from_numpy_with_onnx_type(a.view(np.uint8), code)


def _from_ort(v, dq):
    """onnxruntime hands float8 outputs back as raw bytes: give them the type they have."""
    if dq.zero_point is not None and v.dtype != dq.zero_point.dtype and \
            v.dtype.itemsize == dq.zero_point.dtype.itemsize:
        return v.view(dq.zero_point.dtype)
    return v


def _check_split(model, feeds_fn, n=30):
    core, qs, dqs = qonnx.split_boundary(model)
    onnx.checker.check_model(core)
    s0, s1 = _session(model), _session(core)
    outs = [o.name for o in model.graph.output]
    for k in range(n):
        feeds = feeds_fn(k)
        want = s0.run(None, feeds)
        try:
            got = s1.run(None, {n: _ort_value(qs[n](v)) if n in qs else v
                                for n, v in feeds.items()})
        except RuntimeError as e:   # float8 outputs: onnxruntime 1.23 has no NumPy type
            if "No corresponding Numpy type" not in str(e):
                raise
            pytest.skip(f"onnxruntime {ort.__version__} cannot return these outputs: {e}")
        got = [dqs[o](_from_ort(v, dqs[o])) if o in dqs else v for o, v in zip(outs, got)]
        for w, g_ in zip(want, got):
            assert w.dtype == g_.dtype and w.shape == g_.shape
            assert np.array_equal(w.view(np.uint8), g_.view(np.uint8)), (k, w, g_)
    return core, qs, dqs


@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("act", ["QUInt8", "QInt8"])
def test_quantize_static_models(tmp_path, per_channel, act):
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                          quantize_static)
    rng = np.random.default_rng(1 if per_channel else 2)
    onnx.save(_mlp(rng), tmp_path / "f.onnx")

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.it = iter([{"X": rng.standard_normal((4, 16)).astype(np.float32)}
                            for _ in range(8)])

        def get_next(self):
            return next(self.it, None)

    quantize_static(str(tmp_path / "f.onnx"), str(tmp_path / "q.onnx"), Reader(),
                    quant_format=QuantFormat.QDQ, per_channel=per_channel,
                    activation_type=getattr(QuantType, act), weight_type=QuantType.QInt8)
    model = onnx.load(tmp_path / "q.onnx")
    entries = qonnx.boundary(model)
    assert [(e.name, e.kind) for e in entries] == [("X", "input"), ("Y", "output")]
    assert isinstance(entries[0].op, qsimd.Quantizer)
    assert isinstance(entries[1].op, qsimd.Dequantizer)
    before = model.SerializeToString()

    def feeds(k):   # typical, small and saturating inputs
        scale = [1, 0.01, 30][k % 3]
        return {"X": (rng.standard_normal((4, 16)) * scale).astype(np.float32)}
    core, qs, dqs = _check_split(model, feeds)
    assert model.SerializeToString() == before   # the given model is not changed
    want_t = TensorProto.UINT8 if act == "QUInt8" else TensorProto.INT8
    assert core.graph.input[0].type.tensor_type.elem_type == want_t
    assert core.graph.output[0].type.tensor_type.elem_type == want_t
    assert not any(n.op_type == "QuantizeLinear" and n.input[0] == "X" for n in core.graph.node)
    # every constant left is still read (X_scale is: by the DequantizeLinear after X)
    read = {i for n in core.graph.node for i in n.input}
    assert {t.name for t in core.graph.initializer} <= read


def _qdq_model(opset, q_attrs, dq_attrs, scale_q, zp_q, scale_dq, zp_dq, shape,
               constant_nodes=False, mid="Relu"):
    """X -> Q -> DQ -> mid -> Q -> DQ -> Y with the given parameters."""
    inits, nodes = [], []

    def const(name, arr):
        if arr is None:
            return ""
        if constant_nodes:
            nodes.append(helper.make_node("Constant", [], [name],
                                          value=numpy_helper.from_array(arr, name)))
        else:
            inits.append(numpy_helper.from_array(arr, name))
        return name
    sq, zq = const("sq", scale_q), const("zq", zp_q)
    sd, zd = const("sd", scale_dq), const("zd", zp_dq)
    nodes += [
        helper.make_node("QuantizeLinear", ["X", sq] + ([zq] if zq else []), ["xq"], **q_attrs),
        helper.make_node("DequantizeLinear", ["xq", sq] + ([zq] if zq else []), ["xd"],
                         **dq_attrs),
        helper.make_node(mid, ["xd"], ["h"]),
        helper.make_node("QuantizeLinear", ["h", sd] + ([zd] if zd else []), ["hq"], **q_attrs),
        helper.make_node("DequantizeLinear", ["hq", sd] + ([zd] if zd else []), ["Y"],
                         **dq_attrs),
    ]
    g = helper.make_graph(nodes, "qdq", [helper.make_tensor_value_info("X", TensorProto.FLOAT,
                                                                       list(shape))],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, list(shape))],
                          inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                             ir_version=10 if opset >= 21 else 8)


def _run_or_skip(model):
    try:
        _session(model)
    except Exception as e:   # noqa: BLE001
        pytest.skip(f"onnxruntime {ort.__version__} cannot run this model: {str(e)[:120]}")


@pytest.mark.parametrize("out_name", ["int8", "uint8", "int4"])
def test_blocked_boundary(out_name):
    import ml_dtypes
    dt = {"int8": np.int8, "uint8": np.uint8, "int4": ml_dtypes.int4}[out_name]
    rng = np.random.default_rng(4)
    shape = (4, 64)
    s = (rng.random((4, 2)) * 0.1 + 0.01).astype(np.float32)
    z = rng.integers(0, 7, (4, 2)).astype(dt)
    m = _qdq_model(21, dict(axis=1, block_size=32), dict(axis=1, block_size=32), s, z, s, z,
                   shape)
    _run_or_skip(m)
    try:
        _, qs, dqs = _check_split(m, lambda k: {"X": (rng.standard_normal(shape) * 0.3)
                                                .astype(np.float32)})
    except RuntimeError as e:   # e.g. int4 arrays cannot be fed to onnxruntime from NumPy
        pytest.skip(f"onnxruntime {ort.__version__} cannot take {out_name} inputs: "
                    f"{str(e)[:80]}")
    assert qs["X"].block_size == 32 and qs["X"].output_dtype == np.dtype(dt)


def test_float8_boundary_and_constant_nodes():
    import ml_dtypes
    rng = np.random.default_rng(5)
    shape = (3, 40)
    s = np.float32(0.05)
    z = np.zeros((), ml_dtypes.float8_e4m3fn)
    m = _qdq_model(19, dict(saturate=1), {}, s, z, s, z, shape, constant_nodes=True)
    _run_or_skip(m)
    assert [e.kind for e in qonnx.boundary(m)] == ["input", "output"]
    _check_split(m, lambda k: {"X": (rng.standard_normal(shape) * [1, 10, 50][k % 3])
                               .astype(np.float32)})


@pytest.mark.parametrize("f6", ["float6_e2m3fn", "float6_e3m2fn"])
def test_float6_boundary_opset28(f6):
    """opset 28's float6 boundary: onnxruntime has no float6 kernels, so the split is checked
    against onnx.reference on the original model: the boundary ops give its quantized input
    bit for bit, and reference(core) on them, dequantized, gives its output."""
    import ml_dtypes
    from onnx.reference import ReferenceEvaluator
    rng = np.random.default_rng(8)
    shape = (3, 16)
    s = np.float32(0.25)
    z = np.zeros((), getattr(ml_dtypes, f6))
    m = _qdq_model(28, {}, {}, s, z, s, z, shape)
    core, qs, dqs = qonnx.split_boundary(m)
    onnx.checker.check_model(core)
    for k in range(5):
        x = (rng.standard_normal(shape) * [1, 10, 100][k % 3]).astype(np.float32)
        x[0, :3] = [np.inf, -np.inf, np.nan]
        want = ReferenceEvaluator(m).run(None, {"X": x})[0]
        q_ref = ReferenceEvaluator(m).run(["xq"], {"X": x})[0]
        q = qs["X"](x)
        assert q.dtype == q_ref.dtype and q.view(np.uint8).tobytes() == q_ref.view(np.uint8).tobytes()
        got = dqs["Y"](ReferenceEvaluator(core).run(None, {"X": q})[0])
        assert got.tobytes() == np.asarray(want, np.float32).tobytes()


def test_per_axis_and_opset10():
    rng = np.random.default_rng(6)
    shape = (2, 5, 7)
    s = (rng.random(5) * 0.1 + 0.01).astype(np.float32)
    z = rng.integers(0, 255, 5).astype(np.uint8)
    m = _qdq_model(13, dict(axis=1), dict(axis=1), s, z, s, z, shape)
    _check_split(m, lambda k: {"X": rng.standard_normal(shape).astype(np.float32)})
    m10 = _qdq_model(10, {}, {}, np.float32(0.02), np.uint8(128), np.float32(0.03),
                     np.uint8(100), shape)
    _check_split(m10, lambda k: {"X": rng.standard_normal(shape).astype(np.float32)})


def test_errors():
    shape = (2, 8)
    m = _qdq_model(13, {}, {}, np.float32(0.02), np.uint8(128), np.float32(0.03),
                   np.uint8(100), shape)
    # an input that also feeds another node
    m1 = onnx.ModelProto()
    m1.CopyFrom(m)
    m1.graph.node.append(helper.make_node("Relu", ["X"], ["X2"]))
    m1.graph.output.append(helper.make_tensor_value_info("X2", TensorProto.FLOAT, list(shape)))
    with pytest.raises(ValueError, match="cannot split input 'X': input 'X' also feeds Relu"):
        qonnx.split_boundary(m1, inputs=["X"])
    core, qs, dqs = qonnx.split_boundary(m1)   # by default only what can be split
    assert not qs and set(dqs) == {"Y"}
    # a scale that is not a constant
    m2 = onnx.ModelProto()
    m2.CopyFrom(m)
    m2.graph.initializer.remove([t for t in m2.graph.initializer if t.name == "sq"][0])
    m2.graph.input.append(helper.make_tensor_value_info("sq", TensorProto.FLOAT, []))
    assert [e.name for e in qonnx.boundary(m2)] == ["Y"]
    with pytest.raises(ValueError, match="scale 'sq' of QuantizeLinear .* is not a constant"):
        qonnx.split_boundary(m2, inputs=["X"])
    # an attribute qsimd does not know
    m3 = onnx.ModelProto()
    m3.CopyFrom(m)
    m3.graph.node[0].attribute.append(helper.make_attribute("mode", 1))
    with pytest.raises(ValueError, match="not a valid ONNX model .*mode"):
        qonnx.split_boundary(m3, inputs=["X"])
    assert [e.name for e in qonnx.boundary(m3)] == ["Y"]
    # names that are not on the boundary
    with pytest.raises(ValueError, match="input 'nope' is not on the model's quantized"):
        qonnx.split_boundary(m, inputs=["nope"])
    with pytest.raises(ValueError, match="output 'X' is not on"):
        qonnx.split_boundary(m, outputs=["X"])
    with pytest.raises(TypeError, match="list of names"):
        qonnx.split_boundary(m, inputs="X")
    with pytest.raises(TypeError, match="model must be"):
        qonnx.boundary(42)
    # an output that other nodes also read
    m4 = onnx.ModelProto()
    m4.CopyFrom(m)
    m4.graph.node.append(helper.make_node("Relu", ["Y"], ["Y2"]))
    m4.graph.output.append(helper.make_tensor_value_info("Y2", TensorProto.FLOAT, list(shape)))
    with pytest.raises(ValueError, match="output 'Y' also feeds other nodes"):
        qonnx.split_boundary(m4, outputs=["Y"])
    # only what was asked for
    core, qs, dqs = qonnx.split_boundary(m, inputs=[], outputs=["Y"])
    assert not qs and list(dqs) == ["Y"]
    assert "zd" in {t.name for t in core.graph.initializer}   # still read by the Q before
    assert core.graph.input[0].type.tensor_type.elem_type == TensorProto.FLOAT


def test_example_runs():
    import os
    import subprocess
    import sys
    pytest.importorskip("onnxruntime.quantization")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    # the qsimd this interpreter imports (installed, or the checkout's in place): not the
    # source tree itself, which in an unpacked sdist has no compiled extension
    r = subprocess.run([sys.executable, os.path.join(root, "examples", "serve_boundary.py"),
                        "--batch", "4"], capture_output=True, text=True, timeout=300,
                       cwd=os.path.dirname(os.path.dirname(qsimd.__file__)))
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.count("bit-identical outputs: True") == 2, r.stdout


def _copy(m):
    c = onnx.ModelProto()
    c.CopyFrom(m)
    return c


def test_malformed_and_invalid_models(tmp_path):
    """Every way a model can be wrong is a ValueError that says what (TypeError for what is
    not a model at all); nothing else escapes from onnx or protobuf."""
    m = _qdq_model(13, {}, {}, np.float32(0.02), np.uint8(128), np.float32(0.03),
                   np.uint8(100), (2, 8))
    # a path, a pathlib.Path, the bytes, a bytearray: the same boundary
    onnx.save(m, tmp_path / "m.onnx")
    want = [(e.name, e.kind) for e in qonnx.boundary(m)]
    for form in (str(tmp_path / "m.onnx"), tmp_path / "m.onnx", m.SerializeToString(),
                 bytearray(m.SerializeToString())):
        assert [(e.name, e.kind) for e in qonnx.boundary(form)] == want
        core, qs, dqs = qonnx.split_boundary(form)
        assert set(qs) == {"X"} and set(dqs) == {"Y"}
    # unreadable: missing, corrupt, truncated, not protobuf at all
    raw = m.SerializeToString()
    (tmp_path / "bad.onnx").write_bytes(raw[: len(raw) // 2])
    for bad, msg in [(tmp_path / "missing.onnx", "cannot read"),
                     (tmp_path / "bad.onnx", "not a readable ONNX model"),
                     (raw[: len(raw) // 2], "not a serialized ONNX model"),
                     (b"\xff" * 40, "not a serialized ONNX model"),
                     ("a\0b", "not a readable ONNX model|cannot read")]:
        for fn in (qonnx.boundary, qonnx.split_boundary):
            with pytest.raises(ValueError, match=msg):
                fn(bad)
    with pytest.raises(TypeError, match="model must be"):
        qonnx.split_boundary([raw])
    # external data whose file is missing
    big = _qdq_model(13, {}, {}, np.full(1, 0.02, np.float32), None, np.float32(0.03), None,
                     (2, 8))
    big.graph.initializer.append(numpy_helper.from_array(np.zeros(4096, np.float32), "pad"))
    onnx.save(big, tmp_path / "ext.onnx", save_as_external_data=True, location="ext.bin",
              size_threshold=0)
    (tmp_path / "ext.bin").unlink()
    with pytest.raises(ValueError, match="ext.bin"):
        qonnx.split_boundary(tmp_path / "ext.onnx")
    # the same name twice in inputs=; a name that is not a string
    with pytest.raises(ValueError, match="inputs name 'X' more than once"):
        qonnx.split_boundary(m, inputs=["X", "X"])
    with pytest.raises(TypeError, match="inputs must hold names"):
        qonnx.split_boundary(m, inputs=[1])
    with pytest.raises(TypeError, match="outputs must be a list of names"):
        qonnx.split_boundary(m, outputs=5)
    # two nodes writing one tensor name
    m2 = _copy(m)
    m2.graph.node.append(helper.make_node("Identity", ["X"], ["h"]))
    for fn in (qonnx.boundary, qonnx.split_boundary):
        with pytest.raises(ValueError, match="'h'"):
            fn(m2)
    # a QuantizeLinear without its scale input, a DequantizeLinear without any input
    m3 = _copy(m)
    del m3.graph.node[0].input[1:]
    assert [e.name for e in qonnx.boundary(m3)] == ["Y"]
    with pytest.raises(ValueError):
        qonnx.split_boundary(m3, inputs=["X"])
    m4 = _copy(m)
    m4.graph.node[-1].input[0] = ""
    assert [e.name for e in qonnx.boundary(m4)] == ["X"]
    with pytest.raises(ValueError):
        qonnx.split_boundary(m4, outputs=["Y"])
    # an initializer of a data type NumPy does not know: harmless unless a boundary node
    # reads it (then the model is invalid too)
    m5 = _copy(m)
    odd = numpy_helper.from_array(np.zeros(2, np.float32), "odd")
    odd.data_type = 999
    m5.graph.initializer.append(odd)
    assert [(e.name, e.kind) for e in qonnx.boundary(m5)] == want
    m6 = _copy(m)
    sq = [t for t in m6.graph.initializer if t.name == "sq"][0]
    sq.data_type = 999
    assert [e.name for e in qonnx.boundary(m6)] == ["Y"]   # X's scale cannot be read
    with pytest.raises(ValueError, match="sq"):
        qonnx.split_boundary(m6, inputs=["X"])
    # an invalid model (a node reading a tensor nothing defines)
    m7 = _copy(m)
    m7.graph.node.append(helper.make_node("Relu", ["nowhere"], ["Z"]))
    with pytest.raises(ValueError, match="not a valid ONNX model"):
        qonnx.split_boundary(m7)


def _chain_model(chain, x_type=TensorProto.UINT8, x_shape=(2, 6, 5, 3), axis=None,
                 q_scale=None, q_zp=None):
    """X -> `chain` (list of (op, constant or attrs)) -> QuantizeLinear -> DequantizeLinear ->
    Relu -> Y; returns the model."""
    inits, nodes, prev = [], [], "X"
    shape = list(x_shape)
    for i, (op, arg) in enumerate(chain):
        out = f"c{i}"
        if op == "Cast":
            nodes.append(helper.make_node("Cast", [prev], [out], to=TensorProto.FLOAT))
        elif op == "Transpose":
            nodes.append(helper.make_node("Transpose", [prev], [out], perm=list(arg)))
            shape = [shape[p] for p in arg]
        elif op == "Flatten":
            nodes.append(helper.make_node("Flatten", [prev], [out], axis=arg))
            shape = [int(np.prod(shape[:arg])), int(np.prod(shape[arg:]))]
        elif op in ("Reshape", "Squeeze", "Unsqueeze"):
            name = f"k{i}"
            inits.append(numpy_helper.from_array(np.asarray(arg, np.int64), name))
            nodes.append(helper.make_node(op, [prev, name], [out]))
            probe = np.empty([1 if isinstance(d, str) else d for d in shape], np.uint8)
            shape = list({"Reshape": lambda: probe.reshape(arg),
                          "Squeeze": lambda: probe.squeeze(tuple(arg)),
                          "Unsqueeze": lambda: np.expand_dims(probe, tuple(arg))}[op]().shape)
        else:
            name, first = f"k{i}", op.endswith("'")
            inits.append(numpy_helper.from_array(np.asarray(arg, np.float32), name))
            op = op.rstrip("'")
            nodes.append(helper.make_node(op, [name, prev] if first else [prev, name], [out]))
        prev = out
    scale = np.float32(0.02) if q_scale is None else q_scale
    zp = np.int8(-3) if q_zp is None else q_zp
    inits += [numpy_helper.from_array(np.asarray(scale), "qs"),
              numpy_helper.from_array(np.asarray(zp), "qz")]
    kw = {} if axis is None else {"axis": axis}
    nodes += [helper.make_node("QuantizeLinear", [prev, "qs", "qz"], ["q"], **kw),
              helper.make_node("DequantizeLinear", ["q", "qs", "qz"], ["d"], **kw),
              helper.make_node("Relu", ["d"], ["Y"])]
    if any(isinstance(d, str) for d in x_shape):
        shape = [f"y{j}" for j in range(len(shape))]   # symbolic: the output's dims unnamed
    g = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("X", x_type, x_shape)],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, shape)], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def _chain_case(rng, chain, x_type, x_shape, axis, qs, qz):
    """A checked chain model and an input for it."""
    m = _chain_model(chain, x_type, x_shape, axis, qs, qz)
    onnx.checker.check_model(m)
    if x_type == TensorProto.UINT8:
        return m, rng.integers(0, 256, x_shape).astype(np.uint8)
    return m, (rng.random(x_shape) * 255).astype(np.float32)


MEAN3 = np.array([0.485, 0.456, 0.406], np.float32)
STD3 = np.array([0.229, 0.224, 0.225], np.float32)


@pytest.mark.parametrize("case", ["imagenet", "per_channel_q", "transpose_first", "float_in",
                                  "const_first_mul"])
def test_preprocessing_chain_absorbed(case):
    """Cast / Div / Sub / Mul / Add / Transpose chains in front of the input QuantizeLinear
    move into the quantizer: onnxruntime on the core model, fed it, equals onnxruntime on the
    original model bit for bit."""
    rng = np.random.default_rng(5)
    x_type, x_shape, axis, qs, qz = TensorProto.UINT8, (2, 6, 5, 3), None, None, None
    if case == "imagenet":
        chain = [("Cast", None), ("Div", 255.0), ("Sub", MEAN3), ("Div", STD3),
                 ("Transpose", (0, 3, 1, 2))]
    elif case == "per_channel_q":
        chain = [("Cast", None), ("Div", 255.0), ("Sub", MEAN3), ("Div", STD3),
                 ("Transpose", (0, 3, 1, 2))]
        axis, qs, qz = 1, np.array([0.02, 0.03, 0.017], np.float32), np.array([1, -2, 0], np.int8)
    elif case == "transpose_first":   # constants after the transpose broadcast as (3, 1, 1)
        chain = [("Cast", None), ("Transpose", (0, 3, 1, 2)), ("Mul", 1 / 255.0),
                 ("Sub", MEAN3.reshape(3, 1, 1)), ("Div", STD3.reshape(3, 1, 1))]
    elif case == "float_in":
        x_type = TensorProto.FLOAT
        chain = [("Sub", MEAN3 * 255), ("Div", STD3 * 255), ("Transpose", (0, 3, 1, 2))]
    else:
        chain = [("Cast", None), ("Mul'", 1 / 255.0), ("Add'", -MEAN3),
                 ("Transpose", (0, 3, 1, 2))]
    m, x = _chain_case(rng, chain, x_type, x_shape, axis, qs, qz)
    entries = qonnx.boundary(m)
    assert [(e.name, e.kind) for e in entries] == [("X", "input")]
    core, quantizers, dequantizers = qonnx.split_boundary(m)
    assert [n.op_type for n in core.graph.node] == ["DequantizeLinear", "Relu"]
    assert not dequantizers
    xq = quantizers["X"](x)
    want = _session(m).run(None, {"X": x})[0]
    got = _session(core).run(None, {"X": xq})[0]
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


@pytest.mark.parametrize("case", ["unsqueeze_batch", "reshape_per_channel", "squeeze_first",
                                  "flatten_then_reshape", "split_an_axis",
                                  "merge_after_transpose"])
def test_chain_with_reshapes_absorbed(case):
    """Reshape / Flatten / Squeeze / Unsqueeze anywhere in the chain (constant shapes): the
    quantizer views x as the chain's atoms and its result as the QuantizeLinear input; bit for
    bit what onnxruntime computes, with and without out=."""
    rng = np.random.default_rng(9)
    x_type, x_shape, axis, qs, qz = TensorProto.UINT8, (2, 6, 5, 3), None, None, None
    norm = [("Cast", None), ("Div", 255.0), ("Sub", MEAN3), ("Div", STD3)]
    if case == "unsqueeze_batch":
        x_shape = (6, 5, 3)
        chain = norm + [("Transpose", (2, 0, 1)), ("Unsqueeze", [0])]
    elif case == "reshape_per_channel":   # constants along the merged tensor's axis 1
        chain = [("Cast", None), ("Transpose", (0, 3, 1, 2)), ("Reshape", [2, 3, 30]),
                 ("Mul", 1 / 255.0), ("Sub", MEAN3.reshape(3, 1)), ("Div", STD3.reshape(3, 1))]
        axis, qs, qz = 1, np.array([0.02, 0.03, 0.017], np.float32), np.array([1, -2, 0], np.int8)
    elif case == "squeeze_first":
        x_shape = (1, 6, 5, 3)
        chain = [("Squeeze", [0])] + norm + [("Transpose", (2, 0, 1))]
    elif case == "flatten_then_reshape":
        x_type = TensorProto.FLOAT
        chain = [("Flatten", 1), ("Reshape", [2, 6, 15]), ("Sub", 100.0), ("Div", 60.0)]
    elif case == "split_an_axis":   # the transposed 6 becomes 2 x 3
        chain = norm + [("Transpose", (0, 3, 1, 2)), ("Reshape", [2, 3, 2, 3, 5])]
    else:   # channels and rows merged after the transpose, then unit axes
        chain = norm + [("Transpose", (0, 3, 1, 2)), ("Reshape", [2, 18, 5]),
                        ("Unsqueeze", [1, -1])]
    m, x = _chain_case(rng, chain, x_type, x_shape, axis, qs, qz)
    core, quantizers, _ = qonnx.split_boundary(m)
    assert [n.op_type for n in core.graph.node] == ["DequantizeLinear", "Relu"]
    onnx.checker.check_model(core)
    q = quantizers["X"]
    xq = q(x)
    want = _session(m).run(None, {"X": x})[0]
    got = _session(core).run(None, {"X": xq})[0]
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
    out = np.empty_like(xq)
    assert q(x, out=out) is out
    np.testing.assert_array_equal(out, xq)
    strided = np.empty(xq.shape + (2,), xq.dtype)[..., 0]   # not contiguous: written through
    q(x, out=strided)
    np.testing.assert_array_equal(strided, xq)
    with pytest.raises(ValueError, match="rank"):
        q(x[0])
    if len(x_shape) == 4:   # the same elements in another shape is not the input
        with pytest.raises(ValueError, match="shape"):
            q(np.ascontiguousarray(np.swapaxes(x, 1, 2)))
    q2 = pickle.loads(pickle.dumps(q))
    np.testing.assert_array_equal(q2(x), xq)


def test_reshape_chain_with_a_symbolic_batch():
    """A batch dimension without a static size goes through Unsqueeze / Squeeze: the core
    model's input keeps it symbolic, and any batch runs."""
    chain = [("Cast", None), ("Sub", MEAN3), ("Transpose", (0, 3, 1, 2)), ("Unsqueeze", [1])]
    m = _chain_model(chain, x_shape=("N", 6, 5, 3))
    core, quantizers, _ = qonnx.split_boundary(m)
    dims = core.graph.input[0].type.tensor_type.shape.dim
    assert [d.dim_param or d.dim_value for d in dims] == ["N", 1, 3, 6, 5]
    rng = np.random.default_rng(2)
    for n in (1, 3):
        x = rng.integers(0, 256, (n, 6, 5, 3)).astype(np.uint8)
        want = _session(m).run(None, {"X": x})[0]
        got = _session(core).run(None, {"X": quantizers["X"](x)})[0]
        np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
    m = _chain_model(chain[:3] + [("Reshape", [-1, 90])], x_shape=("N", 6, 5, 3))
    with pytest.raises(ValueError, match="not static"):
        qonnx.split_boundary(m, inputs=["X"])


def test_reshape_chain_that_cannot_be_absorbed():
    """A reshape whose axes cut across what the transpose moved stays in the model, with the
    reason."""
    m = _chain_model([("Cast", None), ("Transpose", (0, 3, 1, 2)), ("Reshape", [2, 3, 5, 6])])
    assert qonnx.boundary(m) == []
    with pytest.raises(ValueError, match="Reshape.*splits or merges"):
        qonnx.split_boundary(m, inputs=["X"])


def test_chain_that_cannot_be_absorbed():
    """A constant first in Sub (c - x) is not x - c: the chain stays, split_boundary says why."""
    m = _chain_model([("Cast", None), ("Sub'", MEAN3), ("Transpose", (0, 3, 1, 2))])
    assert qonnx.boundary(m) == []
    with pytest.raises(ValueError, match="cannot split input 'X'.*Sub"):
        qonnx.split_boundary(m, inputs=["X"])
    core, quantizers, _ = qonnx.split_boundary(m)
    assert not quantizers and len(core.graph.node) == len(m.graph.node)
    m = _chain_model([("Cast", None), ("Sub", np.ones((6, 1, 3), np.float32))])
    with pytest.raises(ValueError, match="more than one axis"):
        qonnx.split_boundary(m, inputs=["X"])
    m = _chain_model([("Cast", None), ("Div", 255.0)])   # X also a graph output: kept
    m.graph.output.append(helper.make_tensor_value_info("X", TensorProto.UINT8, (2, 6, 5, 3)))
    with pytest.raises(ValueError, match="also a graph output"):
        qonnx.split_boundary(m, inputs=["X"])
    m = _chain_model([("Cast", None), ("Div", 255.0), ("Sub", MEAN3)])   # an intermediate too
    m.graph.output.append(helper.make_tensor_value_info("c1", TensorProto.FLOAT, (2, 6, 5, 3)))
    assert qonnx.boundary(m) == []
