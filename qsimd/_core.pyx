# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, freethreading_compatible=True
"""Cython bridge: ndarray -> qsimd_tensor, one C call with the GIL released, C error -> exception.

Arrays arrive already validated by the Python layer (C-contiguous, aligned, native byte
order, supported dtype); shapes, axes and block sizes are validated by the C operator layer,
whose messages become the exceptions raised here. Buffers are read through NumPy's C API
rather than typed memoryviews: acquiring a memoryview costs more than a 1K-element kernel.
"""
cimport numpy as cnp
from libc.stdint cimport int32_t, int64_t, uint8_t

cnp.import_array()

cdef extern from "qsimd.h" nogil:
    ctypedef struct qsimd_error:
        int code
        char message[256]
    ctypedef struct qsimd_tensor:
        void *data
        int32_t dtype
        int32_t ndim
        const int64_t *shape
        int32_t packed
    ctypedef struct qsimd_quantize_options:
        int64_t axis
        int64_t block_size
        int32_t saturate
        int32_t precision
        int32_t num_threads
    ctypedef struct qsimd_dequantize_options:
        int64_t axis
        int64_t block_size
        int32_t num_threads
    int QSIMD_MAX_DIMS
    int QSIMD_OK, QSIMD_ERR_TYPE, QSIMD_ERR_VALUE, QSIMD_ERR_NOMEM, QSIMD_ERR_UNAVAILABLE
    unsigned QSIMD_CPU_SSE41, QSIMD_CPU_AVX2, QSIMD_CPU_FMA, QSIMD_CPU_F16C
    unsigned QSIMD_CPU_AVX512F, QSIMD_CPU_AVX512BW, QSIMD_CPU_AVX512DQ, QSIMD_CPU_AVX512VL
    unsigned QSIMD_CPU_NEON, QSIMD_CPU_FP16, QSIMD_CPU_OS_AVX, QSIMD_CPU_OS_AVX512

    int qsimd_quantize_linear(const qsimd_tensor *x, const qsimd_tensor *scale,
                              const qsimd_tensor *zero_point,
                              const qsimd_quantize_options *opt, const qsimd_tensor *y,
                              qsimd_error *err)
    int qsimd_dequantize_linear(const qsimd_tensor *x, const qsimd_tensor *scale,
                                const qsimd_tensor *zero_point,
                                const qsimd_dequantize_options *opt, const qsimd_tensor *y,
                                qsimd_error *err)
    int qsimd_dynamic_quantize_linear(const qsimd_tensor *x, const qsimd_tensor *y,
                                      float *y_scale, uint8_t *y_zero_point, qsimd_error *err)
    const char *qsimd_get_isa()
    int qsimd_isa_available(const char *name)
    int qsimd_set_isa(const char *name, qsimd_error *err)
    const char *const *qsimd_isa_names()
    unsigned qsimd_cpu_features()
    const char *qsimd_version()
    int qsimd_set_num_threads(int n)
    int qsimd_get_num_threads()

cdef extern from "dispatch.h" nogil:
    const char *qsimd_env_isa_error()


# Shapes are copied into int64 (npy_intp is 32-bit on 32-bit platforms).
cdef struct shaped:
    qsimd_tensor t
    int64_t dims[32]


cdef inline int fill(shaped *s, cnp.ndarray a, int dtype, int packed) except -1:
    cdef int i, nd = cnp.PyArray_NDIM(a)
    cdef cnp.npy_intp *dims = cnp.PyArray_DIMS(a)
    if nd > 32:
        raise ValueError(f"arrays of rank {nd} are not supported (at most 32 dimensions)")
    for i in range(nd):
        s.dims[i] = dims[i]
    s.t.data = cnp.PyArray_DATA(a)
    s.t.dtype = dtype
    s.t.ndim = nd
    s.t.shape = s.dims
    s.t.packed = packed
    return 0


cdef inline int fill_shape(shaped *s, cnp.ndarray data, int dtype, int packed,
                           cnp.ndarray like) except -1:
    """data's buffer with like's shape (packed sub-byte buffers are 1-D bytes)."""
    fill(s, like, dtype, packed)
    s.t.data = cnp.PyArray_DATA(data)
    return 0


