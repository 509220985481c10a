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


# ------------------------------------------------------------------ MX / BFP / quantize_mx

class MxOpt(ctypes.Structure):
    _fields_ = [("element_dtype", ctypes.c_char_p), ("axis", ctypes.c_int64),
                ("block_size", ctypes.c_int64), ("rounding_mode", ctypes.c_int64),
                ("num_threads", ctypes.c_int32)]


class BfpOpt(ctypes.Structure):
    _fields_ = [("bfp_method", ctypes.c_char_p), ("axis", ctypes.c_int64),
                ("bit_width", ctypes.c_int64), ("block_size", ctypes.c_int64),
                ("rounding_mode", ctypes.c_int64), ("sub_block_size", ctypes.c_int64),
                ("sub_block_shift_bits", ctypes.c_int64),
                ("convert_to_bfloat_before_bfp", ctypes.c_int32), ("num_threads", ctypes.c_int32)]


if LIB is not None:
    LIB.qsimd_mx_quantize_dequantize.argtypes = [P(Tensor), P(Tensor), P(MxOpt), P(Error)]
    LIB.qsimd_bfp_quantize_dequantize.argtypes = [P(Tensor), P(Tensor), P(BfpOpt), P(Error)]
    LIB.qsimd_quantize_mx.argtypes = [P(Tensor), P(Tensor), P(Tensor), P(MxOpt), P(Error)]
    LIB.qsimd_mx_options_init.argtypes = [P(MxOpt)]
    LIB.qsimd_bfp_options_init.argtypes = [P(BfpOpt)]

# blocks of 4 along axis 1: [3, 0.3, -0.05, 1] has largest exponent 1; [0.6, 40, 2^-130, -7]
# exponent 5
XM = np.array([[3.0, 0.3, -0.05, 1.0, 0.6, 40.0, 2.0**-130, -7.0]], np.float32)


def mx_opt(**kw):
    o = MxOpt()
    LIB.qsimd_mx_options_init(ctypes.byref(o))
    for k, v in kw.items():
        setattr(o, k, v)
    return o


def bfp_opt(**kw):
    o = BfpOpt()
    LIB.qsimd_bfp_options_init(ctypes.byref(o))
    for k, v in kw.items():
        setattr(o, k, v)
    return o


def test_mx_options_defaults():
    o, b = mx_opt(), bfp_opt()
    assert (o.element_dtype, o.axis, o.block_size, o.rounding_mode, o.num_threads) == \
        (b"int8", 1, 32, 0, 0)
    assert (b.bfp_method, b.axis, b.bit_width, b.block_size, b.rounding_mode, b.sub_block_size,
            b.sub_block_shift_bits, b.convert_to_bfloat_before_bfp, b.num_threads) == \
        (b"to_bfp", 1, 16, 8, 0, 2, 1, 0, 0)


def test_mx_bfp_good_calls_by_hand():
    # fp4_e2m1 (emax 2), blocks of 4: scale 2^(1-2) for the first, 2^(5-2) for the second;
    # x / scale rounded half to even to e2m1 {0, .5, 1, 1.5, 2, 3, 4, 6}, saturated at 6
    y = np.full_like(XM, 9.0)
    err = Error()
    rc = LIB.qsimd_mx_quantize_dequantize(tensor(XM, 1), tensor(y, 1),
                                          ctypes.byref(mx_opt(element_dtype=b"fp4_e2m1",
                                                              block_size=4)), ctypes.byref(err))
    assert rc == OK, err.message
    assert y.tolist() == [[3.0, 0.25, 0.0, 1.0, 0.0, 32.0, 0.0, -8.0]]
    # opt NULL: int8, blocks of 32 along axis 1 (one block, exponent 5: steps of 2^-1)
    rc = LIB.qsimd_mx_quantize_dequantize(tensor(XM, 1), tensor(y, 1), None, ctypes.byref(err))
    assert rc == OK and y.tolist() == [[3.0, 0.5, 0.0, 1.0, 0.5, 40.0, 0.0, -7.0]]
    # in place (y == x), BFP with opt NULL: to_bfp 16 bits (7 mantissa bits), one block of 8
    # with exponent 5: steps of 2^(5 - 6), half away from zero, -0.05 -> -0
    z = XM.copy()
    rc = LIB.qsimd_bfp_quantize_dequantize(tensor(z, 1), tensor(z, 1), None, ctypes.byref(err))
    assert rc == OK and z.tolist() == [[3.0, 0.5, 0.0, 1.0, 0.5, 40.0, 0.0, -7.0]]
    assert np.signbit(z[0, 2]) and not np.signbit(z[0, 6])


