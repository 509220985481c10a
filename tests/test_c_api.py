"""The Python-free C API: the example program in examples/c built against the standalone
CMake build and against the header + static library shipped inside the package, run on every
instruction set, with its outputs checked against the ONNX reference."""
import os
import shutil
import subprocess
import sys
import sysconfig

import ml_dtypes
import numpy as np
import pytest

import qsimd

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "examples", "c", "quantize_image.c")
CC = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
CC = CC.split()[0]

pytestmark = pytest.mark.skipif(
    sys.platform == "win32" or shutil.which(CC) is None or not os.path.exists(EXAMPLE),
    reason="needs a Unix C compiler and the source tree")


def _compile(tmp, include_dir, lib, name):
    exe = os.path.join(tmp, name)
    subprocess.run([CC, "-O2", "-std=c99", "-Wall", "-Wextra", "-Werror", "-I", include_dir,
                    EXAMPLE, "-o", exe, lib, "-lm", "-pthread"], check=True, capture_output=True)
    try:
        subprocess.run([exe], capture_output=True,
                       timeout=60, env=dict(os.environ, QSIMD_ISA=""))
    except OSError as e:
        # an emulated interpreter (qemu-user without binfmt_misc) cannot start native
        # programs; the C example is run on real hardware and in .ci/portability.sh
        pytest.skip(f"cannot execute a compiled program here: {e}")
    return exe


@pytest.fixture(scope="module")
def cmake_example(tmp_path_factory):
    if shutil.which("cmake") is None:
        pytest.skip("cmake is not installed")
    tmp = str(tmp_path_factory.mktemp("cmake"))
    build = os.path.join(tmp, "build")
    prefix = os.path.join(tmp, "prefix")
    # the static library only: the shared one is built (and its exports checked) by
    # test_distribution's CMake test, with one instruction set to keep it quick
    config = ["-DCMAKE_BUILD_TYPE=Release", "-DQSIMD_BUILD_SHARED=OFF"]
    if os.environ.get("QSIMD_UNDER_ASAN"):
        # CC instruments everything: an optimised build takes minutes there
        config = ["-DCMAKE_BUILD_TYPE=Debug", "-DQSIMD_BUILD_SHARED=OFF"]
    for cmd in (["cmake", "-S", os.path.join(ROOT, "csrc"), "-B", build,
                 f"-DCMAKE_C_COMPILER={CC}", *config],
                ["cmake", "--build", build, "-j", "2"],
                ["cmake", "--install", build, "--prefix", prefix]):
        r = subprocess.run(cmd, capture_output=True, text=True)
        assert r.returncode == 0, r.stdout + r.stderr
    libdir = next(os.path.join(prefix, d) for d in ("lib", "lib64")
                  if os.path.exists(os.path.join(prefix, d, "libqsimd.a")))
    pc = open(os.path.join(libdir, "pkgconfig", "qsimd.pc")).read()
    assert "-lqsimd" in pc and "${pcfiledir}" in pc
    return _compile(tmp, os.path.join(prefix, "include"), os.path.join(libdir, "libqsimd.a"),
                    "example_cmake")


@pytest.fixture(scope="module")
def wheel_example(tmp_path_factory):
    tmp = str(tmp_path_factory.mktemp("wheel"))
    lib = os.path.join(qsimd.get_library_dir(), "libqsimd.a")
    assert os.path.exists(os.path.join(qsimd.get_include(), "qsimd.h"))
    assert os.path.exists(lib)
    return _compile(tmp, qsimd.get_include(), lib, "example_wheel")


def _reference(op, inputs, attrs, y_type):
    import onnx
    from onnx import TensorProto, helper
    from onnx.reference import ReferenceEvaluator
    names = list(inputs)
    node = helper.make_node(op, names, ["y"], **attrs)
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info(n, onnx.helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
         for n, v in inputs.items()],
        [helper.make_tensor_value_info("y", y_type, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    return ReferenceEvaluator(model).run(None, inputs)[0]


def _run_and_check(exe, isa, tmp_path):
    env = dict(os.environ, QSIMD_ISA=isa)
    r = subprocess.run([exe, str(tmp_path)], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"instruction set {isa}" in r.stdout
    assert "within_bound yes" in r.stdout
    assert "error example: code 2: block_size 32" in r.stdout

    shape = (4, 3, 56, 64)
    x = np.fromfile(tmp_path / "x.bin", np.float32).reshape(shape)
    u8 = np.fromfile(tmp_path / "u8.bin", np.uint8).reshape(shape)
    i4 = np.fromfile(tmp_path / "i4.bin", np.uint8)
    s4 = np.fromfile(tmp_path / "i4_scales.bin", np.float32).reshape(4, 3, 56, 2)
    scale, zp = open(tmp_path / "params.txt").read().split()

    from onnx import TensorProto
    from onnx.reference import ReferenceEvaluator
    from onnx import helper
    node = helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "s", "z"])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info(n, t, None) for n, t in
                               (("y", TensorProto.UINT8), ("s", TensorProto.FLOAT), ("z", TensorProto.UINT8))])
    ry, rs, rz = ReferenceEvaluator(helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 11)])).run(None, {"x": x})
    np.testing.assert_array_equal(u8, ry)
    assert np.float32(scale) == rs and int(zp) == int(rz)

    ref4 = _reference("QuantizeLinear", {"x": x, "s": s4}, {"axis": 3, "block_size": 32, "output_dtype": TensorProto.INT4},
                      TensorProto.INT4)
    assert ref4.dtype == ml_dtypes.int4
    codes = ref4.reshape(-1).view(np.uint8) & 0x0F
    expect = (codes[0::2] | (codes[1::2] << 4)).astype(np.uint8)
    np.testing.assert_array_equal(i4, expect)


