"""qsimd.ort: AMD Quark's nodes in onnxruntime on qsimd's kernels.

One-node models of every registered op against qsimd.quark (the Python API on the same
kernels) and, when tests/quark_ops.py can build it, against Quark 0.13's own op library;
malformed nodes (each an onnxruntime error, the process going on); onnxruntime's intra-op
threads; Quark's library and qsimd's in one session; the Quark-style network of
examples/ort_quark.py; the library's C ABI declaration against onnxruntime's real header.

QSIMD_TEST_ORT_LIBRARY names another build of the library to test (e.g. CMake's
libqsimd_ort.so) instead of the extension module."""
import ctypes
import glob
import os
import shutil
import subprocess
import sys
import zlib

import ml_dtypes
import numpy as np
import pytest

if os.environ.get("QSIMD_TEST_NO_ORT"):
    pytest.skip("onnxruntime left out (QSIMD_TEST_NO_ORT)", allow_module_level=True)
ort = pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

import qsimd  # noqa: E402
import qsimd.ort  # noqa: E402
import quark_ops  # noqa: E402
from qsimd import quark  # noqa: E402
from test_quark import LAYOUTS, MX_TYPES, bits_equal, first_diff, hostile  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIB = os.environ.get("QSIMD_TEST_ORT_LIBRARY") or qsimd.ort.library_path()
Q, VAI = "com.amd.quark", "com.vai.quantize"
BF16 = np.dtype(ml_dtypes.bfloat16)
QUARK_TYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.float16, BF16]


def _model(op, inputs, attrs, domain, constants=False):
    """A one-node model and its feed. onnxruntime's Python API neither takes nor returns
    bfloat16 arrays: bfloat16 inputs become initializers, and a bfloat16 output (Q with a
    bfloat16 zero point) is followed by an exact Cast to float32. `constants`: every input
    an initializer (the node's output is then the same in every run)."""
    from onnx import numpy_helper
    names = [f"in{i}" for i in range(len(inputs))]
    feed, vi, inits = {}, [], []
    for n, v in zip(names, inputs):
        if v.dtype == BF16 or constants:
            inits.append(numpy_helper.from_array(v, n))
        else:
            feed[n] = v
            vi.append(helper.make_tensor_value_info(
                n, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape))
    bf16_out = op.endswith("QuantizeLinear") and "Dequantize" not in op and \
        len(inputs) == 3 and inputs[2].dtype == BF16
    nodes = [helper.make_node(op, names, ["y0" if bf16_out else "y"], domain=domain, **attrs)]
    if bf16_out:
        nodes.append(helper.make_node("Cast", ["y0"], ["y"], to=TensorProto.FLOAT))
    graph = helper.make_graph(nodes, "one", vi, [helper.ValueInfoProto(name="y")], inits)
    ops = [helper.make_opsetid("", 17), helper.make_opsetid(domain, 1)]
    # IR 8 (opset 17's): onnx's default may be newer than an older onnxruntime reads
    return helper.make_model(graph, opset_imports=ops, ir_version=8), feed


def wide(a):
    """What run() returns for a bfloat16 result: the same values as float32."""
    a = np.asarray(a)
    return a.astype(np.float32) if a.dtype == BF16 else a


def _session(model, libs=(LIB,), threads=1, config=None):
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    for k, v in (config or {}).items():
        so.add_session_config_entry(k, v)
    for lib in libs:
        so.register_custom_ops_library(lib)
    return ort.InferenceSession(model.SerializeToString(), so,
                                providers=["CPUExecutionProvider"])


def run(op, inputs, domain=Q, libs=(LIB,), threads=1, constants=False, **attrs):
    """One node on `inputs` (numpy arrays) through onnxruntime with `libs` registered;
    `constants`: the inputs as initializers."""
    inputs = [np.asarray(v) for v in inputs]
    model, feed = _model(op, inputs, attrs, domain, constants)
    return _session(model, libs, threads).run(None, feed)[0]


def quark_run(op, inputs, domain=Q, **attrs):
    return run(op, inputs, domain, libs=(quark_ops.require_quark(),), **attrs)