def test_quantize_mx_good_call_by_hand():
    e = np.full(XM.shape, 0x55, np.uint8)
    s = np.full((1, 2), 0x55, np.uint8)
    err = Error()
    rc = LIB.qsimd_quantize_mx(tensor(XM, 1), tensor(e, 3), tensor(s, 24),
                               ctypes.byref(mx_opt(block_size=4)), ctypes.byref(err))
    assert rc == OK, err.message
    # int8 (1.6 fixed point): codes 127 + 1 - 6 and 127 + 5 - 6 (scales 2^-5, 2^-1); elements
    # x / scale rounded half to even: 3 * 32 = 96, 0.3 * 32 = 9.6 -> 10, -1.6 -> -2, ...
    assert s.tolist() == [[122, 126]]
    assert e.view(np.int8).tolist() == [[96, 10, -2, 32, 1, 80, 0, -14]]


def _mx_call(fn, opt, x=XM, y=None):
    """One call; y (an array of 7s unless given) must stay untouched when it fails."""
    y = np.full(XM.shape, 7.0, np.float32) if y is None else y
    before = None if isinstance(y, Tensor) else y.tobytes()
    err = Error()
    f = LIB.qsimd_mx_quantize_dequantize if fn == "mx" else LIB.qsimd_bfp_quantize_dequantize
    rc = f(x if isinstance(x, Tensor) else tensor(x, 1),
           y if isinstance(y, Tensor) else tensor(y, 1), opt, ctypes.byref(err))
    if rc != OK and before is not None:
        assert y.tobytes() == before, "y was written by a failed call"
    return rc, err


@pytest.mark.parametrize("kw,text", [
    (dict(element_dtype=b"fp8"), "element_dtype must be one of"),
    (dict(element_dtype=b"\xff" * 300), "element_dtype must be one of"),
    (dict(element_dtype=b""), "element_dtype"),
    (dict(axis=2), "axis must be in [-2, 1], got 2"), (dict(axis=-3), "axis"),
    (dict(axis=-2**63), "axis"),
    (dict(block_size=0), "block_size must be in [1, 4611686018427387904]"),
    (dict(block_size=-2**63), "block_size"), (dict(block_size=2**62 + 1), "block_size"),
    (dict(rounding_mode=3), "rounding_mode must be in [0, 2], got 3"),
    (dict(rounding_mode=-1), "rounding_mode"),
    (dict(num_threads=65), "num_threads"), (dict(num_threads=-1), "num_threads"),
])
def test_mx_bad_options(kw, text):
    rc, err = _mx_call("mx", ctypes.byref(mx_opt(**kw)))
    expect_error(rc, err, ERR_VALUE, text)


def test_mx_null_element_dtype_is_int8():
    y = np.zeros_like(XM)
    err = Error()
    rc = LIB.qsimd_mx_quantize_dequantize(tensor(XM, 1), tensor(y, 1),
                                          ctypes.byref(mx_opt(element_dtype=None)),
                                          ctypes.byref(err))
    assert rc == OK and y.tolist() == [[3.0, 0.5, 0.0, 1.0, 0.5, 40.0, 0.0, -7.0]]


@pytest.mark.parametrize("kw,text", [
    (dict(bfp_method=b"to_bfp_bad"), "bfp_method must be 'to_bfp' or 'to_bfp_prime'"),
    (dict(bit_width=9), "bit_width must be in [10, 32], got 9"), (dict(bit_width=33), "bit_width"),
    (dict(bfp_method=b"to_bfp_prime", sub_block_size=3), "sub_block_size (3) must divide"),
    (dict(bfp_method=b"to_bfp_prime", sub_block_size=0), "sub_block_size must be in"),
    (dict(bfp_method=b"to_bfp_prime", sub_block_shift_bits=31), "sub_block_shift_bits"),
    (dict(bfp_method=b"to_bfp_prime", sub_block_shift_bits=-1), "sub_block_shift_bits"),
    (dict(bfp_method=b"to_bfp_prime", block_size=0), "block_size"),
    (dict(axis=5), "axis"), (dict(block_size=-8), "block_size"),
    (dict(rounding_mode=2**40), "rounding_mode"), (dict(num_threads=2**31 - 1), "num_threads"),
])
def test_bfp_bad_options(kw, text):
    rc, err = _mx_call("bfp", ctypes.byref(bfp_opt(**kw)))
    expect_error(rc, err, ERR_VALUE, text)


