# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, freethreading_compatible=True
"""Cython bridge: ndarray -> qsimd_tensor, one C call with the GIL released, C error -> exception.

quantize / dequantize / dynamic_quantize receive arrays the Python layer has normalised
(C-contiguous, aligned, native byte order, supported dtype); the *_fast functions at the end
check arguments that are already in that form themselves, at C level, and decline the rest.
Shapes, axes and block sizes are validated by the C operator layer, whose messages become the
exceptions raised here. Buffers are read through NumPy's C API rather than typed
memoryviews: acquiring a memoryview costs more than a 1K-element kernel.
"""
cimport numpy as cnp
import numpy as np
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
    ctypedef struct qsimd_dynamic_options:
        int64_t axis
        int64_t block_size
        int32_t symmetric
        int32_t num_threads
    int qsimd_dynamic_quantize(const qsimd_tensor *x, const qsimd_tensor *y,
                               const qsimd_tensor *scale, const qsimd_tensor *zero_point,
                               const qsimd_dynamic_options *opt, qsimd_error *err)
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


def dynamic_groups(cnp.ndarray x, cnp.ndarray y, int yt, cnp.ndarray scale, object zp,
                   int64_t axis, int64_t block_size, int symmetric, int num_threads):
    cdef shaped sx, sy, ss, sz
    cdef qsimd_dynamic_options opt
    cdef qsimd_error err
    cdef int rc
    cdef const qsimd_tensor *pz = NULL
    fill(&sx, x, 1, 0)
    fill(&sy, y, yt, 0)
    fill(&ss, scale, 1, 0)
    if zp is not None:
        fill(&sz, <cnp.ndarray>zp, yt, 0)
        pz = &sz.t
    opt.axis = axis
    opt.block_size = block_size
    opt.symmetric = symmetric
    opt.num_threads = num_threads
    with nogil:
        rc = qsimd_dynamic_quantize(&sx.t, &sy.t, &ss.t, pz, &opt, &err)
    if rc != QSIMD_OK:
        raise_error(rc, &err)


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
# Fast paths: every call whose arguments are already in final form (exact C-contiguous,
# aligned, native ndarrays of supported types, NumPy / Python scalars, plain int attributes,
# cached dtype spellings, a fitting `out=`) goes straight to C. Rule: the C call is made only
# when the general path in _api.py would make the very same call; anything it would convert,
# copy or refuse in Python returns None here, and the general path runs (and owns the
# messages). Errors only C detects are raised here exactly as the general path raises them.

from cpython.long cimport PyLong_AsLongLongAndOverflow
from cpython.tuple cimport PyTuple_GET_SIZE
from cpython.float cimport PyFloat_AS_DOUBLE
from cpython.ref cimport PyObject
from cpython.object cimport Py_TYPE
from cpython.tuple cimport PyTuple_GET_ITEM
from libc.stdint cimport int8_t, uint16_t, uint32_t, uint64_t, INT64_MAX
from libc.string cimport memcpy, strlen
from libc.float cimport FLT_MAX
from libc.math cimport isinf

cdef extern from *:
    """
    #define QS_ARR_OK(a) (PyArray_ISCARRAY_RO(a) && PyArray_ISNOTSWAPPED(a))
    #define QS_OUT_OK(a) (PyArray_ISCARRAY(a) && PyArray_ISNOTSWAPPED(a))
    /* A NumPy scalar's value by the type number of its exact type (at most 8 bytes); user
       (ml_dtypes) types through NumPy's accessor, which hands back a pointer to the value. */
    static void qs_scalar_bytes(PyObject *o, int num, int size, void *buf)
    {
        void *p = NULL;
        switch (num) {   /* memcpy: buf is read as this type in the C core */
        case NPY_BYTE: memcpy(buf, &PyArrayScalar_VAL(o, Byte), 1); return;
        case NPY_UBYTE: memcpy(buf, &PyArrayScalar_VAL(o, UByte), 1); return;
        case NPY_SHORT: memcpy(buf, &PyArrayScalar_VAL(o, Short), 2); return;
        case NPY_USHORT: memcpy(buf, &PyArrayScalar_VAL(o, UShort), 2); return;
        case NPY_INT: memcpy(buf, &PyArrayScalar_VAL(o, Int), sizeof(int)); return;
        case NPY_UINT: memcpy(buf, &PyArrayScalar_VAL(o, UInt), sizeof(int)); return;
        case NPY_HALF: memcpy(buf, &PyArrayScalar_VAL(o, Half), 2); return;
        case NPY_FLOAT: memcpy(buf, &PyArrayScalar_VAL(o, Float), 4); return;
        default:
            if (PyTypeNum_ISUSERDEF(num)) {
                PyArray_ScalarAsCtype(o, &p);   /* user types: a pointer to the value */
                memcpy(buf, p, (size_t)size);
            } else {
                PyArray_ScalarAsCtype(o, buf);   /* e.g. int32 as NPY_LONG: the value */
            }
        }
    }
    """
    bint QS_ARR_OK(cnp.ndarray a)
    bint QS_OUT_OK(cnp.ndarray a)
    void qs_scalar_bytes(object o, int num, int size, void *buf)

# Type tables, filled once by setup_fast() from qsimd._dtypes (user type numbers are >= 256).
cdef enum:
    NUMS = 1024              # type numbers tabled (builtin < 256, user types from 256)
    SPEC_CACHE_MAX = 256     # dtype spellings remembered per key type
cdef int8_t _code_of[NUMS]           # type number -> ONNX code, 0: not a qsimd type
cdef int _num_of[32]                 # ONNX code -> type number
cdef int _size_of[32]                # ONNX code -> bytes per element
cdef int _bits_of[32]                # 4 / 2 for sub-byte codes, else 0
cdef int64_t _zlo[32]
cdef int64_t _zhi[32]                # range of a Python int zero point (integer codes)
cdef uint32_t _zint = 0              # codes whose Python int zero points are handled here
cdef uint32_t Q_IN = 0, Q_SCALE = 0, Q_OUT = 0, DQ_IN = 0, DQ_SCALE = 0, DQ_OUT = 0
cdef PyObject *_stype[32]           # exact NumPy scalar type per code (kept by _keep)
cdef object _keep = None
cdef object _packed_cls = None
cdef object _tuple_new = tuple.__new__
cdef tuple _ydtype = ()            # np.dtype per code, for packed results' dtype field
cdef object _resolve = None
cdef object _np_float64 = None
# dtype spellings resolved once; one dict per key type, so that no key of another type can
# ever compare equal (True == 1, np.dtype("int8") == "int8")
cdef dict _spec_str = {}, _spec_int = {}, _spec_dtype = {}, _spec_type = {}