@pytest.mark.parametrize("isa", qsimd.available_isas())
def test_example_from_cmake_build(cmake_example, isa, tmp_path):
    _run_and_check(cmake_example, isa, tmp_path)


@pytest.mark.parametrize("isa", qsimd.available_isas())
def test_example_from_package_library(wheel_example, isa, tmp_path):
    _run_and_check(wheel_example, isa, tmp_path)


def test_unavailable_isa_is_reported(wheel_example, tmp_path):
    """QSIMD_ISA naming an unknown tier falls back to the best one in C (the Python module
    raises instead); the C program keeps working."""
    env = dict(os.environ, QSIMD_ISA="no-such-isa")
    r = subprocess.run([wheel_example], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert f"instruction set {qsimd.available_isas()[-1]}" in r.stdout


def test_prepared_parameters(isa, tmp_path):
    """tests/c/test_prepared.c against the package's header and static library: prepared
    scale / zero point objects (hand-computed results, errors, four threads on one object)."""
    exe = str(tmp_path / "test_prepared")
    r = subprocess.run([CC, "-O2", "-std=c99", "-Wall", "-Wextra", "-Werror", "-I",
                        qsimd.get_include(), os.path.join(ROOT, "tests", "c", "test_prepared.c"),
                        "-o", exe, os.path.join(qsimd.get_library_dir(), "libqsimd.a"), "-lm",
                        "-pthread"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    try:
        r = subprocess.run([exe], capture_output=True, text=True, timeout=120,
                           env=dict(os.environ, QSIMD_ISA=isa))
    except OSError as e:
        pytest.skip(f"cannot execute a compiled program here: {e}")
    assert r.returncode == 0 and r.stdout.startswith(f"ok ({isa})"), r.stdout + r.stderr


MX_EXAMPLE = os.path.join(ROOT, "examples", "c", "mx_activations.c")


@pytest.fixture(scope="module")
def mx_example(tmp_path_factory):
    tmp = str(tmp_path_factory.mktemp("mx"))
    exe = os.path.join(tmp, "mx_activations")
    subprocess.run([CC, "-O2", "-std=c99", "-Wall", "-Wextra", "-Werror", "-I",
                    qsimd.get_include(), MX_EXAMPLE, "-o", exe,
                    os.path.join(qsimd.get_library_dir(), "libqsimd.a"), "-lm", "-pthread"],
                   check=True, capture_output=True)
    try:
        subprocess.run([exe], capture_output=True, timeout=60)
    except OSError as e:
        pytest.skip(f"cannot execute a compiled program here: {e}")
    return exe


@pytest.mark.parametrize("isa", qsimd.available_isas())
def test_mx_example(mx_example, isa, tmp_path):
    """examples/c/mx_activations.c on every instruction set: MX / BFP along the channel axis
    against AMD Quark's real ops, and the OCP MX elements and e8m0 scales against the ONNX
    reference QuantizeLinear with scales recomputed here."""
    from onnx import TensorProto, helper
    from onnx.reference import ReferenceEvaluator
    r = subprocess.run([mx_example, str(tmp_path)], capture_output=True, text=True,
                       env=dict(os.environ, QSIMD_ISA=isa))
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"instruction set {isa}" in r.stdout and "within_bound yes" in r.stdout
    assert "error example: code 2: element_dtype must be one of" in r.stdout
    shape = (2, 64, 14, 14)
    x = np.fromfile(tmp_path / "x.bin", np.float32).reshape(shape)
    fp4 = np.fromfile(tmp_path / "mx_fp4.bin", np.uint8)
    codes = np.fromfile(tmp_path / "mx_fp4_scales.bin", np.uint8).reshape(2, 2, 14, 14)
    # e8m0 scale of each block of 32 channels: its largest exponent field less emax (2)
    field = (x.view(np.uint32) >> 23) & 0xFF
    want = np.maximum(field.reshape(2, 2, 32, 14, 14).max(axis=2).astype(np.int64) - 2, 0)
    np.testing.assert_array_equal(codes, want)
    scales = codes.view(ml_dtypes.float8_e8m0fnu)
    node = helper.make_node("QuantizeLinear", ["x", "s"], ["y"], axis=1, block_size=32,
                            output_dtype=TensorProto.FLOAT4E2M1)
    g = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape),
                      helper.make_tensor_value_info("s", TensorProto.FLOAT8E8M0, codes.shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT4E2M1, None)])
    ref = ReferenceEvaluator(helper.make_model(g, opset_imports=[helper.make_opsetid("", 24)]))
    e = ref.run(None, {"x": x, "s": scales})[0].reshape(-1).view(np.uint8) & 0x0F
    np.testing.assert_array_equal(fp4, (e[0::2] | (e[1::2] << 4)).astype(np.uint8))
    import quark_ops
    quark_ops.require_quark()
    mx = np.fromfile(tmp_path / "mx_fp8.bin", np.float32).reshape(shape)
    bfp = np.fromfile(tmp_path / "bfp16.bin", np.float32).reshape(shape)
    want = quark_ops.mx(x, element_dtype="fp8_e4m3", axis=1, block_size=32)
    assert mx.tobytes() == np.ascontiguousarray(want, np.float32).tobytes()
    want = quark_ops.bfp(x, bfp_method="to_bfp", axis=1, bit_width=16, block_size=8)
    assert bfp.tobytes() == np.ascontiguousarray(want, np.float32).tobytes()
