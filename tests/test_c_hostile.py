"""The C API against hostile descriptors, called through ctypes: NULL pointers, ranks and
dimensions out of range,
unknown dtype codes, bad options. Each must return its documented error code with a message
and leave y untouched. The libFuzzer harness (tests/fuzz/fuzz_c_api.c) explores the same
space at random; these are the fixed cases, including what it found."""
import ctypes

import numpy as np
import pytest

import qsimd

OK, ERR_TYPE, ERR_VALUE = 0, 1, 2



def _load():
    """The core the extension was built from, as a shared library: the extension exports only
    PyInit__core, so the package's static library (the same objects, position-independent) is
    linked into one in a temporary directory. None without a C compiler (or off ELF)."""
    try:   # an older build whose extension exports the C API
        lib = ctypes.CDLL(qsimd._core.__file__)
        lib.qsimd_quantize_linear
        return lib
    except (OSError, AttributeError):
        pass
    import os
    import shutil
    import subprocess
    import sysconfig
    import tempfile
    cc = (os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc").split()[0]
    static = os.path.join(qsimd.get_library_dir(), "libqsimd.a")
    if shutil.which(cc) is None or not os.path.exists(static):
        return None
    so = os.path.join(tempfile.mkdtemp(prefix="qsimd-ctypes-"), "libqsimd_ctypes.so")
    r = subprocess.run([cc, "-shared", "-o", so, "-Wl,--whole-archive", static,
                        "-Wl,--no-whole-archive", "-lm", "-pthread"], capture_output=True)
    if r.returncode != 0:
        return None
    return ctypes.CDLL(so)


LIB = _load()
pytestmark = pytest.mark.skipif(LIB is None, reason="needs a C compiler to load the C API")


class Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int32), ("ndim", ctypes.c_int32),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("packed", ctypes.c_int32)]


class QOpt(ctypes.Structure):
    _fields_ = [("axis", ctypes.c_int64), ("block_size", ctypes.c_int64),
                ("saturate", ctypes.c_int32), ("precision", ctypes.c_int32),
                ("num_threads", ctypes.c_int32)]


class DOpt(ctypes.Structure):
    _fields_ = [("axis", ctypes.c_int64), ("block_size", ctypes.c_int64),
                ("num_threads", ctypes.c_int32)]


class Error(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("message", ctypes.c_char * 256)]


if LIB is not None:
    P = ctypes.POINTER
    LIB.qsimd_quantize_linear.argtypes = [P(Tensor), P(Tensor), P(Tensor), P(QOpt), P(Tensor),
                                          P(Error)]
    LIB.qsimd_dequantize_linear.argtypes = [P(Tensor), P(Tensor), P(Tensor), P(DOpt), P(Tensor),
                                            P(Error)]
    LIB.qsimd_dynamic_quantize_linear.argtypes = [P(Tensor), P(Tensor), P(ctypes.c_float),
                                                  P(ctypes.c_uint8), P(Error)]
    LIB.qsimd_set_isa.argtypes = [ctypes.c_char_p, P(Error)]
    LIB.qsimd_get_isa.restype = ctypes.c_char_p


def tensor(arr, dtype, shape="from-array", packed=0):
    """A descriptor of `arr` (kept alive by the caller) with dtype code and shape."""
    t = Tensor()
    t.data = arr.ctypes.data if arr is not None else None
    t.dtype = dtype
    if shape == "from-array":
        shape = arr.shape
    if shape is None:
        t.ndim, t.shape = 0, None
    else:
        dims = (ctypes.c_int64 * max(1, len(shape)))(*shape)
        t._dims = dims   # keep the array alive with the descriptor
        t.ndim, t.shape = len(shape), ctypes.cast(dims, ctypes.POINTER(ctypes.c_int64))
    t.packed = packed
    return t


def call_q(x, s, z, y, opt=None):
    err = Error()
    rc = LIB.qsimd_quantize_linear(x, s, z, opt, y, ctypes.byref(err))
    return rc, err


X = np.array([[1.0, -2.5, 300.0], [0.5, 7.0, -1e9]], np.float32)
S = np.array(0.5, np.float32)


def expect_error(rc, err, code, text, y=None, before=None):
    assert rc == code and err.code == code, (rc, err.code, err.message)
    assert text in err.message.decode(), err.message
    if y is not None:
        assert y.tobytes() == before, "y was written by a failed call"


def test_good_call_through_ctypes():
    y = np.zeros((2, 3), np.uint8)
    rc, err = call_q(tensor(X, 1), tensor(S, 1), None, tensor(y, 2))
    assert rc == OK, err.message
    assert y.tolist() == [[2, 0, 255], [1, 14, 0]]