cdef uint32_t _mask(codes):
    cdef uint32_t m = 0
    for c in codes:
        m |= 1u << <int>c
    return m


def setup_fast(packed_cls):
    """Build the tables (called once by _api at import, with its PackedTensor class)."""
    global _zint, Q_IN, Q_SCALE, Q_OUT, DQ_IN, DQ_SCALE, DQ_OUT
    global _keep, _packed_cls, _resolve, _np_float64, _ydtype
    from . import _dtypes as d
    import numpy as np
    types = [None] * 32
    for code, dt in d.CODE_TO_DTYPE.items():
        if not 0 <= dt.num < NUMS or code >= 32:
            continue   # leaves the type to the general path
        _code_of[dt.num] = code
        _num_of[code] = dt.num
        _size_of[code] = dt.itemsize
        _bits_of[code] = d.SUBBYTE_BITS.get(code, 0)
        types[code] = dt.type
        _stype[code] = <PyObject *>dt.type
        if code in d.INT_RANGE:
            _zlo[code], _zhi[code] = d.INT_RANGE[code]
            _zint |= 1u << code
    Q_IN, Q_SCALE, Q_OUT = _mask(d.Q_INPUT_CODES), _mask(d.Q_SCALE_CODES), _mask(d.Q_OUTPUT_CODES)
    DQ_IN, DQ_SCALE = _mask(d.DQ_INPUT_CODES), _mask(d.DQ_SCALE_CODES)
    DQ_OUT = _mask(d.DQ_OUTPUT_CODES)
    _keep = tuple(types)
    _ydtype = tuple(d.CODE_TO_DTYPE.get(c) for c in range(32))
    _packed_cls = packed_cls
    _resolve = d.resolve
    _np_float64 = np.float64


cdef inline bint _has(uint32_t mask, int code) noexcept:
    return code > 0 and (mask >> code) & 1u


cdef inline int _arr_code(object o) noexcept:
    """ONNX code of an exact, C-contiguous, aligned, native ndarray of rank <= 32; else 0."""
    cdef cnp.ndarray a
    cdef int num
    if type(o) is not cnp.ndarray:
        return 0
    a = <cnp.ndarray>o
    num = cnp.PyArray_TYPE(a)
    if num < 0 or num >= NUMS or not QS_ARR_OK(a) or cnp.PyArray_NDIM(a) > 32:
        return 0
    return _code_of[num]


cdef inline bint _int64(object o, int64_t *v) except -1:
    """An exact Python int within int64 (anything else: the general path decides)."""
    cdef int overflow = 0
    if type(o) is not int:
        return False
    v[0] = PyLong_AsLongLongAndOverflow(o, &overflow)
    return overflow == 0


cdef inline int _flag(object o) except -2:
    """True/False or exactly 1/0 (as _api._flag accepts); -1: the general path decides."""
    cdef int64_t v
    if o is True:
        return 1
    if o is False:
        return 0
    if _int64(o, &v) and (v == 0 or v == 1):
        return <int>v
    return -1


cdef inline int _threads(object o) except -2:
    cdef int64_t v
    if o is None:
        return 0
    if _int64(o, &v) and 1 <= v <= 64:
        return <int>v
    return -1


cdef int _spec_code(object spec) except -2:
    """An output type spelling -> ONNX code through the caches; 0: unset (None, int 0);
    -1: not cacheable or not resolvable (the general path decides)."""
    cdef dict cache
    cdef int64_t v
    if spec is None:
        return 0
    if type(spec) is str:
        cache = _spec_str
    elif type(spec) is int:
        if _int64(spec, &v) and v == 0:
            return 0   # ONNX 0: unset
        cache = _spec_int
    elif isinstance(spec, cnp.dtype):
        cache = _spec_dtype
    elif isinstance(spec, type):
        cache = _spec_type
    else:
        return -1   # bool, np.integer, ...: not cached
    code = cache.get(spec)
    if code is None:
        try:
            code = _resolve(spec, "output_dtype")
        except Exception:
            return -1
        if len(cache) < SPEC_CACHE_MAX:
            cache[spec] = code
    return code


# scale / zero point as a qsimd_tensor: an array's own buffer, or a scalar copied into buf
cdef struct param:
    shaped s
    uint64_t buf
    char *lo          # the array's bytes (for the overlap check); NULL for a scalar
    char *hi


cdef inline void _param_scalar(param *p, int code) noexcept:
    p.s.t.data = &p.buf
    p.s.t.dtype = code
    p.s.t.ndim = 0
    p.s.t.shape = NULL
    p.s.t.packed = 0
    p.lo = NULL
    p.hi = NULL


cdef inline void _param_array(param *p, cnp.ndarray a, int code) noexcept:
    cdef int i, nd = cnp.PyArray_NDIM(a)
    cdef cnp.npy_intp *dims = cnp.PyArray_DIMS(a)
    for i in range(nd):
        p.s.dims[i] = dims[i]
    p.s.t.data = cnp.PyArray_DATA(a)
    p.s.t.dtype = code
    p.s.t.ndim = nd
    p.s.t.shape = p.s.dims
    p.s.t.packed = 0
    p.lo = <char *>cnp.PyArray_DATA(a)
    p.hi = p.lo + cnp.PyArray_NBYTES(a)


cdef inline int _numpy_scalar(object o, param *p) noexcept:
    """Code of a NumPy / ml_dtypes scalar of exactly a qsimd type (value copied); else 0."""
    cdef int code
    cdef PyObject *t = <PyObject *>Py_TYPE(o)
    for code in range(1, 32):
        if _stype[code] == t:
            qs_scalar_bytes(o, _num_of[code], _size_of[code], &p.buf)
            _param_scalar(p, code)
            return code
    return 0


cdef int _scale_param(object o, uint32_t allowed, int64_t limit, param *p) except -1:
    """scale as the general path would pass it to C, or 0 (fall back)."""
    cdef int code
    cdef double v
    cdef float f
    if type(o) is float or type(o) is _np_float64:
        v = PyFloat_AS_DOUBLE(o)
        if (v > FLT_MAX or v < -FLT_MAX) and not isinf(v):
            return 0   # NumPy warns about the overflow to inf
        f = <float>v   # what np.asarray(o).astype(np.float32) gives
        memcpy(&p.buf, &f, sizeof(float))
        _param_scalar(p, 1)
        return 1
    code = _arr_code(o)
    if code:
        if not _has(allowed, code) or cnp.PyArray_SIZE(<cnp.ndarray>o) > limit:
            return 0   # TypeError / "more than any layout of x can use"
        _param_array(p, <cnp.ndarray>o, code)
        return code
    code = _numpy_scalar(o, p)
    return code if _has(allowed, code) else 0