def _has_mxbfp():
    try:
        run("MXQuantizeDequantize", [np.ones((2, 4), np.float32)])
        return True
    except Exception:   # not registered: a build without the MX / BFP C API
        return False


HAS_MXBFP = _has_mxbfp()
need_mxbfp = pytest.mark.skipif(not HAS_MXBFP, reason="this build has no MX / BFP C API")


def test_mx_bfp_registered_when_the_c_api_has_them():
    with open(os.path.join(ROOT, "csrc", "include", "qsimd.h")) as f:
        declared = "qsimd_mx_quantize_dequantize" in f.read()
    if LIB == qsimd.ort.library_path() and declared:
        assert HAS_MXBFP, "the extension was built without its MX / BFP ops"


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


# ------------------------------------------------------------------ the library itself

def test_library_exports_the_entry_point():
    lib = ctypes.CDLL(LIB)
    assert lib.RegisterCustomOps
    if LIB == qsimd.ort.library_path():
        assert os.path.samefile(LIB, qsimd._core.__file__)   # one copy of the kernels


def test_abi_declaration_matches_onnxruntime_header(tmp_path):
    """csrc/ort/ort_abi.h against onnxruntime 1.17's onnxruntime_c_api.h, which the amd-quark
    wheel carries (tests/c/ort_abi_check.c fails to compile on any difference)."""
    quark_ops.require_quark()
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler")
    found = glob.glob(os.path.join(quark_ops._cache_dir(), "wheel", "**",
                                   "onnxruntime_c_api.h"), recursive=True)
    assert found, "the amd-quark wheel's onnxruntime header was not extracted"
    exe = str(tmp_path / "abi")
    r = subprocess.run([cc, "-std=c99", "-Wall", "-Wextra", "-Werror",
                        "-Werror=incompatible-pointer-types", "-I" + os.path.dirname(found[0]),
                        "-I" + os.path.join(ROOT, "csrc", "ort"),
                        os.path.join(ROOT, "tests", "c", "ort_abi_check.c"), "-o", exe],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    out = subprocess.run([exe], capture_output=True, text=True, check=True).stdout
    assert "matches" in out


def test_register_helpers():
    so = ort.SessionOptions()
    qsimd.ort.register(so)
    x = np.array([[1.0, -2.5, 300.0]], np.float32)
    model, feed = _model("ExtendedQuantizeLinear",
                         [x, np.asarray(0.5, np.float32), np.asarray(1, np.int8)], {}, Q)
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    assert sess.run(None, feed)[0].tolist() == [[3, -4, 127]]
    with pytest.raises(TypeError, match="session_options"):
        qsimd.ort.register(object())
    # an unknown domain in the config entry
    so = ort.SessionOptions()
    so.add_session_config_entry(qsimd.ort.DOMAINS_KEY, "com.amd.quark,com.nothing")
    with pytest.raises(Exception, match="unknown domain 'com.nothing'"):
        so.register_custom_ops_library(LIB)
        ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])


# ------------------------------------------------------------------ Extended / Vitis Q/DQ

QDQ_LAYOUTS = [((2, 3, 5, 7), 1), ((4, 6), 0), ((4, 6), -1), ((5, 2, 9), 2), ((70,), 0)]