cdef raise_error(int rc, qsimd_error *err):
    msg = err.message.decode("utf-8", "replace")
    if rc == QSIMD_ERR_TYPE:
        raise TypeError(msg)
    if rc == QSIMD_ERR_NOMEM:
        raise MemoryError(msg)
    raise ValueError(msg)


def quantize(cnp.ndarray x, int xt, cnp.ndarray scale, int st, object zp, int zt,
             cnp.ndarray y, int yt, bint packed, int64_t axis, int64_t block_size,
             int precision, int saturate, int num_threads=0):
    cdef shaped sx, ss, sz, sy
    cdef qsimd_quantize_options opt
    cdef qsimd_error err
    cdef int rc
    cdef const qsimd_tensor *pz = NULL
    fill(&sx, x, xt, 0)
    fill(&ss, scale, st, 0)
    if zp is not None:
        fill(&sz, <cnp.ndarray>zp, zt, 0)
        pz = &sz.t
    fill_shape(&sy, y, yt, packed, x)
    opt.axis = axis
    opt.block_size = block_size
    opt.saturate = saturate
    opt.precision = precision
    opt.num_threads = num_threads
    with nogil:
        rc = qsimd_quantize_linear(&sx.t, &ss.t, pz, &opt, &sy.t, &err)
    if rc != QSIMD_OK:
        raise_error(rc, &err)
    return y


def dequantize(cnp.ndarray x, int xt, bint x_packed, cnp.ndarray like, cnp.ndarray scale,
               int st, object zp, int zt, cnp.ndarray y, int yt, int64_t axis,
               int64_t block_size, int num_threads=0):
    """like: an array with x's logical shape (x itself unless x holds packed bytes)."""
    cdef shaped sx, ss, sz, sy
    cdef qsimd_dequantize_options opt
    cdef qsimd_error err
    cdef int rc
    cdef const qsimd_tensor *pz = NULL
    fill_shape(&sx, x, xt, x_packed, like)
    fill(&ss, scale, st, 0)
    if zp is not None:
        fill(&sz, <cnp.ndarray>zp, zt, 0)
        pz = &sz.t
    fill_shape(&sy, y, yt, 0, like)
    opt.axis = axis
    opt.block_size = block_size
    opt.num_threads = num_threads
    with nogil:
        rc = qsimd_dequantize_linear(&sx.t, &ss.t, pz, &opt, &sy.t, &err)
    if rc != QSIMD_OK:
        raise_error(rc, &err)
    return y


def dynamic_quantize(cnp.ndarray x, cnp.ndarray y):
    cdef shaped sx, sy
    cdef qsimd_error err
    cdef float scale = 0
    cdef uint8_t zp = 0
    cdef int rc
    fill(&sx, x, 1, 0)
    fill(&sy, y, 2, 0)
    with nogil:
        rc = qsimd_dynamic_quantize_linear(&sx.t, &sy.t, &scale, &zp, &err)
    if rc != QSIMD_OK:
        raise_error(rc, &err)
    return scale, zp


def set_num_threads(int n):
    if qsimd_set_num_threads(n) != QSIMD_OK:
        raise ValueError(f"num_threads must be between 1 and 64, got {n}")


def get_num_threads():
    return qsimd_get_num_threads()


def get_isa():
    return qsimd_get_isa().decode()


def isa_names():
    cdef const char *const *names = qsimd_isa_names()
    out = []
    cdef int i = 0
    while names[i] != NULL:
        out.append(names[i].decode())
        i += 1
    return out


def isa_available(str name):
    b = name.encode()
    return bool(qsimd_isa_available(b))


def set_isa(name):
    cdef qsimd_error err
    cdef int rc
    b = b"" if name is None else name.encode()
    rc = qsimd_set_isa(b, &err)
    if rc != QSIMD_OK:
        raise ValueError(err.message.decode("utf-8", "replace"))


def env_isa_error():
    cdef const char *e = qsimd_env_isa_error()
    return None if e == NULL else e.decode("utf-8", "replace")