cdef int _zp_param(object o, int hint, uint32_t allowed, int64_t limit, param *p) except -1:
    """zero point: an array or NumPy scalar of an `allowed` code, or a Python int in range
    of the integer type `hint`; else 0 (fall back)."""
    cdef int code
    cdef int64_t v
    cdef uint8_t b8
    cdef uint16_t b16
    cdef uint32_t b32
    if type(o) is int:
        if not (_zint >> hint) & 1u or not _int64(o, &v) or not _zlo[hint] <= v <= _zhi[hint]:
            return 0
        b8 = <uint8_t>(v & 0xff)
        b16 = <uint16_t>(v & 0xffff)
        b32 = <uint32_t>(v & 0xffffffff)
        if _size_of[hint] == 1:
            memcpy(&p.buf, &b8, 1)
        elif _size_of[hint] == 2:
            memcpy(&p.buf, &b16, 2)
        else:
            memcpy(&p.buf, &b32, 4)
        _param_scalar(p, hint)
        return hint
    code = _arr_code(o)
    if code:
        if not _has(allowed, code) or cnp.PyArray_SIZE(<cnp.ndarray>o) > limit:
            return 0
        _param_array(p, <cnp.ndarray>o, code)
        return code
    code = _numpy_scalar(o, p)
    return code if _has(allowed, code) else 0


# ---------------------------------------------------------------------------------------------
# Results of 1 MiB and more come from NumPy's allocator interface with a small cache of freed
# blocks in front of malloc: a large block fresh from the OS is page-faulted and zeroed on
# first touch, which costs as much as quantizing into it (a 64 MB result: ~4 ms of 6). The
# arrays are ordinary NumPy arrays that own their data; when NumPy frees one through this
# handler, its block is kept for the next result of a similar size, up to a total limit.

cdef extern from "_result_cache.h":
    size_t QS_CACHE_MIN
    void qs_cache_init()
    void qs_cache_set_limit(size_t limit) nogil
    size_t qs_cache_get_limit()
    int qs_cache_sizes(size_t *sizes)
    size_t qs_cache_page()
    void *qs_cache_handler()

cdef extern from "numpy/arrayobject.h":
    object PyDataMem_SetHandler(object handler)

from cpython.pycapsule cimport PyCapsule_New

qs_cache_init()
cdef object _handler = PyCapsule_New(qs_cache_handler(), "mem_handler", NULL)


cdef object _new_result(int nd, cnp.npy_intp *dims, int num):
    """An uninitialised result array; a large one from the cached allocator."""
    cdef int64_t nbytes = cnp.PyDataType_ELSIZE(cnp.PyArray_DescrFromType(num))
    cdef int i
    for i in range(nd):
        nbytes *= dims[i]
    if nbytes < <int64_t>QS_CACHE_MIN:
        return cnp.PyArray_EMPTY(nd, dims, num, 0)
    old = PyDataMem_SetHandler(_handler)
    try:
        return cnp.PyArray_EMPTY(nd, dims, num, 0)
    finally:
        PyDataMem_SetHandler(old)


def new_result(tuple shape, cnp.dtype dtype):
    """np.empty(shape, dtype) for a result of the general path (a native dtype)."""
    cdef cnp.npy_intp dims[32]
    cdef int i, nd = len(shape)
    if nd > 32:
        return np.empty(shape, dtype)   # NumPy's own error for such a rank
    for i in range(nd):
        dims[i] = shape[i]
    return _new_result(nd, dims, dtype.num)


def set_result_cache(size_t limit):
    qs_cache_set_limit(limit)


def get_result_cache():
    return qs_cache_get_limit()


def page_size():
    """The page size madvise aligns to: for tests."""
    return qs_cache_page()


def result_cache_info():
    """(limit, sizes of the blocks kept): for tests."""
    cdef size_t sizes[2]
    cdef int n = qs_cache_sizes(sizes)
    return qs_cache_get_limit(), [sizes[i] for i in range(n)]


cdef inline int64_t _limit(int nd, const int64_t *dims, int64_t n) noexcept:
    """_args.param_limit: the most scale entries any layout of x can use."""
    cdef int64_t m = n if n > 1 else 1
    cdef int i
    for i in range(nd):
        if dims[i] > m:
            m = dims[i]
    return m


cdef inline bint _apart(char *lo, char *hi, cnp.ndarray y) noexcept:
    """y's bytes do not overlap [lo, hi) (a conservative range check; lo NULL: a scalar)."""
    cdef char *a = <char *>cnp.PyArray_DATA(y)
    return lo == NULL or a + cnp.PyArray_NBYTES(y) <= lo or hi <= a


cdef object _result(object out, int nd, cnp.npy_intp *dims, int num, char *xlo, char *xhi,
                    param *ps, param *pz):
    """out= when usable as is (else None: fall back), or a new array."""
    cdef cnp.ndarray y
    cdef int i
    if out is None:
        return _new_result(nd, dims, num)
    if type(out) is not cnp.ndarray:
        return None
    y = <cnp.ndarray>out
    if cnp.PyArray_TYPE(y) != num or not QS_OUT_OK(y) or cnp.PyArray_NDIM(y) != nd:
        return None
    for i in range(nd):
        if cnp.PyArray_DIMS(y)[i] != dims[i]:
            return None
    if not (_apart(xlo, xhi, y) and _apart(ps.lo, ps.hi, y) and
            (pz == NULL or _apart(pz.lo, pz.hi, y))):
        return None   # aliasing: the general path goes through a temporary
    return y


cdef inline void _tensor(shaped *s, void *data, int dtype, int nd, const int64_t *dims,
                         int packed) noexcept:
    cdef int i
    for i in range(nd):
        s.dims[i] = dims[i]
    s.t.data = data
    s.t.dtype = dtype
    s.t.ndim = nd
    s.t.shape = s.dims
    s.t.packed = packed


