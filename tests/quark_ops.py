"""AMD Quark's real custom ops (domain com.amd.quark) run through onnxruntime, for bit-for-bit
comparisons.

`quark_library()` downloads the amd-quark wheel from the package index with pip (once), compiles
its CPU custom-op sources with the system C++ compiler against the onnxruntime C API headers the
wheel ships, and caches the shared library; `run(op, x, **attributes)` runs one node of it.
Nothing of Quark is copied into this repository: the sources and the list of files come from
the downloaded wheel. `require_quark()` skips the calling test with the reason when the wheel
cannot be downloaded, no compiler exists or onnxruntime is missing.

The cache directory is $QSIMD_QUARK_CACHE, else ~/.cache/qsimd-quark; QSIMD_QUARK_WHEEL may
name an already downloaded wheel file.
"""
from __future__ import annotations

import functools
import glob
import os
import shutil
import subprocess
import sys
import zipfile

import numpy as np
import pytest

QUARK_VERSION = "0.13"
DOMAIN = "com.amd.quark"
_OPS_DIR = "quark/onnx/operators/custom_ops"


def _cache_dir() -> str:
    d = os.environ.get("QSIMD_QUARK_CACHE") or os.path.join(
        os.path.expanduser("~"), ".cache", "qsimd-quark")
    d = os.path.join(d, QUARK_VERSION)
    os.makedirs(d, exist_ok=True)
    return d


def _wheel(cache: str) -> str:
    given = os.environ.get("QSIMD_QUARK_WHEEL")
    if given:
        return given
    found = glob.glob(os.path.join(cache, f"amd_quark-{QUARK_VERSION}-*.whl"))
    if found:
        return found[0]
    r = subprocess.run([sys.executable, "-m", "pip", "download", f"amd-quark=={QUARK_VERSION}",
                        "--no-deps", "--only-binary=:all:", "-q", "-d", cache],
                       capture_output=True, text=True, timeout=600)
    found = glob.glob(os.path.join(cache, f"amd_quark-{QUARK_VERSION}-*.whl"))
    if r.returncode or not found:
        raise RuntimeError(f"pip download amd-quark=={QUARK_VERSION} failed: "
                           f"{(r.stderr or r.stdout).strip()[-300:]}")
    return found[0]


def _build(cache: str) -> str:
    lib = os.path.join(cache, "libquark_custom_ops.so")
    if os.path.exists(lib):
        return lib
    cxx = os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++")
    if not cxx:
        raise RuntimeError("no C++ compiler (g++ / c++ / $CXX) to build Quark's op library")
    src_root = os.path.join(cache, "wheel")
    with zipfile.ZipFile(_wheel(cache)) as z:
        z.extractall(src_root, [n for n in z.namelist() if n.startswith(_OPS_DIR + "/")])
    ops = os.path.join(src_root, _OPS_DIR)
    inc = os.path.join(ops, "include")
    ort_inc = glob.glob(os.path.join(inc, "onnxruntime-*"))
    gsl_inc = glob.glob(os.path.join(inc, "gsl-*"))
    if not ort_inc or not gsl_inc:
        raise RuntimeError("the amd-quark wheel has no bundled onnxruntime / gsl headers")
    src = os.path.join(ops, "src")
    # the CPU op library: the op glue files at the top plus the CPU kernels; the torch
    # bindings and the CUDA kernels are not part of it
    sources = [f for f in sorted(glob.glob(os.path.join(src, "*.cc")))
               if "torch" not in os.path.basename(f)]
    sources += sorted(glob.glob(os.path.join(src, "*", "cpu", "*.cc")))
    includes = [inc, os.path.join(ort_inc[0], "onnxruntime", "core", "session"),
                os.path.join(ort_inc[0], "onnxruntime"), ort_inc[0], gsl_inc[0], src]
    tmp = lib + f".{os.getpid()}.tmp"
    cmd = [cxx, "-O2", "-std=c++17", "-shared", "-fPIC", "-w", "-o", tmp]
    cmd += [f"-I{d}" for d in includes] + sources
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    except OSError as e:
        raise RuntimeError(f"the C++ compiler {cxx} could not be run: {e}") from None
    if r.returncode:
        raise RuntimeError(f"building Quark's op library failed: {r.stderr.strip()[-500:]}")
    os.replace(tmp, lib)
    return lib


@functools.lru_cache(maxsize=1)
def _library():
    if os.environ.get("QSIMD_TEST_NO_ORT"):   # the sanitizer run: no onnxruntime under ASan
        return None, "onnxruntime left out (QSIMD_TEST_NO_ORT)"
    try:
        import onnxruntime
    except ImportError:
        return None, "onnxruntime is not installed"
    try:
        lib = _build(_cache_dir())
    except (RuntimeError, OSError, subprocess.SubprocessError, zipfile.BadZipFile) as e:
        return None, str(e)
    try:   # the library asks for the onnxruntime API of Quark's bundled headers
        onnxruntime.SessionOptions().register_custom_ops_library(lib)
    except Exception as e:   # noqa: BLE001 - an older onnxruntime (CPython 3.10 stops at 1.23)
        return None, (f"onnxruntime {onnxruntime.__version__} cannot load it: "
                      f"{str(e).splitlines()[0][:160]}")
    return lib, None


def quark_library() -> str | None:
    """Path of the built op library, or None (see `skip_reason()`)."""
    return _library()[0]


def skip_reason() -> str | None:
    return _library()[1]


def require_quark() -> str:
    lib, why = _library()
    if lib is None:
        pytest.skip(f"AMD Quark's custom ops unavailable: {why}")
    return lib


@functools.lru_cache(maxsize=64)
def _session(op: str, ndim: int, attrs: tuple, half: bool = False):
    import onnxruntime as ort
    from onnx import TensorProto, helper
    node = helper.make_node(op, ["x"], ["y"], domain=DOMAIN, **dict(attrs))
    t = TensorProto.FLOAT16 if half else TensorProto.FLOAT
    graph = helper.make_graph(
        [node], "quark_op",
        [helper.make_tensor_value_info("x", t, [None] * ndim)],
        [helper.make_tensor_value_info("y", t, None)])
    # IR 8 (opset 17's): onnx's default IR is newer than what older onnxruntimes load (1.23,
    # the last for CPython 3.10, stops at IR 11)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid(DOMAIN, 1)],
                              ir_version=8)
    so = ort.SessionOptions()
    so.register_custom_ops_library(require_quark())
    so.intra_op_num_threads = 1
    return ort.InferenceSession(model.SerializeToString(), so,
                                providers=["CPUExecutionProvider"])


def run(op: str, x: np.ndarray, **attrs) -> np.ndarray:
    """One com.amd.quark node on float32 or float16 x (a copy: some of Quark's ops write their
    input)."""
    half = np.asarray(x).dtype == np.float16
    x = np.array(x, np.float16 if half else np.float32, copy=True, order="C")
    sess = _session(op, x.ndim, tuple(sorted(attrs.items())), half)
    return sess.run(None, {"x": x})[0]


def mx(x, **attrs):
    return run("MXQuantizeDequantize", x, **attrs)


def bfp(x, **attrs):
    return run("BFPQuantizeDequantize", x, **attrs)
