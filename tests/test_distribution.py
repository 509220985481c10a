"""What the package ships for C users and host processes: the extension exports PyInit__core
only and binds its own copy of the core (a libqsimd.so loaded by the host cannot take over its
calls), carries no RUNPATH into the build machine, and the static library's only global
symbols are the qsimd_* API. The CMake build with chosen instruction sets, consumed through
find_package(qsimd), runs the C example on what it was built with."""
import ctypes
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig

import numpy as np
import pytest

import qsimd
from qsimd import _core

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CC = (os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc").split()[0]
ELF = sys.platform.startswith("linux")


def _gate():
    """.ci/size_gate.py's ELF reader (reads any target architecture, needs no binutils)."""
    path = os.path.join(ROOT, ".ci", "size_gate.py")
    if not os.path.exists(path):
        pytest.skip("needs the source tree")
    spec = importlib.util.spec_from_file_location("size_gate", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _read(path):
    with open(path, "rb") as f:
        return f.read()


@pytest.mark.skipif(not ELF, reason="ELF symbol tables")
def test_extension_exports_only_its_init():
    gate = _gate()
    elf = gate.Elf(_read(_core.__file__))
    assert sorted(set(elf.defined_globals(11))) == gate.EXT_EXPORTS   # + qsimd.ort's entry


@pytest.mark.skipif(not ELF, reason="ELF dynamic section")
def test_extension_has_no_runpath():
    if shutil.which("readelf") is None:
        pytest.skip("readelf is not installed")
    out = subprocess.run(["readelf", "-d", _core.__file__], capture_output=True, text=True,
                         check=True).stdout
    assert "RPATH" not in out and "RUNPATH" not in out, out


@pytest.mark.skipif(not ELF or bool(os.environ.get("QSIMD_UNDER_ASAN")),
                    reason="ELF static library, as shipped (not instrumented)")
def test_static_library_globals_are_the_api():
    gate = _gate()
    lib = os.path.join(qsimd.get_library_dir(), "libqsimd.a")
    names = []
    for _, body in gate.ar_members(_read(lib)):
        names += gate.Elf(body).defined_globals(2)
    assert names and all(n.startswith("qsimd_") for n in names), sorted(
        n for n in names if not n.startswith("qsimd_"))
    assert "qsimd_quantize_linear" in names and "qsimd_set_isa" in names
    if shutil.which("nm"):   # and as binutils sees it
        out = subprocess.run(["nm", "-g", "--defined-only", lib], capture_output=True,
                             text=True, check=True).stdout
        syms = [ln.split()[-1] for ln in out.splitlines() if len(ln.split()) == 3]
        assert syms and all(s.startswith("qsimd_") for s in syms), syms


@pytest.mark.skipif(not ELF or shutil.which(CC) is None, reason="needs Linux and a C compiler")
def test_host_libqsimd_cannot_interpose(tmp_path):
    """A host process that loaded its own libqsimd.so (RTLD_GLOBAL) first: the extension's
    calls still reach its own core."""
    src = tmp_path / "fake.c"
    src.write_text('const char *qsimd_get_isa(void) { return "fake"; }\n'
                   'const char *qsimd_version(void) { return "fake"; }\n')
    lib = tmp_path / "libqsimd.so"
    r = subprocess.run([CC, "-shared", "-fPIC", "-o", str(lib), str(src)], capture_output=True,
                       text=True)
    if r.returncode:
        pytest.skip(f"cannot build a shared library here: {r.stderr[:200]}")
    code = ("import ctypes, sys; h = ctypes.CDLL(sys.argv[1], mode=ctypes.RTLD_GLOBAL); "
            "h.qsimd_get_isa.restype = ctypes.c_char_p; assert h.qsimd_get_isa() == b'fake'; "
            "import qsimd; print(qsimd.get_isa())")
    try:
        r = subprocess.run([sys.executable, "-c", code, str(lib)], capture_output=True,
                           text=True, timeout=120)
    except OSError as e:   # an emulated interpreter (qemu-user without binfmt_misc)
        pytest.skip(f"cannot start another interpreter here: {e}")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() in qsimd.available_isas()


@pytest.mark.skipif(sys.platform == "win32" or shutil.which("cmake") is None
                    or shutil.which(CC) is None
                    or not os.path.exists(os.path.join(ROOT, "examples", "c", "CMakeLists.txt")),
                    reason="needs cmake, a Unix C compiler and the source tree")
def test_cmake_isa_options_and_find_package(tmp_path):
    """The library built with a chosen set of instruction sets (x86-64: SSE4.1 only, the
    quickest to compile; aarch64: NEON), installed, and the example built through
    find_package(qsimd) against its static library: it runs on what was built in and reports
    the rest as unavailable."""
    arch = sysconfig.get_platform()
    if arch.endswith(("x86_64", "amd64")):
        opts, built = ["-DQSIMD_ENABLE_AVX2=OFF", "-DQSIMD_ENABLE_AVX512=OFF"], "sse41"
        missing = "avx2"
    elif arch.endswith(("aarch64", "arm64")):
        opts, built, missing = [], "neon", None
    else:
        opts, built, missing = [], "scalar", None
    if os.environ.get("QSIMD_UNDER_ASAN"):
        # the sanitized run builds the CMake library in test_c_api already; this one adds
        # half a minute to a time-boxed lane and checks the build, not the code
        pytest.skip("the CMake options are checked by the plain run")
    b, prefix, ex = tmp_path / "b", tmp_path / "prefix", tmp_path / "ex"
    for cmd in (["cmake", "-S", os.path.join(ROOT, "csrc"), "-B", str(b),
                 f"-DCMAKE_C_COMPILER={CC}", *opts],
                ["cmake", "--build", str(b), "-j", "2"],
                ["cmake", "--install", str(b), "--prefix", str(prefix)],
                ["cmake", "-S", os.path.join(ROOT, "examples", "c"), "-B", str(ex),
                 f"-DCMAKE_C_COMPILER={CC}", f"-DCMAKE_PREFIX_PATH={prefix}"],
                ["cmake", "--build", str(ex)]):
        r = subprocess.run(cmd, capture_output=True, text=True)
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    exe = str(ex / "quantize_image")
    if built not in qsimd.available_isas():
        pytest.skip(f"this CPU cannot run {built}")
    try:
        r = subprocess.run([exe, str(tmp_path)], capture_output=True, text=True,
                           env=dict(os.environ, QSIMD_ISA=""))
    except OSError as e:   # an emulated interpreter (qemu-user without binfmt_misc)
        pytest.skip(f"cannot execute a compiled program here: {e}")
    assert r.returncode == 0 and f"instruction set {built}" in r.stdout, r.stdout + r.stderr
    if missing:   # compiled out: unknown to this library, the best built-in tier is used
        r = subprocess.run([exe, str(tmp_path)], capture_output=True, text=True,
                           env=dict(os.environ, QSIMD_ISA=missing))
        assert r.returncode == 0 and f"instruction set {built}" in r.stdout, r.stdout
    gate = _gate() if ELF and not os.environ.get("QSIMD_UNDER_ASAN") else None
    lib = next(p for p in prefix.rglob("libqsimd.a"))
    if gate is not None:
        names = [n for _, body in gate.ar_members(_read(lib))
                 for n in gate.Elf(body).defined_globals(2)]
        assert names and all(n.startswith("qsimd_") for n in names), names
        # the shared library exports the C API and nothing else
        shared = next(p for p in prefix.rglob("libqsimd.so*") if not p.is_symlink())
        names = gate.Elf(_read(shared)).defined_globals(11)
        assert "qsimd_quantize_linear" in names, names
        assert all(n.startswith("qsimd_") for n in names), names
    assert list(prefix.rglob("qsimdConfig.cmake")) and list(prefix.rglob("qsimd.pc"))
    # the onnxruntime custom-op module (QSIMD_BUILD_ORT, default ON): RegisterCustomOps only,
    # and onnxruntime runs Quark's nodes with it
    mod = next(p for p in prefix.rglob("libqsimd_ort.*"))
    if gate is not None:
        assert sorted(set(gate.Elf(_read(mod)).defined_globals(11))) == ["RegisterCustomOps"]
    if not os.environ.get("QSIMD_TEST_NO_ORT"):
        ort = pytest.importorskip("onnxruntime")
        from onnx import TensorProto, helper
        node = helper.make_node("VitisQuantizeLinear", ["x", "s", "z"], ["y"],
                                domain="com.vai.quantize")
        graph = helper.make_graph(
            [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
            [helper.make_tensor_value_info("y", TensorProto.INT8, [3])],
            [helper.make_tensor("s", TensorProto.FLOAT, [], [0.5]),
             helper.make_tensor("z", TensorProto.INT8, [], [1])])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                        helper.make_opsetid("com.vai.quantize", 1)],
                                  ir_version=8)
        so = ort.SessionOptions()
        so.register_custom_ops_library(str(mod))
        sess = ort.InferenceSession(model.SerializeToString(), so,
                                    providers=["CPUExecutionProvider"])
        y = sess.run(None, {"x": np.array([1.5, -2.2, 300], np.float32)})[0]
        assert y.tolist() == [4, -3, 127]


def test_license_in_installed_metadata():
    """The distribution ships the Apache-2.0 text (License-File) beside its SPDX expression."""
    import importlib.metadata as md
    try:
        dist = md.distribution("qsimd")
    except md.PackageNotFoundError:
        pytest.skip("qsimd is not installed (an in-place build on the path)")
    assert dist.metadata["License-Expression"] == "Apache-2.0"
    assert "LICENSE" in (dist.metadata.get_all("License-File") or [])
    texts = [f.read_text() for f in dist.files or [] if f.name == "LICENSE"]
    assert texts and "Apache License" in texts[0] and "Version 2.0, January 2004" in texts[0]


def test_typing_marker_and_stubs_beside_the_package():
    """py.typed and the stubs sit beside the modules they describe (the wheel ships them:
    pyproject.toml's package-data, checked in .ci/portability.sh)."""
    here = os.path.dirname(os.path.abspath(qsimd.__file__))
    for f in ("py.typed", "_core.pyi", "__init__.pyi", "quark.pyi", "onnx.pyi"):
        assert os.path.exists(os.path.join(here, f)), f