def test_null_shape_with_rank():
    # found by the libFuzzer harness: a NULL shape with ndim > 0 was dereferenced
    y = np.full((2, 3), 7, np.uint8)
    s1 = S.reshape(1)
    for which in range(3):
        ts = [tensor(X, 1), tensor(s1, 1), tensor(y, 2)]
        ts[which].shape = None
        rc, err = call_q(ts[0], ts[1], None, ts[2])
        expect_error(rc, err, ERR_VALUE, "shape is NULL", y, bytes([7] * 6))
    z = np.zeros(1, np.uint8)
    tz = tensor(z, 2)
    tz.shape = None
    rc, err = call_q(tensor(X, 1), tensor(S, 1), tz, tensor(y, 2))
    expect_error(rc, err, ERR_VALUE, "zero_point: shape is NULL")
    xd = np.zeros(3, np.uint8)
    tx = tensor(xd, 2)
    tx.shape = None
    err = Error()
    rc = LIB.qsimd_dequantize_linear(tx, tensor(S, 1), None, None,
                                     tensor(np.zeros(3, np.float32), 1), ctypes.byref(err))
    expect_error(rc, err, ERR_VALUE, "x: shape is NULL")
    tx = tensor(X, 1)
    tx.shape = None
    rc = LIB.qsimd_dynamic_quantize_linear(tx, tensor(y, 2), ctypes.byref(ctypes.c_float()),
                                           ctypes.byref(ctypes.c_uint8()), ctypes.byref(err))
    expect_error(rc, err, ERR_VALUE, "x: shape is NULL")


@pytest.mark.parametrize("shape,text", [
    ((2, -3), "negative"), ((-1,), "negative"), ((2**62, 2**62), "too many elements"),
    ((2**63 - 1,), "too many elements"), ((0, 2**63 - 1, 2**63 - 1), "too many elements"),
])
def test_bad_dimensions(shape, text):
    y = np.full((2, 3), 9, np.uint8)
    rc, err = call_q(tensor(X, 1, shape), tensor(S, 1), None, tensor(y, 2))
    assert rc == ERR_VALUE and text in err.message.decode(), err.message
    assert (y == 9).all()


@pytest.mark.parametrize("ndim", [-1, -2**31, 33, 2**31 - 1])
def test_rank_out_of_range(ndim):
    y = np.full((2, 3), 9, np.uint8)
    tx = tensor(X, 1)
    tx.ndim = ndim
    rc, err = call_q(tx, tensor(S, 1), None, tensor(y, 2))
    expect_error(rc, err, ERR_VALUE, "rank must be between 0 and 32", y, bytes([9] * 6))


@pytest.mark.parametrize("role", ["x", "scale", "zp", "y"])
@pytest.mark.parametrize("code", [0, 7, 9, 11, 17, 23, 27, -1, 2**31 - 1])
def test_unknown_or_wrong_dtype_codes(role, code):
    y = np.full((2, 3), 9, np.uint8)
    z = np.zeros((), np.uint8)
    ts = {"x": tensor(X, 1), "scale": tensor(S, 1), "zp": tensor(z, 2), "y": tensor(y, 2)}
    ts[role].dtype = code
    rc, err = call_q(ts["x"], ts["scale"], ts["zp"], ts["y"])
    assert rc in (ERR_TYPE, ERR_VALUE) and err.code == rc and err.message, (rc, err.message)
    assert (y == 9).all()


def test_null_pointers():
    y = np.zeros((2, 3), np.uint8)
    for args in ((None, tensor(S, 1), tensor(y, 2)), (tensor(X, 1), None, tensor(y, 2)),
                 (tensor(X, 1), tensor(S, 1), None)):
        rc, err = call_q(args[0], args[1], None, args[2])
        expect_error(rc, err, ERR_VALUE, "required")
    # NULL data: refused when there are elements, fine when there are none
    rc, err = call_q(tensor(None, 1, (2, 3)), tensor(S, 1), None, tensor(y, 2))
    expect_error(rc, err, ERR_VALUE, "NULL")
    rc, err = call_q(tensor(None, 1, (0, 3)), tensor(None, 1, ()), None, tensor(None, 2, (0, 3)))
    assert rc == OK, err.message
    # a NULL error pointer is allowed
    assert LIB.qsimd_quantize_linear(None, None, None, None, None, None) == ERR_VALUE
    err = Error()
    rc = LIB.qsimd_dynamic_quantize_linear(tensor(X, 1), tensor(y, 2), None, None,
                                           ctypes.byref(err))
    expect_error(rc, err, ERR_VALUE, "required")


@pytest.mark.parametrize("threads", [-1, 65, 2**31 - 1, -2**31])
def test_bad_options(threads):
    y = np.full((2, 3), 9, np.uint8)
    opt = QOpt(1, 0, 1, 0, threads)
    rc, err = call_q(tensor(X, 1), tensor(S, 1), None, tensor(y, 2), ctypes.byref(opt))
    expect_error(rc, err, ERR_VALUE, "num_threads", y, bytes([9] * 6))
    opt = QOpt(1, 0, 1, 11, 0)   # double precision: not an ONNX choice
    rc, err = call_q(tensor(X, 1), tensor(S, 1), None, tensor(y, 2), ctypes.byref(opt))
    expect_error(rc, err, ERR_TYPE, "precision")
    opt = QOpt(2**63 - 1, -2**63, 1, 0, 0)
    s3 = np.ones(3, np.float32)
    rc, err = call_q(tensor(X, 1), tensor(s3, 1), None, tensor(y, 2), ctypes.byref(opt))
    expect_error(rc, err, ERR_VALUE, "block_size")


def test_set_isa_garbage_keeps_the_choice():
    before = LIB.qsimd_get_isa()
    for name in (b"no-such", b"\xff\xfe", b"x" * 299, b"scalar ", b"AVX2"):
        err = Error()
        assert LIB.qsimd_set_isa(name, ctypes.byref(err)) == ERR_VALUE
        assert err.message and LIB.qsimd_get_isa() == before