def cpu_feature_bits():
    cdef unsigned f = qsimd_cpu_features()
    return {
        "sse4.1": bool(f & QSIMD_CPU_SSE41),
        "avx2": bool(f & QSIMD_CPU_AVX2),
        "fma": bool(f & QSIMD_CPU_FMA),
        "f16c": bool(f & QSIMD_CPU_F16C),
        "avx512f": bool(f & QSIMD_CPU_AVX512F),
        "avx512bw": bool(f & QSIMD_CPU_AVX512BW),
        "avx512dq": bool(f & QSIMD_CPU_AVX512DQ),
        "avx512vl": bool(f & QSIMD_CPU_AVX512VL),
        "os_avx": bool(f & QSIMD_CPU_OS_AVX),
        "os_avx512": bool(f & QSIMD_CPU_OS_AVX512),
        "neon": bool(f & QSIMD_CPU_NEON),
        "fp16": bool(f & QSIMD_CPU_FP16),
    }


def c_version():
    return qsimd_version().decode()


# ---------------------------------------------------------------------------------------------
# Fast paths for the common small call: a contiguous float32 x, a scalar scale and zero point,
# per-tensor, default attributes. Everything is checked here at C level; anything unusual
# returns None and the caller takes the general path (which also produces the error messages).

cdef extern from *:
    """
    #define QS_ARR_OK(a) (PyArray_ISCARRAY_RO(a) && PyArray_ISNOTSWAPPED(a))
    #define QS_IS_F32(o) PyArray_IsScalar(o, Float32)
    #define QS_F32_VAL(o) PyArrayScalar_VAL(o, Float32)
    #define QS_IS_U8(o) PyArray_IsScalar(o, UInt8)
    #define QS_U8_VAL(o) PyArrayScalar_VAL(o, UInt8)
    #define QS_IS_I8(o) PyArray_IsScalar(o, Int8)
    #define QS_I8_VAL(o) PyArrayScalar_VAL(o, Int8)
    """
    bint QS_ARR_OK(cnp.ndarray a)
    bint QS_IS_F32(object o)
    float QS_F32_VAL(object o)
    bint QS_IS_U8(object o)
    uint8_t QS_U8_VAL(object o)
    bint QS_IS_I8(object o)
    signed char QS_I8_VAL(object o)

cdef int _scalar_f32(object s, float *v) except -1:
    """1 when s is a float32-valued scalar (Python float, np.float32/float64, 0-d float32)."""
    if type(s) is float:
        v[0] = <float>(<double>s)
        return 1
    if QS_IS_F32(s):
        v[0] = QS_F32_VAL(s)
        return 1
    if type(s) is cnp.ndarray and cnp.PyArray_NDIM(<cnp.ndarray>s) == 0 and \
            cnp.PyArray_TYPE(<cnp.ndarray>s) == cnp.NPY_FLOAT32 and QS_ARR_OK(<cnp.ndarray>s):
        v[0] = (<float *>cnp.PyArray_DATA(<cnp.ndarray>s))[0]
        return 1
    return 0


cdef int _scalar_zp(object z, int *dtype, int32_t *v) except -1:
    """1 when z is None or a uint8/int8 scalar (NumPy scalar or 0-d array)."""
    cdef cnp.ndarray a
    if z is None:
        dtype[0] = 2
        v[0] = 0
        return 1
    if QS_IS_U8(z):
        dtype[0] = 2
        v[0] = QS_U8_VAL(z)
        return 1
    if QS_IS_I8(z):
        dtype[0] = 3
        v[0] = QS_I8_VAL(z)
        return 1
    if type(z) is cnp.ndarray and cnp.PyArray_NDIM(<cnp.ndarray>z) == 0:
        a = <cnp.ndarray>z
        if cnp.PyArray_TYPE(a) == cnp.NPY_UINT8:
            dtype[0] = 2
            v[0] = (<uint8_t *>cnp.PyArray_DATA(a))[0]
            return 1
        if cnp.PyArray_TYPE(a) == cnp.NPY_INT8:
            dtype[0] = 3
            v[0] = (<signed char *>cnp.PyArray_DATA(a))[0]
            return 1
    return 0


cdef inline bint _disjoint(cnp.ndarray a, cnp.ndarray b):
    cdef char *pa = <char *>cnp.PyArray_DATA(a)
    cdef char *pb = <char *>cnp.PyArray_DATA(b)
    return pa + cnp.PyArray_NBYTES(a) <= pb or pb + cnp.PyArray_NBYTES(b) <= pa