def _qdq_case(rng, shape, axis, dt, per_axis):
    x = (rng.standard_normal(shape) * 2.0 ** rng.integers(-4, 12, shape)).astype(np.float32)
    x.reshape(-1)[:3] = [np.nan, np.inf, -np.inf] if x.size > 3 else x.reshape(-1)[:3]
    d = shape[axis] if per_axis else 1
    scale = (rng.random(d) * 2 + 0.01).astype(np.float32) if per_axis else np.float32(0.37)
    if dt in (np.float16, BF16):
        zp = (rng.standard_normal(d) * 4).astype(dt) if per_axis else np.asarray(1.5, dt)
    else:
        info = np.iinfo(dt)
        lo, hi = max(info.min, -1000), min(info.max, 1000)
        zp = rng.integers(lo, hi + 1, d).astype(dt) if per_axis else np.asarray(lo // 2 + 7, dt)
    return x, scale, zp


@pytest.mark.parametrize("per_axis", [0, 1])
@pytest.mark.parametrize("dt", QUARK_TYPES, ids=lambda t: np.dtype(t).name)
def test_qdq_matches_qsimd_quark(isa, dt, per_axis):
    rng = np.random.default_rng(zlib.crc32(f"{np.dtype(dt).name}{per_axis}".encode()))
    for (shape, axis), (domain, qop, dqop) in zip(
            QDQ_LAYOUTS, [(Q, "ExtendedQuantizeLinear", "ExtendedDequantizeLinear"),
                          (VAI, "VitisQuantizeLinear", "VitisDequantizeLinear")] * 3):
        x, scale, zp = _qdq_case(rng, shape, axis, dt, per_axis)
        got = run(qop, [x, scale, zp], domain, axis=axis)
        want = quark.extended_quantize_linear(x, scale, zp, axis=axis)
        assert same(got, wide(want)), (shape, axis)
        back = run(dqop, [want, scale, zp], domain, axis=axis)
        assert same(back, quark.extended_dequantize_linear(want, scale, zp, axis=axis))


def test_qdq_default_axis_is_quarks():
    # Quark's kernels use axis 0 when the node has no axis attribute
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 3, 4)).astype(np.float32)
    s = np.array([0.1, 0.2, 0.3], np.float32)
    z = np.array([1, 2, 3], np.int8)
    got = run("ExtendedQuantizeLinear", [x, s, z])
    assert same(got, quark.extended_quantize_linear(x, s, z, axis=0))
    assert same(run("ExtendedDequantizeLinear", [got, s, z]),
                quark.extended_dequantize_linear(got, s, z, axis=0))


@pytest.mark.parametrize("per_axis", [0, 1])
@pytest.mark.parametrize("dt", QUARK_TYPES, ids=lambda t: np.dtype(t).name)
def test_qdq_matches_quark_library(dt, per_axis):
    rng = np.random.default_rng(zlib.crc32(f"lib{np.dtype(dt).name}{per_axis}".encode()))
    for shape, axis in QDQ_LAYOUTS:
        x, scale, zp = _qdq_case(rng, shape, axis, dt, per_axis)
        # Quark's kernels convert NaN and +-inf to integers in C++ (undefined behaviour, and
        # its results vary); qsimd's are CONTRACT.md's (NaN -> qmin, inf saturates)
        x = np.where(np.isfinite(x), x, np.float32(1.25)).astype(np.float32)
        if dt == np.float16:
            # Quark's CPU library casts to float16 ignoring scale and zero point (and clips to
            # +-65504 first): the same numbers exactly when the scale is 1 and the zero point 0
            # (what Quark exports for float16) and x is in float16's range
            scale, zp = np.ones_like(scale), np.zeros_like(zp)
            x = np.clip(np.nan_to_num(x), -65504, 65504).astype(np.float32)
        for op, dop, dom in (("ExtendedQuantizeLinear", "ExtendedDequantizeLinear", Q),
                             ("VitisQuantizeLinear", "VitisDequantizeLinear", VAI)):
            want = quark_run(op, [x, scale, zp], dom, axis=axis)
            assert same(run(op, [x, scale, zp], dom, axis=axis), want), (op, shape, axis)
            q = quark.extended_quantize_linear(x, scale, zp, axis=axis)   # bfloat16 itself
            assert same(wide(q), want)
            back = quark_run(dop, [q, scale, zp], dom, axis=axis)
            got = run(dop, [q, scale, zp], dom, axis=axis)
            assert got.dtype == np.float32 and bits_equal(got, back), (dop, shape, axis)


def test_qdq_empty_and_0d():
    e = np.zeros((0, 3), np.float32)
    q = run("ExtendedQuantizeLinear", [e, np.float32(0.5), np.int8(1)])
    assert q.dtype == np.int8 and q.shape == (0, 3)
    assert run("ExtendedDequantizeLinear", [q, np.float32(0.5), np.int8(1)]).shape == (0, 3)
    q = run("ExtendedQuantizeLinear", [np.float32(3.2), np.float32(0.5), np.uint16(9)])
    assert q.shape == () and q.dtype == np.uint16 and int(q) == 15