def quantize_fast(object x, object scale, object zero_point, object axis, object block_size,
                  object output_dtype, object saturate, object precision, object packed,
                  object out, object num_threads):
    """quantize_linear for arguments in final form; None: take the general path."""
    cdef int xt, st, zt = 0, ot, yt, sat, pk, nt, i, nd, bits
    cdef int64_t c_axis, c_block, n, limit
    cdef int64_t xdims[32]
    cdef cnp.npy_intp ybytes
    cdef cnp.ndarray ax
    cdef param ps, pz
    cdef shaped sx, sy
    cdef qsimd_quantize_options opt
    cdef qsimd_error err
    cdef int rc
    xt = _arr_code(x)
    if not _has(Q_IN, xt) or precision is not None:
        return None
    if not _int64(axis, &c_axis) or not _int64(block_size, &c_block):
        return None
    sat = _flag(saturate)
    pk = _flag(packed)
    nt = _threads(num_threads)
    ot = _spec_code(output_dtype)
    if sat < 0 or pk < 0 or nt < 0 or ot < 0 or (ot and not _has(Q_OUT, ot)):
        return None
    ax = <cnp.ndarray>x
    nd = cnp.PyArray_NDIM(ax)
    for i in range(nd):
        xdims[i] = cnp.PyArray_DIMS(ax)[i]
    n = cnp.PyArray_SIZE(ax)
    limit = _limit(nd, xdims, n)
    st = _scale_param(scale, Q_SCALE, limit, &ps)
    if not st:
        return None
    if zero_point is not None:
        zt = _zp_param(zero_point, ot or 2, Q_OUT, limit, &pz)
        if not zt or (ot and zt != ot):
            return None
    yt = ot or zt or 2
    bits = _bits_of[yt]
    if pk and not bits:
        return None
    if pk:
        ybytes = <cnp.npy_intp>((n * bits + 7) // 8)
        y = _result(out, 1, &ybytes, cnp.NPY_UINT8, <char *>cnp.PyArray_DATA(ax),
                    <char *>cnp.PyArray_DATA(ax) + cnp.PyArray_NBYTES(ax), &ps,
                    &pz if zt else NULL)
    else:
        y = _result(out, nd, cnp.PyArray_DIMS(ax), _num_of[yt], <char *>cnp.PyArray_DATA(ax),
                    <char *>cnp.PyArray_DATA(ax) + cnp.PyArray_NBYTES(ax), &ps,
                    &pz if zt else NULL)
    if y is None:
        return None
    _tensor(&sx, cnp.PyArray_DATA(ax), xt, nd, xdims, 0)
    _tensor(&sy, cnp.PyArray_DATA(<cnp.ndarray>y), yt, nd, xdims, pk)
    opt.axis = c_axis
    opt.block_size = c_block
    opt.saturate = sat
    opt.precision = 0
    opt.num_threads = nt
    with nogil:
        rc = qsimd_quantize_linear(&sx.t, &ps.s.t, &pz.s.t if zt else NULL, &opt, &sy.t, &err)
    if rc != QSIMD_OK:
        raise_error(rc, &err)
    if pk:
        return _packed_result(y, yt, ax)
    return y


cdef inline object _packed_result(object y, int yt, cnp.ndarray x):
    """PackedTensor(y, dtype, x.shape), built as the tuple it is (no Python-level __new__)."""
    return _tuple_new(_packed_cls, (y, _ydtype[yt], (<object>x).shape))


cdef int _packed_x(object x, int64_t *dims, int *nd, int64_t *n) except -1:
    """A PackedTensor in final form: its code (dims, rank, element count filled); else 0."""
    cdef object data = <object>PyTuple_GET_ITEM(x, 0), spec = <object>PyTuple_GET_ITEM(x, 1)
    cdef object shape = <object>PyTuple_GET_ITEM(x, 2)
    cdef tuple tshape
    cdef int code, i, k
    cdef int64_t d, c = 1
    cdef bint zero = False, big = False
    if _arr_code(data) != 2 or cnp.PyArray_NDIM(<cnp.ndarray>data) != 1:
        return 0
    code = _spec_code(spec)
    if code <= 0 or not _bits_of[code] or type(shape) is not tuple:
        return 0
    tshape = <tuple>shape
    k = <int>PyTuple_GET_SIZE(tshape)
    if k > 32:
        return 0
    for i in range(k):
        if not _int64(tshape[i], &d) or d < 0:
            return 0
        dims[i] = d
        if d == 0:
            zero = True
        elif c <= INT64_MAX // 8 // d:
            c *= d
        else:
            big = True   # more than any buffer holds (unless a dimension is 0)
    if zero:
        c = 0
    elif big:
        return 0
    if (c * _bits_of[code] + 7) // 8 != cnp.PyArray_SIZE(<cnp.ndarray>data):
        return 0
    nd[0] = k
    n[0] = c
    return code


def dequantize_fast(object x, object scale, object zero_point, object axis, object block_size,
                    object output_dtype, object out, object num_threads):
    """dequantize_linear for arguments in final form (x an ndarray or a PackedTensor);
    None: take the general path."""
    cdef int xt, st, zt = 0, ot, yt, nt, i, nd = 0, xpk = 0
    cdef int64_t c_axis, c_block, n = 0, limit
    cdef int64_t xdims[32]
    cdef cnp.npy_intp ydims[32]
    cdef cnp.ndarray data
    cdef param ps, pz
    cdef shaped sx, sy
    cdef qsimd_dequantize_options opt
    cdef qsimd_error err
    cdef int rc
    xt = _arr_code(x)
    if xt:
        if not _has(DQ_IN, xt):
            return None
        data = <cnp.ndarray>x
        nd = cnp.PyArray_NDIM(data)
        for i in range(nd):
            xdims[i] = cnp.PyArray_DIMS(data)[i]
        n = cnp.PyArray_SIZE(data)
    elif type(x) is _packed_cls:
        xt = _packed_x(x, xdims, &nd, &n)
        if not xt:
            return None
        data = <cnp.ndarray>PyTuple_GET_ITEM(x, 0)
        xpk = 1
    else:
        return None
    if not _int64(axis, &c_axis) or not _int64(block_size, &c_block):
        return None
    nt = _threads(num_threads)
    ot = _spec_code(output_dtype)
    if nt < 0 or ot < 0 or (ot and not _has(DQ_OUT, ot)):
        return None
    limit = _limit(nd, xdims, n)
    st = _scale_param(scale, DQ_SCALE, limit, &ps)
    if not st:
        return None
    if zero_point is not None:
        zt = _zp_param(zero_point, xt, 1u << xt, limit, &pz)
        if not zt:
            return None
    yt = ot or st
    for i in range(nd):
        ydims[i] = <cnp.npy_intp>xdims[i]
    y = _result(out, nd, ydims, _num_of[yt], <char *>cnp.PyArray_DATA(data),
                <char *>cnp.PyArray_DATA(data) + cnp.PyArray_NBYTES(data), &ps,
                &pz if zt else NULL)
    if y is None:
        return None
    _tensor(&sx, cnp.PyArray_DATA(data), xt, nd, xdims, xpk)
    _tensor(&sy, cnp.PyArray_DATA(<cnp.ndarray>y), yt, nd, xdims, 0)
    opt.axis = c_axis
    opt.block_size = c_block
    opt.num_threads = nt
    with nogil:
        rc = qsimd_dequantize_linear(&sx.t, &ps.s.t, &pz.s.t if zt else NULL, &opt, &sy.t,
                                     &err)
    if rc != QSIMD_OK:
        raise_error(rc, &err)
    return y


def dynamic_quantize_fast(object x, object out=None):
    """dynamic_quantize_linear for a float32 array in final form (and a usable out=, if
    any); None: general path."""
    cdef cnp.ndarray ax, y, s, z
    cdef shaped sx, sy
    cdef param none
    cdef qsimd_error err
    cdef float scale = 0
    cdef uint8_t zp = 0
    cdef int rc
    if _arr_code(x) != 1:
        return None
    ax = <cnp.ndarray>x
    none.lo = NULL   # no scale array to overlap
    r = _result(out, cnp.PyArray_NDIM(ax), cnp.PyArray_DIMS(ax), cnp.NPY_UINT8,
                <char *>cnp.PyArray_DATA(ax),
                <char *>cnp.PyArray_DATA(ax) + cnp.PyArray_NBYTES(ax), &none, NULL)
    if r is None:
        return None
    y = <cnp.ndarray>r
    fill(&sx, ax, 1, 0)
    fill(&sy, y, 2, 0)
    with nogil:
        rc = qsimd_dynamic_quantize_linear(&sx.t, &sy.t, &scale, &zp, &err)
    if rc != QSIMD_OK:
        raise_error(rc, &err)
    s = cnp.PyArray_EMPTY(0, NULL, cnp.NPY_FLOAT32, 0)
    (<float *>cnp.PyArray_DATA(s))[0] = scale
    z = cnp.PyArray_EMPTY(0, NULL, cnp.NPY_UINT8, 0)
    (<uint8_t *>cnp.PyArray_DATA(z))[0] = zp
    return y, s, z


# ---------------------------------------------------------------------------------------------
# Prepared operators: the parameters are validated and converted once (by qsimd._api), kept
# as private, read-only arrays described by `param` structs in the object; a call only checks
# that x (and out=) are in final form and calls C. Anything else goes to the general path
# (`_slow`, quantize_linear / dequantize_linear with the prepared parameters), so a call
# always equals the plain function. Nothing in the object changes after _setup: calls from
# many threads share it read-only.

cdef extern from *:
    """
    /* A prepared operator's call as vectorcall (x, out=None): without it every `q(x, out=y)`
     * pays for an argument tuple and a keyword dict, a fifth of a 1K-element call. */
    typedef PyObject *(*qs_call_impl_t)(PyObject *, PyObject *, PyObject *);
    static qs_call_impl_t qs_call_impl;
    static PyObject *qs_prep_vcall(PyObject *self, PyObject *const *args, size_t nargsf,
                                   PyObject *kwnames)
    {
        Py_ssize_t n = PyVectorcall_NARGS(nargsf), nk = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
        PyObject *x = n >= 1 ? args[0] : NULL, *out = n >= 2 ? args[1] : Py_None;
        if (n > 2) {
            PyErr_Format(PyExc_TypeError, "%s() takes at most 2 arguments (x, out), %zd given",
                         Py_TYPE(self)->tp_name, n);
            return NULL;
        }
        for (Py_ssize_t k = 0; k < nk; k++) {
            PyObject *name = PyTuple_GET_ITEM(kwnames, k);
            if (n < 1 && PyUnicode_CompareWithASCIIString(name, "x") == 0) {
                x = args[n + k];
            } else if (n < 2 && PyUnicode_CompareWithASCIIString(name, "out") == 0) {
                out = args[n + k];
            } else {
                PyErr_Format(PyExc_TypeError, "%s() got an unexpected or repeated keyword "
                             "argument '%U'", Py_TYPE(self)->tp_name, name);
                return NULL;
            }
        }
        if (!x) {
            PyErr_Format(PyExc_TypeError, "%s() missing required argument 'x'",
                         Py_TYPE(self)->tp_name);
            return NULL;
        }
        return qs_call_impl(self, x, out);
    }
    static void qs_enable_vcall(PyObject *o, Py_ssize_t offset)
    {
        PyTypeObject *t = (PyTypeObject *)o;
        t->tp_vectorcall_offset = offset;
        t->tp_flags |= Py_TPFLAGS_HAVE_VECTORCALL;
        PyType_Modified(t);
    }
    """
    ctypedef object (*qs_call_impl_t)(object, object, object)
    qs_call_impl_t qs_call_impl
    ctypedef void *vcall_t
    void *qs_prep_vcall_ptr "((void *)qs_prep_vcall)"
    void qs_enable_vcall(object t, Py_ssize_t offset)  # PyObject * in C


cdef class _Prepared:
    cdef void *vcall           # the vectorcall entry (qs_prep_vcall); must stay first
    cdef public object _args   # the prepared arguments, for repr / pickling (qsimd._api)
    cdef param ps, pz
    cdef int st, zt, yt, sat, prec, pk, nt, is_q, bits
    cdef int64_t c_axis, c_block
    cdef int64_t axis_len      # per-axis scale length (-1: not per-axis), checked per call
    cdef object _scale_arr, _zp_arr, _slow

    def __cinit__(self, *args, **kwargs):
        self.vcall = qs_prep_vcall_ptr

    def _setup(self, bint is_q, cnp.ndarray scale, int st, object zp, int zt, int yt,
               int64_t axis, int64_t block, int sat, int prec, bint packed, int nt,
               object slow):
        """scale / zp: private, C-contiguous, native arrays of codes st / zt (zp may be None);
        yt: the output code (0 for a dequantizer whose output follows the scale); slow: the
        general path, called as slow(x, out)."""
        self.is_q = is_q
        self._scale_arr = scale
        self._zp_arr = zp
        self.st = st
        _param_array(&self.ps, scale, st)
        self.zt = zt
        if zp is not None:
            _param_array(&self.pz, <cnp.ndarray>zp, zt)
        self.yt = yt
        self.c_axis = axis
        self.c_block = block
        self.sat = sat
        self.prec = prec
        self.pk = packed
        self.bits = _bits_of[yt] if yt > 0 and yt < 32 else 0
        self.nt = nt
        self.axis_len = -1   # one entry is per-tensor whatever axis says (as ONNX)
        if block == 0 and cnp.PyArray_NDIM(scale) == 1 and cnp.PyArray_SIZE(scale) > 1:
            self.axis_len = cnp.PyArray_DIMS(scale)[0]
        self._slow = slow

    cdef object _fail(self, int rc, qsimd_error *err, cnp.ndarray x):
        msg = err.message.decode("utf-8", "replace")
        if rc == QSIMD_ERR_VALUE and ("x.shape" in msg or "rank" in msg or "block_size" in msg):
            raise ValueError(f"x of shape {(<object>x).shape} does not fit this operator's "
                             f"parameters: {msg}")
        raise_error(rc, err)

    def __call__(self, x, out=None):
        return _prepared_call(self, x, out)


cdef object _prepared_call(object obj, object x, object out):
        cdef _Prepared self = <_Prepared>obj
        cdef int xt, nd, i
        cdef int64_t xdims[32]
        cdef int64_t n, a
        cdef cnp.npy_intp ybytes
        cdef cnp.ndarray ax
        cdef shaped sx, sy
        cdef qsimd_quantize_options qo
        cdef qsimd_dequantize_options do
        cdef qsimd_error err
        cdef int rc, yt
        xt = _arr_code(x)
        if self.is_q:
            if not _has(Q_IN, xt):
                return self._slow(x, out)
        elif not _has(DQ_IN, xt) or (self.zt and xt != self.zt):
            return self._slow(x, out)
        ax = <cnp.ndarray>x
        nd = cnp.PyArray_NDIM(ax)
        for i in range(nd):
            xdims[i] = cnp.PyArray_DIMS(ax)[i]
        if self.axis_len >= 0:   # per-axis: x.shape[axis] must match (message names x)
            a = self.c_axis + nd if self.c_axis < 0 else self.c_axis
            if a < 0 or a >= nd or xdims[a] != self.axis_len:
                return self._slow(x, out)
        yt = self.yt if self.yt else self.st
        if self.pk:
            n = cnp.PyArray_SIZE(ax)
            ybytes = <cnp.npy_intp>((n * self.bits + 7) // 8)
            y = _result(out, 1, &ybytes, cnp.NPY_UINT8, <char *>cnp.PyArray_DATA(ax),
                        <char *>cnp.PyArray_DATA(ax) + cnp.PyArray_NBYTES(ax), &self.ps,
                        &self.pz if self.zt else NULL)
        else:
            y = _result(out, nd, cnp.PyArray_DIMS(ax), _num_of[yt], <char *>cnp.PyArray_DATA(ax),
                        <char *>cnp.PyArray_DATA(ax) + cnp.PyArray_NBYTES(ax), &self.ps,
                        &self.pz if self.zt else NULL)
        if y is None:
            return self._slow(x, out)
        _tensor(&sx, cnp.PyArray_DATA(ax), xt, nd, xdims, 0)
        _tensor(&sy, cnp.PyArray_DATA(<cnp.ndarray>y), yt, nd, xdims, self.pk)
        if self.is_q:
            qo.axis = self.c_axis
            qo.block_size = self.c_block
            qo.saturate = self.sat
            qo.precision = self.prec
            qo.num_threads = self.nt
            with nogil:
                rc = qsimd_quantize_linear(&sx.t, &self.ps.s.t,
                                           &self.pz.s.t if self.zt else NULL, &qo, &sy.t, &err)
        else:
            do.axis = self.c_axis
            do.block_size = self.c_block
            do.num_threads = self.nt
            with nogil:
                rc = qsimd_dequantize_linear(&sx.t, &self.ps.s.t,
                                             &self.pz.s.t if self.zt else NULL, &do, &sy.t,
                                             &err)
        if rc != QSIMD_OK:
            self._fail(rc, &err, ax)
        if self.pk:
            return _packed_result(y, yt, ax)
        return y


cdef class Quantizer(_Prepared):
    """QuantizeLinear with its parameters prepared once: ``q = Quantizer(scale, zero_point,
    axis=..., ...)``, then ``q(x, out=None)`` equals ``quantize_linear(x, scale, zero_point,
    axis=..., ...)`` exactly, with only x (and out) checked per call.

    The parameters are validated and copied at construction (later changes to your arrays do
    not affect it; Python floats become float32 as in quantize_linear). Per-axis: x.shape[axis]
    must equal the scale's length (ValueError naming x otherwise). Calls share the object
    read-only: one Quantizer serves many threads at once. Picklable."""

    def __init__(self, scale, zero_point=None, *, axis=1, block_size=0, output_dtype=None,
                 saturate=True, precision=None, packed=False, num_threads=None):
        from . import _api
        _api._init_quantizer(self, scale, zero_point, axis, block_size, output_dtype,
                             saturate, precision, packed, num_threads)

    scale = property(lambda self: self._args[0], doc="the prepared scale (a read-only copy)")
    zero_point = property(lambda self: self._args[1], doc="the prepared zero point, or None")
    axis = property(lambda self: self._args[2])
    block_size = property(lambda self: self._args[3])
    output_dtype = property(lambda self: _api_mod()._code_dtype(self._args[4]))
    saturate = property(lambda self: self._args[5])

    def __reduce__(self):
        return _api_mod()._reduce_prepared(self)

    def __repr__(self):
        return _api_mod()._repr_prepared(self)


cdef class Dequantizer(_Prepared):
    """DequantizeLinear with its parameters prepared once: ``dq = Dequantizer(scale,
    zero_point, axis=..., ...)``, then ``dq(x, out=None)`` equals ``dequantize_linear(x,
    scale, zero_point, axis=..., ...)`` exactly. The zero point, if any, must be a NumPy array
    or scalar of x's quantized type. Copies, threads and pickling as for Quantizer."""

    def __init__(self, scale, zero_point=None, *, axis=1, block_size=0, output_dtype=None,
                 num_threads=None):
        from . import _api
        _api._init_dequantizer(self, scale, zero_point, axis, block_size, output_dtype,
                               num_threads)

    scale = property(lambda self: self._args[0], doc="the prepared scale (a read-only copy)")
    zero_point = property(lambda self: self._args[1], doc="the prepared zero point, or None")
    axis = property(lambda self: self._args[2])
    block_size = property(lambda self: self._args[3])
    output_dtype = property(lambda self: _api_mod()._code_dtype(self._args[4]))

    def __reduce__(self):
        return _api_mod()._reduce_prepared(self)

    def __repr__(self):
        return _api_mod()._repr_prepared(self)


cdef object _api_cached = None

cdef object _api_mod():
    global _api_cached
    if _api_cached is None:
        from . import _api
        _api_cached = _api
    return _api_cached


cdef _enable_vectorcall():
    global qs_call_impl
    cdef _Prepared probe = _Prepared.__new__(_Prepared)
    cdef Py_ssize_t off = <char *>&probe.vcall - <char *><void *>probe
    qs_call_impl = _prepared_call
    for t in (_Prepared, Quantizer, Dequantizer):
        qs_enable_vcall(t, off)

_enable_vectorcall()


def dynamic_fast(object x, object axis, object block_size, object output_dtype,
                 object symmetric, object out, object num_threads):
    """qsimd.dynamic_quantize for arguments in final form; None: take the general path
    (which also owns every error message)."""
    cdef int yt, sym, nt, nd, i, a, rc
    cdef int64_t c_axis, c_block = 0, d, nb
    cdef cnp.ndarray ax, s, z
    cdef cnp.npy_intp sdims[32]
    cdef shaped sx, sy, ss, sz
    cdef param none
    cdef qsimd_dynamic_options opt
    cdef qsimd_error err
    if _arr_code(x) != 1 or not _int64(axis, &c_axis):
        return None
    if block_size is not None and (not _int64(block_size, &c_block) or c_block < 1):
        return None
    yt = _spec_code(output_dtype)
    sym = _flag(symmetric)
    nt = _threads(num_threads)
    if yt not in (2, 3, 21, 22) or sym < 0 or nt < 0 or (sym and (yt == 2 or yt == 21)):
        return None
    ax = <cnp.ndarray>x
    nd = cnp.PyArray_NDIM(ax)
    if nd == 0 or c_axis < -nd or c_axis >= nd or cnp.PyArray_SIZE(ax) == 0:
        return None
    a = <int>(c_axis + nd if c_axis < 0 else c_axis)
    d = cnp.PyArray_DIMS(ax)[a]
    nb = 1 if c_block == 0 else (d + c_block - 1) // c_block
    for i in range(nd):
        sdims[i] = <cnp.npy_intp>nb if i == a else cnp.PyArray_DIMS(ax)[i]
    none.lo = NULL
    y = _result(out, nd, cnp.PyArray_DIMS(ax), _num_of[yt], <char *>cnp.PyArray_DATA(ax),
                <char *>cnp.PyArray_DATA(ax) + cnp.PyArray_NBYTES(ax), &none, NULL)
    if y is None:
        return None
    s = cnp.PyArray_EMPTY(nd, sdims, cnp.NPY_FLOAT32, 0)
    z = cnp.PyArray_ZEROS(nd, sdims, _num_of[yt], 0) if sym else \
        cnp.PyArray_EMPTY(nd, sdims, _num_of[yt], 0)
    fill(&sx, ax, 1, 0)
    fill(&sy, <cnp.ndarray>y, yt, 0)
    fill(&ss, s, 1, 0)
    fill(&sz, z, yt, 0)
    opt.axis = c_axis
    opt.block_size = c_block
    opt.symmetric = sym
    opt.num_threads = nt
    with nogil:
        rc = qsimd_dynamic_quantize(&sx.t, &sy.t, &ss.t, &sz.t, &opt, &err)
    if rc != QSIMD_OK:
        raise_error(rc, &err)
    return y, s, z


# ------------------------------------------------------------------ AMD Quark MX / BFP, OCP MX
cdef extern from "qsimd.h" nogil:
    ctypedef struct qsimd_mx_options:
        const char *element_dtype
        int64_t axis
        int64_t block_size
        int64_t rounding_mode
        int32_t num_threads
    ctypedef struct qsimd_bfp_options:
        const char *bfp_method
        int64_t axis
        int64_t bit_width
        int64_t block_size
        int64_t rounding_mode
        int64_t sub_block_size
        int64_t sub_block_shift_bits
        int32_t convert_to_bfloat_before_bfp
        int32_t num_threads
    void qsimd_mx_options_init(qsimd_mx_options *opt)
    void qsimd_bfp_options_init(qsimd_bfp_options *opt)
    int qsimd_mx_quantize_dequantize(const qsimd_tensor *x, const qsimd_tensor *y,
                                     const qsimd_mx_options *opt, qsimd_error *err)
    int qsimd_bfp_quantize_dequantize(const qsimd_tensor *x, const qsimd_tensor *y,
                                      const qsimd_bfp_options *opt, qsimd_error *err)
    int qsimd_quantize_mx(const qsimd_tensor *x, const qsimd_tensor *elements,
                          const qsimd_tensor *scales, const qsimd_mx_options *opt,
                          qsimd_error *err)

cdef extern from "Python.h":
    const char *PyUnicode_AsUTF8AndSize(object s, Py_ssize_t *size) except NULL


cdef int _mx_call(cnp.ndarray x, cnp.ndarray y, const char *element_dtype, int64_t axis,
                  int64_t block_size, int64_t rounding_mode, int num_threads) except -1:
    cdef shaped sx, sy
    cdef qsimd_mx_options opt
    cdef qsimd_error err
    cdef int rc
    fill(&sx, x, 1, 0)
    fill(&sy, y, 1, 0)
    opt.element_dtype = element_dtype
    opt.axis = axis
    opt.block_size = block_size
    opt.rounding_mode = rounding_mode
    opt.num_threads = num_threads
    with nogil:
        rc = qsimd_mx_quantize_dequantize(&sx.t, &sy.t, &opt, &err)
    if rc != QSIMD_OK:
        raise_error(rc, &err)
    return 0


def mx(cnp.ndarray x, cnp.ndarray y, const char *element_dtype, int64_t axis, int64_t block_size,
       int64_t rounding_mode, int num_threads):
    """qsimd_mx_quantize_dequantize: native C-contiguous float32 x and y of its shape (y may
    be x); the C core checks everything else."""
    _mx_call(x, y, element_dtype, axis, block_size, rounding_mode, num_threads)
    return y


cdef int _bfp_call(cnp.ndarray x, cnp.ndarray y, const char *bfp_method, int64_t axis,
                   int64_t bit_width, int64_t block_size, int64_t rounding_mode,
                   int64_t sub_block_size, int64_t sub_block_shift_bits,
                   int convert_to_bfloat_before_bfp, int num_threads) except -1:
    cdef shaped sx, sy
    cdef qsimd_bfp_options opt
    cdef qsimd_error err
    cdef int rc
    fill(&sx, x, 1, 0)
    fill(&sy, y, 1, 0)
    opt.bfp_method = bfp_method
    opt.axis = axis
    opt.bit_width = bit_width
    opt.block_size = block_size
    opt.rounding_mode = rounding_mode
    opt.sub_block_size = sub_block_size
    opt.sub_block_shift_bits = sub_block_shift_bits
    opt.convert_to_bfloat_before_bfp = convert_to_bfloat_before_bfp
    opt.num_threads = num_threads
    with nogil:
        rc = qsimd_bfp_quantize_dequantize(&sx.t, &sy.t, &opt, &err)
    if rc != QSIMD_OK:
        raise_error(rc, &err)
    return 0


def bfp(cnp.ndarray x, cnp.ndarray y, const char *bfp_method, int64_t axis, int64_t bit_width,
        int64_t block_size, int64_t rounding_mode, int64_t sub_block_size,
        int64_t sub_block_shift_bits, int convert_to_bfloat_before_bfp, int num_threads):
    """qsimd_bfp_quantize_dequantize, as mx()."""
    _bfp_call(x, y, bfp_method, axis, bit_width, block_size, rounding_mode, sub_block_size,
              sub_block_shift_bits, convert_to_bfloat_before_bfp, num_threads)
    return y


cdef object _mx_x(object x):
    """x when it is a native float32 C-contiguous ndarray, else None."""
    if type(x) is not np.ndarray:
        return None
    if cnp.PyArray_TYPE(<cnp.ndarray>x) != cnp.NPY_FLOAT32 or not QS_ARR_OK(<cnp.ndarray>x):
        return None
    return x


cdef object _mx_result(cnp.ndarray a, object out):
    """The float32 array of a's shape to write: new, out= as it is, or a itself (out is a:
    in place, which the C API allows); None: the general path decides."""
    cdef cnp.ndarray y
    cdef int i, nd = cnp.PyArray_NDIM(a)
    if out is None:
        return _new_result(nd, cnp.PyArray_DIMS(a), cnp.NPY_FLOAT32)
    if out is a:
        return a if QS_OUT_OK(a) else None
    if type(out) is not np.ndarray:
        return None
    y = <cnp.ndarray>out
    if cnp.PyArray_TYPE(y) != cnp.NPY_FLOAT32 or not QS_OUT_OK(y) or cnp.PyArray_NDIM(y) != nd:
        return None
    for i in range(nd):
        if cnp.PyArray_DIMS(y)[i] != cnp.PyArray_DIMS(a)[i]:
            return None
    if not _apart(<char *>cnp.PyArray_DATA(a), <char *>cnp.PyArray_DATA(a) + cnp.PyArray_NBYTES(a),
                  y):
        return None
    return y


cdef const char *_mx_name(object name):
    """A str's UTF-8 bytes without an embedded NUL, else NULL."""
    cdef Py_ssize_t size
    cdef const char *s
    if type(name) is not str:
        return NULL
    s = PyUnicode_AsUTF8AndSize(name, &size)
    return s if <size_t>size == strlen(s) else NULL


def mx_fast(object x, object element_dtype, object axis, object block_size,
            object rounding_mode, object out, object num_threads):
    """qsimd.quark.mx_quantize_dequantize for arguments in final form (native float32
    C-contiguous x, a str element type, plain ints, a fitting out= or x itself); None: take
    the general path, which makes the same C call after converting."""
    cdef int64_t ax, bs, mode
    cdef int th = _threads(num_threads)
    cdef const char *name = _mx_name(element_dtype)
    a = _mx_x(x)
    if (a is None or name == NULL or th < 0 or not _int64(axis, &ax)
            or not _int64(block_size, &bs) or not _int64(rounding_mode, &mode)):
        return None
    y = _mx_result(a, out)
    if y is None:
        return None
    _mx_call(a, y, name, ax, bs, mode, th)
    return y


def bfp_fast(object x, object bfp_method, object axis, object bit_width, object block_size,
             object rounding_mode, object sub_block_size, object sub_block_shift_bits,
             object convert_to_bfloat_before_bfp, object out, object num_threads):
    """qsimd.quark.bfp_quantize_dequantize for arguments in final form, as mx_fast."""
    cdef int64_t ax, bw, bs, mode, sub, shift, tb
    cdef int th = _threads(num_threads)
    cdef const char *name = _mx_name(bfp_method)
    a = _mx_x(x)
    if (a is None or name == NULL or th < 0 or not _int64(axis, &ax)
            or not _int64(bit_width, &bw) or not _int64(block_size, &bs)
            or not _int64(rounding_mode, &mode) or not _int64(sub_block_size, &sub)
            or not _int64(sub_block_shift_bits, &shift)
            or not _int64(convert_to_bfloat_before_bfp, &tb)):
        return None
    y = _mx_result(a, out)
    if y is None:
        return None
    _bfp_call(a, y, name, ax, bw, bs, mode, sub, shift, tb != 0, th)
    return y


def quantize_mx(cnp.ndarray x, cnp.ndarray elements, int element_code, cnp.ndarray scales,
                int64_t axis, int64_t block_size, int num_threads):
    """qsimd_quantize_mx: native C-contiguous float32 x, elements of x's shape (one code per
    byte) and uint8 scales (e8m0 codes); the C core checks shapes, axis and block size."""
    cdef shaped sx, se, ss
    cdef qsimd_mx_options opt
    cdef qsimd_error err
    cdef int rc
    fill(&sx, x, 1, 0)
    fill(&se, elements, element_code, 0)
    fill(&ss, scales, 24, 0)
    qsimd_mx_options_init(&opt)
    opt.axis = axis
    opt.block_size = block_size
    opt.num_threads = num_threads
    with nogil:
        rc = qsimd_quantize_mx(&sx.t, &se.t, &ss.t, &opt, &err)
    if rc != QSIMD_OK:
        raise_error(rc, &err)
    return elements, scales