def test_bfp_sub_block_attributes_ignored_by_to_bfp():
    rc, err = _mx_call("bfp", ctypes.byref(bfp_opt(sub_block_size=3, sub_block_shift_bits=99)),
                       y=np.zeros_like(XM))
    assert rc == OK, err.message


@pytest.mark.parametrize("fn", ["mx", "bfp"])
def test_mx_bfp_bad_tensors(fn):
    opt = None
    # NULL tensors
    err = Error()
    f = LIB.qsimd_mx_quantize_dequantize if fn == "mx" else LIB.qsimd_bfp_quantize_dequantize
    assert f(None, tensor(XM, 1), opt, ctypes.byref(err)) == ERR_VALUE and b"required" in err.message
    assert f(tensor(XM, 1), None, opt, None) == ERR_VALUE
    # types
    rc, err = _mx_call(fn, opt, x=tensor(XM, 10))
    expect_error(rc, err, ERR_TYPE, "x must be float32, got float16")
    y8 = np.zeros(XM.shape, np.uint8)
    rc, err = _mx_call(fn, opt, y=tensor(y8, 2))
    expect_error(rc, err, ERR_TYPE, "y must be float32")
    # shapes
    y = np.full((8, 1), 7.0, np.float32)
    rc, err = _mx_call(fn, opt, y=y)
    expect_error(rc, err, ERR_VALUE, "y must have the shape of x")
    rc, err = _mx_call(fn, opt, x=tensor(XM, 1, ()))
    expect_error(rc, err, ERR_VALUE, "at least one dimension")
    tx = tensor(XM, 1)
    tx.shape = None
    rc, err = _mx_call(fn, opt, x=tx)
    expect_error(rc, err, ERR_VALUE, "x: shape is NULL")
    rc, err = _mx_call(fn, opt, x=tensor(XM, 1, (2**62, 2**62)))
    expect_error(rc, err, ERR_VALUE, "too many elements")
    tx = tensor(XM, 1)
    tx.ndim = 33
    rc, err = _mx_call(fn, opt, x=tx)
    expect_error(rc, err, ERR_VALUE, "rank must be between 0 and 32")
    # NULL data with elements; none needed without
    rc, err = _mx_call(fn, opt, x=tensor(None, 1, XM.shape))
    expect_error(rc, err, ERR_VALUE, "NULL")
    err = Error()
    assert f(tensor(None, 1, (0, 5)), tensor(None, 1, (0, 5)), opt, ctypes.byref(err)) == OK


def test_quantize_mx_bad_arguments():
    e = np.full(XM.shape, 0x55, np.uint8)
    s = np.full((1, 2), 0x55, np.uint8)
    opt = ctypes.byref(mx_opt(block_size=4))

    def call(x=None, et=3, st=24, eshape="from-array", sshape="from-array", o=opt):
        err = Error()
        rc = LIB.qsimd_quantize_mx(tensor(XM, 1) if x is None else x, tensor(e, et, eshape),
                                   tensor(s, st, sshape), o, ctypes.byref(err))
        assert e.tolist() == [[0x55] * 8] and s.tolist() == [[0x55] * 2], "written on error"
        return rc, err

    expect_error(*call(et=2), ERR_TYPE, "elements must be float8_e4m3fn")
    expect_error(*call(et=18), ERR_TYPE, "elements must be")
    expect_error(*call(st=1), ERR_TYPE, "scales must be float8_e8m0fnu")
    expect_error(*call(x=tensor(XM, 16)), ERR_TYPE, "x must be float32")
    expect_error(*call(eshape=(8, 1)), ERR_VALUE, "elements must have the shape of x")
    expect_error(*call(sshape=(1, 3)), ERR_VALUE, "scales must have x's shape")
    expect_error(*call(sshape=(2,)), ERR_VALUE, "scales must have x's shape")
    expect_error(*call(o=ctypes.byref(mx_opt(block_size=0))), ERR_VALUE, "block_size")
    expect_error(*call(o=ctypes.byref(mx_opt(axis=7))), ERR_VALUE, "axis")
    expect_error(*call(o=ctypes.byref(mx_opt(num_threads=99))), ERR_VALUE, "num_threads")
    expect_error(*call(x=tensor(XM, 1, ())), ERR_VALUE, "at least one dimension")
    err = Error()
    assert LIB.qsimd_quantize_mx(None, None, None, None, ctypes.byref(err)) == ERR_VALUE
    assert b"required" in err.message
    # element_dtype and rounding_mode are not used: the type is the elements' own
    rc, err = call(o=ctypes.byref(mx_opt(block_size=4, element_dtype=b"nonsense",
                                         rounding_mode=99)), et=2)
    assert rc == ERR_TYPE