# ------------------------------------------------------------------ MX / BFP

@need_mxbfp
@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("etype", MX_TYPES)
def test_mx_matches(isa, etype, mode):
    rng = np.random.default_rng(zlib.crc32(f"ortmx{etype}{mode}".encode()))
    lib = quark_ops.quark_library()
    for i, (shape, axis, bs) in enumerate(LAYOUTS):
        x = hostile(rng, shape, [0, 0.01, 0.2][i % 3])
        attrs = dict(element_dtype=etype, axis=axis, block_size=bs, rounding_mode=mode)
        op, dom = ("MXQuantizeDequantize", Q) if i % 2 else ("MXFixNeuron", VAI)
        got = run(op, [x], dom, **attrs)
        assert bits_equal(got, quark.mx_quantize_dequantize(x, **attrs)), (attrs, shape)
        if lib:
            want = run(op, [x], dom, libs=(lib,), **attrs)
            assert bits_equal(got, want), f"{attrs} {shape}: {first_diff(x, got, want)}"


@need_mxbfp
@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("bit_width", [10, 13, 16, 24, 32])
@pytest.mark.parametrize("method", ["to_bfp", "to_bfp_prime"])
def test_bfp_matches(isa, method, bit_width, mode):
    rng = np.random.default_rng(zlib.crc32(f"ortbfp{method}{bit_width}{mode}".encode()))
    lib = quark_ops.quark_library()
    subs = [(8, 2, 1), (16, 4, 2), (6, 3, 0), (4, 1, 3), (12, 12, 8), (8, 2, 1)]
    for i, (shape, axis, bs) in enumerate(LAYOUTS):
        tb = (i // 2) % 2
        x = hostile(rng, shape, [0, 0.01, 0.2][i % 3])
        if tb:   # Quark's bfloat16 step mangles NaNs (qsimd keeps them): none with it
            x[np.isnan(x)] = np.float32(1.5)
        attrs = dict(bfp_method=method, axis=axis, bit_width=bit_width, block_size=bs,
                     rounding_mode=mode, convert_to_bfloat_before_bfp=tb)
        if method == "to_bfp_prime":
            bs, sub, shift = subs[i % len(subs)]
            attrs.update(block_size=bs, sub_block_size=sub, sub_block_shift_bits=shift)
        op, dom = ("BFPQuantizeDequantize", Q) if i % 2 else ("BFPFixNeuron", VAI)
        got = run(op, [x], dom, **attrs)
        assert bits_equal(got, quark.bfp_quantize_dequantize(x, **attrs)), (attrs, shape)
        if lib:
            want = run(op, [x], dom, libs=(lib,), **attrs)
            assert bits_equal(got, want), f"{attrs} {shape}: {first_diff(x, got, want)}"


@need_mxbfp
def test_mx_bfp_defaults_float16_and_rank1():
    rng = np.random.default_rng(11)
    lib = quark_ops.quark_library()
    x = hostile(rng, (4, 72), 0.01)
    h = np.clip(rng.standard_normal((3, 40)) * 100, -6e4, 6e4).astype(np.float16)
    v = hostile(rng, (70,), 0.0)
    cases = [("MXQuantizeDequantize", x, {}), ("BFPQuantizeDequantize", x, {}),
             ("MXQuantizeDequantize", h, dict(element_dtype="fp4_e2m1")),
             ("BFPQuantizeDequantize", h, dict(bfp_method="to_bfp_prime")),
             # rank 1: computed along its only axis whatever `axis` says (as Quark)
             ("MXQuantizeDequantize", v, dict(axis=1, block_size=16)),
             ("BFPQuantizeDequantize", v, dict(axis=-3))]
    for op, a, attrs in cases:
        got = run(op, [a], **attrs)
        assert got.dtype == a.dtype
        kw = {k: 0 if k == "axis" else val for k, val in attrs.items()} if a.ndim == 1 else attrs
        fn = quark.mx_quantize_dequantize if op.startswith("MX") else \
            quark.bfp_quantize_dequantize
        assert same(got, fn(a, **kw)), (op, attrs)
        if lib:
            assert same(got, run(op, [a], libs=(lib,), **attrs)), (op, attrs)
    # a block size far beyond the axis: one block (Quark's library: SIGFPE)
    assert bits_equal(run("MXQuantizeDequantize", [x], block_size=2**40),
                      quark.mx_quantize_dequantize(x, block_size=72))
    e = np.zeros((0, 5), np.float32)
    assert run("MXQuantizeDequantize", [e]).shape == (0, 5)


# ------------------------------------------------------------------ threads

@pytest.mark.parametrize("threads", [2, 3])
def test_intra_op_threads(threads):
    """Large tensors split over onnxruntime's intra-op pool give the one-thread results."""
    rng = np.random.default_rng(threads)
    x = (rng.standard_normal((3, 40, 33, 41)) * 30).astype(np.float32)   # 162K elements
    for axis in (0, 1, 3, None):
        d = 1 if axis is None else x.shape[axis]
        s = (rng.random(d) + 0.05).astype(np.float32)
        z = rng.integers(-50, 50, d).astype(np.int16)
        if axis is None:
            s, z = s[0], z[0]
        attrs = {} if axis is None else dict(axis=axis)
        one = run("ExtendedQuantizeLinear", [x, s, z], threads=1, **attrs)
        assert same(run("ExtendedQuantizeLinear", [x, s, z], threads=threads, **attrs), one)
        assert same(one, quark.extended_quantize_linear(x, s, z, axis=axis or 0))
        back = run("ExtendedDequantizeLinear", [one, s, z], threads=1, **attrs)
        assert same(run("ExtendedDequantizeLinear", [one, s, z], threads=threads, **attrs), back)
    if HAS_MXBFP:
        for op, attrs in (("MXQuantizeDequantize", dict(axis=1, block_size=32)),
                          ("MXQuantizeDequantize", dict(axis=3, element_dtype="fp8_e4m3")),
                          ("BFPQuantizeDequantize", dict(axis=0, block_size=2)),
                          ("BFPQuantizeDequantize", dict(axis=1, bfp_method="to_bfp_prime"))):
            for a in (x, x.astype(np.float16)):
                one = run(op, [a], threads=1, **attrs)
                assert same(run(op, [a], threads=threads, **attrs), one), (op, attrs)


def test_constant_inputs():
    """A node on initializers only (weights) is computed once, when the session is made: its
    output is the same as computed in the run, in every run, float16 and all Q / DQ types
    included."""
    rng = np.random.default_rng(7)
    w = (rng.standard_normal((16, 64, 3, 3)) * 3).astype(np.float32)
    cases = []
    for dt in QUARK_TYPES:
        for per_axis in (False, True):
            s = (rng.random(16) * 0.05 + 0.01).astype(np.float32)
            z = np.zeros(16, dt)
            if not per_axis:
                s, z = s[:1].reshape(()), z[:1].reshape(())
            q = run("ExtendedQuantizeLinear", [w, s, z], axis=0)
            q = q.astype(BF16) if dt == BF16 else q
            cases.append(("ExtendedQuantizeLinear", [w, s, z], dict(axis=0)))
            cases.append(("ExtendedDequantizeLinear", [q, s, z], dict(axis=0)))
    if HAS_MXBFP:
        for a in (w, w.astype(np.float16), w[0, :, 0, 0]):
            cases += [("MXQuantizeDequantize", [a], dict(element_dtype="fp8_e4m3")),
                      ("MXQuantizeDequantize", [a], dict(element_dtype="int8", axis=-1)),
                      ("BFPQuantizeDequantize", [a], {}),
                      ("BFPQuantizeDequantize", [a], dict(bfp_method="to_bfp_prime",
                                                           bit_width=13, block_size=16))]
    for op, inputs, attrs in cases:
        fed = run(op, inputs, **attrs)
        model, feed = _model(op, [np.asarray(v) for v in inputs], attrs, Q, constants=True)
        assert feed == {}
        sess = _session(model)
        for _ in range(2):
            assert same(sess.run(None, {})[0], fed), (op, attrs, inputs[0].dtype)


# ------------------------------------------------------------------ malformed nodes

F = np.ones((2, 8), np.float32)
BAD = [
    # (op, inputs, attributes, message)
    ("MXQuantizeDequantize", [F], dict(element_dtype="fp3_e1m1"), "element_dtype"),
    ("MXQuantizeDequantize", [F], dict(element_dtype=5), "element_dtype must be a string"),
    ("MXQuantizeDequantize", [F], dict(block_size=0), "block_size"),
    ("MXQuantizeDequantize", [F], dict(block_size=-4), "block_size"),
    ("MXQuantizeDequantize", [F], dict(block_size="x"), "block_size must be an int"),
    ("MXQuantizeDequantize", [F], dict(rounding_mode=3), "rounding_mode"),
    ("MXQuantizeDequantize", [F], dict(axis=2), "axis"),
    ("MXQuantizeDequantize", [F], dict(axis=-3), "axis"),
    ("MXQuantizeDequantize", [F], dict(scale_dtype="e5m2"), "scale_dtype"),
    ("MXQuantizeDequantize", [np.ones((2, 8), np.int32)], {}, "x must be float or float16"),
    ("MXQuantizeDequantize", [np.float32(1)], {}, "dimension"),
    ("BFPQuantizeDequantize", [F], dict(bfp_method="to_bfq"), "bfp_method"),
    ("BFPQuantizeDequantize", [F], dict(bit_width=100), "bit_width"),
    ("BFPQuantizeDequantize", [F], dict(bit_width=9), "bit_width"),
    ("BFPQuantizeDequantize", [F], dict(block_size=0), "block_size"),
    ("BFPQuantizeDequantize", [F], dict(bfp_method="to_bfp_prime", block_size=8,
                                        sub_block_size=3), "sub_block_size"),
    ("BFPQuantizeDequantize", [F], dict(use_compiler_version_cpu_kernel=1),
     "use_compiler_version_cpu_kernel"),
    ("BFPQuantizeDequantize", [F], dict(axis=5), "axis"),
    ("BFPQuantizeDequantize", [np.ones(4, np.float64)], {}, "x must be float or float16"),
    ("BFPQuantizeDequantize", [np.float16(1)], {}, "dimension"),
    ("ExtendedQuantizeLinear", [F, np.ones(8, np.float32), np.zeros(8, np.int8)],
     dict(axis=3), "axis"),
    ("ExtendedQuantizeLinear", [F, np.ones(5, np.float32), np.zeros(5, np.int8)],
     dict(axis=1), "scale"),
    ("ExtendedQuantizeLinear", [F, np.ones(8, np.float32), np.zeros(3, np.int8)],
     dict(axis=1), "zero"),
    ("ExtendedQuantizeLinear", [F, np.float32(1), np.float32(0)], {}, "zero_point must be"),
    ("ExtendedQuantizeLinear", [F, np.float32(1), np.int8(0)], dict(axis=1.5),
     "axis must be an int"),
    ("ExtendedDequantizeLinear", [np.ones(4, np.int8), np.float32(1), np.uint8(0)], {},
     "same type"),
    ("ExtendedDequantizeLinear", [np.ones(4, np.float32), np.float32(1), np.float32(0)], {},
     "zero_point must be"),
    ("ExtendedDequantizeLinear", [np.ones((2, 3), np.int8), np.ones(3, np.float32),
                                  np.zeros(3, np.int8)], dict(axis=-3), "axis"),
]


@pytest.mark.parametrize("op,inputs,attrs,message", BAD,
                         ids=[f"{b[0]}-{i}" for i, b in enumerate(BAD)])
def test_malformed_node_is_an_onnxruntime_error(op, inputs, attrs, message):
    if op[:2] in ("MX", "BF") and not HAS_MXBFP:
        pytest.skip("this build has no MX / BFP C API")
    for constants in (False, True):   # initializers: the same error, from the run
        with pytest.raises(Exception) as e:
            run(op, inputs, constants=constants, **attrs)
        assert type(e.value).__module__.startswith("onnxruntime"), repr(e.value)
        assert message in str(e.value), str(e.value)
        assert op in str(e.value)
    # the process goes on, and so does the library
    assert run("ExtendedQuantizeLinear", [F, np.float32(0.5), np.int8(0)]).max() == 2


def test_malformed_nodes_in_a_fresh_process():
    """The whole list in a child process: it ends normally (no abort, no signal)."""
    code = ("import sys; sys.path.insert(0, %r); import test_ort as t\n"
            "n = 0\n"
            "for op, inputs, attrs, msg in t.BAD:\n"
            "    if op[:2] in ('MX', 'BF') and not t.HAS_MXBFP: continue\n"
            "    try: t.run(op, inputs, **attrs)\n"
            "    except Exception as e: n += msg in str(e)\n"
            "print(n)\n") % os.path.dirname(os.path.abspath(__file__))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=300, env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert r.returncode == 0, r.stderr[-2000:]
    expected = sum(1 for b in BAD if HAS_MXBFP or b[0][:2] not in ("MX", "BF"))
    assert int(r.stdout.split()[-1]) == expected


# ------------------------------------------------------------------ with Quark's library

def _mixed_model():
    """Q/DQ and MX (qsimd's) around Quark's ExtendedInstanceNormalization (not qsimd's)."""
    from onnx import numpy_helper
    nodes = [helper.make_node("MXQuantizeDequantize", ["x"], ["m"], domain=Q,
                              element_dtype="fp8_e4m3", block_size=4),
             helper.make_node("ExtendedQuantizeLinear", ["m", "s", "z"], ["q"], domain=Q),
             helper.make_node("ExtendedDequantizeLinear", ["q", "s", "z"], ["d"], domain=Q),
             helper.make_node("ExtendedInstanceNormalization", ["d", "g", "b"], ["y"],
                              domain=Q)]
    if not HAS_MXBFP:
        nodes[0] = helper.make_node("Identity", ["x"], ["m"])
    inits = [numpy_helper.from_array(v, n) for n, v in (
        ("s", np.array(0.05, np.float32)), ("z", np.array(3, np.int8)),
        ("g", np.array([1, 2, 3, 4], np.float32)), ("b", np.array([0, 1, 0, -1], np.float32)))]
    graph = helper.make_graph(
        nodes, "mixed", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4, 5, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                   helper.make_opsetid(Q, 1)], ir_version=8)