def quantize_fast(object x, object scale, object zero_point, object out):
    cdef float s
    cdef int yt
    cdef int32_t zp
    cdef uint8_t zp8
    cdef cnp.ndarray ax, y
    cdef shaped sx, sy
    cdef qsimd_tensor ts, tz
    cdef qsimd_error err
    cdef int rc
    if type(x) is not cnp.ndarray:
        return None
    ax = <cnp.ndarray>x
    if cnp.PyArray_TYPE(ax) != cnp.NPY_FLOAT32 or not QS_ARR_OK(ax):
        return None
    if not _scalar_f32(scale, &s) or not _scalar_zp(zero_point, &yt, &zp):
        return None
    if out is None:
        y = cnp.PyArray_EMPTY(cnp.PyArray_NDIM(ax), cnp.PyArray_DIMS(ax),
                              cnp.NPY_UINT8 if yt == 2 else cnp.NPY_INT8, 0)
    else:
        if type(out) is not cnp.ndarray:
            return None
        y = <cnp.ndarray>out
        if cnp.PyArray_TYPE(y) != <int>(cnp.NPY_UINT8 if yt == 2 else cnp.NPY_INT8) or \
                not cnp.PyArray_ISCARRAY(y) or \
                not cnp.PyArray_SAMESHAPE(y, ax) or not _disjoint(y, ax):
            return None
    fill(&sx, ax, 1, 0)
    fill(&sy, y, yt, 0)
    ts.data = &s; ts.dtype = 1; ts.ndim = 0; ts.shape = NULL; ts.packed = 0
    zp8 = <uint8_t>(zp & 0xff)
    tz.data = &zp8; tz.dtype = yt; tz.ndim = 0; tz.shape = NULL; tz.packed = 0
    with nogil:
        rc = qsimd_quantize_linear(&sx.t, &ts, &tz, NULL, &sy.t, &err)
    if rc != QSIMD_OK:
        raise_error(rc, &err)
    return y


def dequantize_fast(object x, object scale, object zero_point, object out):
    """uint8/int8 x, float32 scalar scale, matching scalar zero point -> float32."""
    cdef float s
    cdef int zt, xt
    cdef int32_t zp
    cdef uint8_t zp8
    cdef cnp.ndarray ax, y
    cdef shaped sx, sy
    cdef qsimd_tensor ts, tz
    cdef qsimd_error err
    cdef int rc
    if type(x) is not cnp.ndarray:
        return None
    ax = <cnp.ndarray>x
    if cnp.PyArray_TYPE(ax) == cnp.NPY_UINT8:
        xt = 2
    elif cnp.PyArray_TYPE(ax) == cnp.NPY_INT8:
        xt = 3
    else:
        return None
    if not QS_ARR_OK(ax) or not _scalar_f32(scale, &s):
        return None
    if zero_point is None:
        zt = xt
        zp = 0
    elif not _scalar_zp(zero_point, &zt, &zp) or zt != xt:
        return None
    if out is None:
        y = cnp.PyArray_EMPTY(cnp.PyArray_NDIM(ax), cnp.PyArray_DIMS(ax), cnp.NPY_FLOAT32, 0)
    else:
        if type(out) is not cnp.ndarray:
            return None
        y = <cnp.ndarray>out
        if cnp.PyArray_TYPE(y) != cnp.NPY_FLOAT32 or not cnp.PyArray_ISCARRAY(y) or \
                not cnp.PyArray_SAMESHAPE(y, ax) or not _disjoint(y, ax):
            return None
    fill(&sx, ax, xt, 0)
    fill(&sy, y, 1, 0)
    ts.data = &s; ts.dtype = 1; ts.ndim = 0; ts.shape = NULL; ts.packed = 0
    zp8 = <uint8_t>(zp & 0xff)
    tz.data = &zp8; tz.dtype = xt; tz.ndim = 0; tz.shape = NULL; tz.packed = 0
    with nogil:
        rc = qsimd_dequantize_linear(&sx.t, &ts, &tz, NULL, &sy.t, &err)
    if rc != QSIMD_OK:
        raise_error(rc, &err)
    return y