def test_with_quarks_library_in_one_session():
    quark_lib = quark_ops.require_quark()
    x = np.random.default_rng(2).standard_normal((2, 4, 5, 6)).astype(np.float32)
    want = _session(_mixed_model(), (quark_lib,)).run(None, {"x": x})[0]
    model = qsimd.ort.use_own_domain(_mixed_model())
    kinds = {(n.domain, n.op_type) for n in model.graph.node}
    assert (Q, "ExtendedInstanceNormalization") in kinds
    assert (qsimd.ort.OWN_DOMAIN, "ExtendedQuantizeLinear") in kinds
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.register_custom_ops_library(quark_lib)
    if LIB == qsimd.ort.library_path():
        qsimd.ort.register(so, own_domain_only=True)
    else:
        so.add_session_config_entry(qsimd.ort.DOMAINS_KEY, qsimd.ort.OWN_DOMAIN)
        so.register_custom_ops_library(LIB)
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    assert bits_equal(sess.run(None, {"x": x})[0], want)
    # both libraries claiming com.amd.quark: onnxruntime refuses (an error, not a crash)
    with pytest.raises(Exception, match="Domain already set"):
        _session(_mixed_model(), (quark_lib, LIB))


# ------------------------------------------------------------------ a Quark-style network

@need_mxbfp
def test_quark_style_network():
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    try:
        import ort_quark
    finally:
        sys.path.pop(0)
    model = ort_quark.build_model(channels=64, size=24)
    x = np.random.default_rng(4).standard_normal((1, 64, 24, 24)).astype(np.float32)
    got = _session(model).run(None, {"x": x})[0]
    assert got.shape == (1, 64, 24, 24) and np.isfinite(got).all() and np.abs(got).max() > 0
    assert bits_equal(_session(model, threads=2).run(None, {"x": x})[0], got)
    lib = quark_ops.quark_library()
    if lib:
        assert bits_equal(_session(model, (lib,)).run(None, {"x": x})[0], got)
