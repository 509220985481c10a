# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, freethreading_compatible=True
"""Cython bridge: ndarray -> qsimd_tensor, one C call with the GIL released, C error -> exception.

The general entry points take arrays the Python layer has normalised; the *_fast ones check
arguments already in final form at C level and decline the rest. C validates shapes, axes,
block sizes and type combinations and owns those messages. Buffers are read through NumPy's
C API: acquiring a memoryview costs more than a 1K-element kernel.
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
    int QSIMD_OK, QSIMD_ERR_TYPE, QSIMD_ERR_VALUE, QSIMD_ERR_NOMEM
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
    ctypedef struct qsimd_prepared:
        pass
    ctypedef struct qsimd_pre_op:
        int32_t kind
        int64_t count
        const float *values
    int qsimd_prepare_quantize(const qsimd_tensor *scale, const qsimd_tensor *zero_point,
                               int32_t y_dtype, int32_t y_packed,
                               const qsimd_quantize_options *opt, qsimd_prepared **out,
                               qsimd_error *err)
    int qsimd_prepare_dequantize(const qsimd_tensor *scale, const qsimd_tensor *zero_point,
                                 const qsimd_dequantize_options *opt, qsimd_prepared **out,
                                 qsimd_error *err)
    int qsimd_prepare_quantize_chain(const qsimd_tensor *scale, const qsimd_tensor *zero_point,
                                     int32_t y_dtype, int32_t y_packed,
                                     const qsimd_quantize_options *opt, const qsimd_pre_op *ops,
                                     int32_t n_ops, int64_t pre_axis, const int64_t *perm,
                                     int32_t perm_len, qsimd_prepared **out, qsimd_error *err)
    int qsimd_prepared_run(const qsimd_prepared *p, const qsimd_tensor *x,
                           const qsimd_tensor *y, qsimd_error *err)
    void qsimd_prepared_free(qsimd_prepared *p)
    const char *qsimd_get_isa()
    int qsimd_isa_available(const char *name)
    int qsimd_set_isa(const char *name, qsimd_error *err)
    const char *const *qsimd_isa_names()
    unsigned qsimd_cpu_features()
    const char *qsimd_version()
    int qsimd_set_num_threads(int n)
    int qsimd_get_num_threads()
    const char *qsimd_env_isa_error()


# Shapes are copied into int64 (npy_intp is 32-bit on 32-bit platforms).
cdef struct shaped:
    qsimd_tensor t
    int64_t dims[32]


# x, scale, zero point or out as a fast path reads it
cdef struct view:
    char *data
    int code
    int nd
    int64_t dims[32]
    int64_t size
    int64_t nbytes


cdef inline int fill(shaped *s, cnp.ndarray a, int dtype, int packed) except -1:
    cdef int i, nd = cnp.PyArray_NDIM(a)
    if nd > 32:
        raise ValueError(f"arrays of rank {nd} are not supported (at most 32 dimensions)")
    _tensor(s, cnp.PyArray_DATA(a), dtype, 0, NULL, packed)
    s.t.ndim = nd
    for i in range(nd):
        s.dims[i] = cnp.PyArray_DIMS(a)[i]
    return 0


cdef raise_error(int rc, qsimd_error *err):
    """The exception for a C error."""
    msg = err.message.decode("utf-8", "replace")
    if rc == QSIMD_ERR_TYPE:
        raise TypeError(msg)
    if rc == QSIMD_ERR_NOMEM:
        raise MemoryError(msg)
    raise ValueError(msg)


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
    b = b"" if name is None else name.encode()
    cdef int rc = qsimd_set_isa(b, &err)
    if rc != QSIMD_OK:
        raise_error(rc, &err)   # ValueError: unknown, or not for this CPU


def env_isa_error():
    cdef const char *e = qsimd_env_isa_error()
    return None if e == NULL else e.decode("utf-8", "replace")


_CPU_BITS = {"sse4.1": QSIMD_CPU_SSE41, "avx2": QSIMD_CPU_AVX2, "fma": QSIMD_CPU_FMA,
             "f16c": QSIMD_CPU_F16C, "avx512f": QSIMD_CPU_AVX512F,
             "avx512bw": QSIMD_CPU_AVX512BW, "avx512dq": QSIMD_CPU_AVX512DQ,
             "avx512vl": QSIMD_CPU_AVX512VL, "os_avx": QSIMD_CPU_OS_AVX,
             "os_avx512": QSIMD_CPU_OS_AVX512, "neon": QSIMD_CPU_NEON, "fp16": QSIMD_CPU_FP16}


def cpu_feature_bits():
    cdef unsigned f = qsimd_cpu_features()
    return {name: bool(f & bit) for name, bit in _CPU_BITS.items()}


def c_version():
    return qsimd_version().decode()


# ---------------------------------------------------------------------------------------------
# Fast paths: every call whose arguments are already in final form (exact C-contiguous,
# aligned, native ndarrays of qsimd's types, NumPy / Python scalars, plain int attributes,
# cached dtype spellings, a fitting `out=`) goes straight to C. Rule: the C call is made only
# when the general path in _api.py would make the very same call; anything it would convert
# or copy returns None here, and the general path runs. What C refuses is raised here as the
# general path raises it (an x of a qsimd type the operator does not take goes to C too: its
# message is the general path's).

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
cdef uint32_t Q_SCALE = 0, Q_OUT = 0, DQ_SCALE = 0, DQ_OUT = 0
cdef PyObject *_stype[32]           # exact NumPy scalar type per code (kept by _keep)
cdef object _keep = None
cdef object _packed_cls = None
cdef object _tuple_new = tuple.__new__
cdef tuple _ydtype = ()            # np.dtype per code, for packed results' dtype field
cdef object _resolve = None
cdef dict _dl_dtypes = {}          # (DLPack code, bits) -> np.dtype, for from_dlpack
cdef int8_t _dl_codes[16][9]       # DLPack code, bytes per element -> ONNX code (0: none)
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
    global _zint, Q_SCALE, Q_OUT, DQ_SCALE, DQ_OUT
    global _keep, _packed_cls, _resolve, _ydtype
    from . import _dtypes as d
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
    Q_SCALE, Q_OUT = _mask(d.Q_SCALE_CODES), _mask(d.Q_OUTPUT_CODES)
    DQ_SCALE, DQ_OUT = _mask(d.DQ_SCALE_CODES), _mask(d.DQ_OUTPUT_CODES)
    _keep = tuple(types)
    _ydtype = tuple(d.CODE_TO_DTYPE.get(c) for c in range(32))
    _packed_cls = packed_cls
    _resolve = d.resolve
    _dl_dtypes.update(d.dlpack_dtypes())
    for (dl, bits), dt in _dl_dtypes.items():
        code = d.DTYPE_TO_CODE.get(dt, 0)
        if dl < 16 and bits % 8 == 0 and bits <= 64 and 0 < code < 32 and _size_of[code]:
            _dl_codes[dl][bits // 8] = code


cdef inline bint _has(uint32_t mask, int code) noexcept:
    return code > 0 and (mask >> code) & 1u


# ---------------------------------------------------------------------------------------------
# Arrays of other libraries. A type with a DLPack C exchange table (`__dlpack_c_exchange_api__`,
# PyTorch 2.10 and later) describes a tensor without a Python call, in about 0.1 us: the fast
# paths take contiguous CPU tensors of qsimd's types through it as they take ndarrays (a view
# is all they need). Everything else (strided tensors, other producers) becomes a zero-copy
# ndarray in qsimd._arrays, through from_dlpack() below.

cdef extern from "_dlpack.h":
    enum:
        QS_DL_CPU, QS_DL_CUDA_HOST, QS_DL_ROCM_HOST, QS_DL_CUDA_MANAGED
    uint64_t QS_DL_READ_ONLY
    ctypedef struct qs_dldevice:
        int32_t device_type
        int32_t device_id
    ctypedef struct qs_dltype:
        uint8_t code
        uint8_t bits
        uint16_t lanes
    ctypedef struct qs_dltensor:
        void *data
        qs_dldevice device
        int32_t ndim
        qs_dltype dtype
        int64_t *shape
        int64_t *strides
        uint64_t byte_offset
    ctypedef struct qs_dlmanaged:
        qs_dltensor dl_tensor
        void (*deleter)(qs_dlmanaged *) noexcept
    ctypedef struct qs_dlversion:
        uint32_t major
        uint32_t minor
    ctypedef struct qs_dlmanaged_v:
        qs_dlversion version
        void (*deleter)(qs_dlmanaged_v *) noexcept
        uint64_t flags
        qs_dltensor dl_tensor
    ctypedef struct qs_dlapi_header:
        qs_dlversion version
        qs_dlapi_header *prev_api
    ctypedef struct qs_dlapi:
        qs_dlapi_header header
        int (*managed_tensor_from_py_object_no_sync)(void *, qs_dlmanaged_v **) noexcept
        int (*dltensor_from_py_object_no_sync)(void *, qs_dltensor *) noexcept

from cpython.dict cimport PyDict_GetItem
from cpython.exc cimport PyErr_Clear, PyErr_Occurred
from cpython.pycapsule cimport PyCapsule_IsValid, PyCapsule_GetPointer, PyCapsule_SetName

cdef extern from *:
    """
    /* An ndarray over foreign memory (its base set by the caller); the descriptor is stolen. */
    static PyObject *qs_array_over(PyObject *descr, int nd, npy_intp *dims, npy_intp *strides,
                                   void *data, int writable)
    {
        Py_INCREF(descr);
        return PyArray_NewFromDescr(&PyArray_Type, (PyArray_Descr *)descr, nd, dims, strides,
                                    data, writable ? NPY_ARRAY_WRITEABLE : 0, NULL);
    }
    """
    object qs_array_over(object descr, int nd, cnp.npy_intp *dims, cnp.npy_intp *strides,
                         void *data, int writable)


cdef class _DLType:
    """What the fast paths need to know about a tensor type: its exchange table (NULL: none)
    and PyTorch's flags that DLPack does not carry (a lazily negated view's memory holds the
    values negated; autograd cannot see a write into a tensor that requires grad)."""
    cdef const qs_dlapi *api
    cdef object capsule        # keeps the table alive
    cdef object is_neg         # the type's is_neg method, or None
    cdef bint has_grad         # the type has requires_grad


cdef dict _dl_types = {}       # type -> _DLType, or None for types without DLPack
# float32, float16, bfloat16, the float8 types, e8m0: the codes a tensor requiring grad can have
cdef uint32_t FLOAT_CODES = ((1u << 1) | (1u << 10) | (1u << 16) | (1u << 17) | (1u << 18) |
                             (1u << 19) | (1u << 20) | (1u << 24))
cdef int DL_TYPES_MAX = 64


cdef object _dl_type(object t):
    """The cached _DLType of a type (None: no DLPack). Looked up on the type, as the exchange
    protocol asks."""
    cdef _DLType info
    cdef const qs_dlapi *api
    r = _dl_types.get(t, False)
    if r is not False:
        return r
    r = None
    if getattr(t, "__dlpack__", None) is not None:
        info = _DLType()
        cap = getattr(t, "__dlpack_c_exchange_api__", None)
        if cap is not None and PyCapsule_IsValid(cap, "dlpack_exchange_api"):
            api = <const qs_dlapi *>PyCapsule_GetPointer(cap, "dlpack_exchange_api")
            while api != NULL and api.header.version.major > 1:   # a newer major: its chain
                api = <const qs_dlapi *>api.header.prev_api
            # the table (with dltensor_from_py_object_no_sync) exists from DLPack 1.2
            if api != NULL and api.header.version.major == 1 and api.header.version.minor >= 2:
                info.api = api
                info.capsule = cap
        neg = getattr(t, "is_neg", None)
        info.is_neg = neg if callable(neg) else None
        info.has_grad = hasattr(t, "requires_grad")
        r = info
    if len(_dl_types) < DL_TYPES_MAX:   # types made on the fly are looked up each time
        _dl_types[t] = r
    return r


cdef inline int _dl_code(qs_dltype t) noexcept:
    """The ONNX code of a DLPack element type that the fast paths table; 0 otherwise."""
    if t.lanes != 1 or t.code >= 16 or t.bits % 8 or t.bits > 64:
        return 0
    return _dl_codes[t.code][t.bits // 8]


cdef int _view(object o, view *v, bint out) except -1:
    """o in final form: an exact, C-contiguous, aligned, native ndarray (writable for `out`)
    or a contiguous CPU tensor read through its type's exchange table, of a tabled type and
    rank <= 32. Returns its ONNX code; 0: the general path decides."""
    cdef cnp.ndarray a
    cdef int num, i, nd, code
    cdef int64_t d, n = 1
    cdef qs_dltensor t
    cdef _DLType info
    cdef PyObject *cached
    if type(o) is cnp.ndarray:
        a = <cnp.ndarray>o
        num = cnp.PyArray_TYPE(a)
        nd = cnp.PyArray_NDIM(a)
        if num < 0 or num >= NUMS or nd > 32 or not (QS_OUT_OK(a) if out else QS_ARR_OK(a)):
            return 0
        code = _code_of[num]
        for i in range(nd):
            v.dims[i] = cnp.PyArray_DIMS(a)[i]
        v.data = <char *>cnp.PyArray_DATA(a)
        v.nd = nd
        v.size = cnp.PyArray_SIZE(a)
        v.nbytes = cnp.PyArray_NBYTES(a)
        v.code = code
        return code
    cached = PyDict_GetItem(_dl_types, <object><PyObject *>Py_TYPE(o))   # borrowed
    if cached == NULL:
        r = _dl_type(type(o))
        if r is None:
            return 0
        info = <_DLType>r
    elif cached == <PyObject *>None:
        return 0
    else:
        info = <_DLType>cached
    if info.api == NULL or info.api.dltensor_from_py_object_no_sync == NULL:
        return 0
    if info.api.dltensor_from_py_object_no_sync(<void *>o, &t) != 0:
        PyErr_Clear()   # the general path reports what is wrong
        return 0
    nd = t.ndim
    code = _dl_code(t.dtype)
    if t.device.device_type != QS_DL_CPU or code == 0 or nd < 0 or nd > 32 or t.data == NULL:
        return 0
    for i in range(nd - 1, -1, -1):   # C order, dimensions of 1 aside
        d = t.shape[i]
        if d < 0 or (d != 1 and t.strides != NULL and t.strides[i] != n):
            return 0
        if d and n > INT64_MAX // d:
            return 0
        n *= d
        v.dims[i] = d
    v.data = <char *>t.data + t.byte_offset
    if <size_t>v.data % <size_t>_size_of[code]:
        return 0   # misaligned: the general path copies
    if info.is_neg is not None and info.is_neg(o):
        return 0
    if out and info.has_grad and (1u << code) & FLOAT_CODES and o.requires_grad:
        return 0   # (integer tensors cannot require grad)
    v.nd = nd
    v.size = n
    v.nbytes = n * _size_of[code]
    v.code = code
    return code


cdef class _DLOwner:
    """Owns a DLPack tensor that an ndarray views (the array's base): its deleter runs when
    the array goes."""
    cdef qs_dlmanaged *legacy
    cdef qs_dlmanaged_v *versioned

    def __dealloc__(self):
        if self.versioned != NULL and self.versioned.deleter != NULL:
            self.versioned.deleter(self.versioned)
        elif self.legacy != NULL and self.legacy.deleter != NULL:
            self.legacy.deleter(self.legacy)


cdef int _producer_failed() except -1:
    """A producer's C function returned an error: raise what it set."""
    if PyErr_Occurred() == NULL:
        raise ValueError("the DLPack producer failed without saying why")
    return -1


_DL_DEVICES = {2: "CUDA", 4: "OpenCL", 7: "Vulkan", 8: "Metal", 9: "VPI", 10: "ROCm",
               12: "an extension device", 14: "oneAPI", 15: "WebGPU", 16: "Hexagon",
               17: "MAIA", 18: "Trainium"}


class _Refused(Exception):
    """A tensor qsimd will not read or write, for the message given (a ValueError)."""


cdef _check_device(int kind, int index, str argname, error=_Refused):
    """error: what to raise (_Refused where the producer's own errors are caught too)."""
    if kind not in (QS_DL_CPU, QS_DL_CUDA_HOST, QS_DL_ROCM_HOST, QS_DL_CUDA_MANAGED):
        where = _DL_DEVICES.get(kind, f"DLPack device type {kind}")
        raise error(f"{argname} is on {where} (device {index}): qsimd computes on the CPU; "
                    f"copy it to host memory first (e.g. {argname}.cpu())")


def _short(e):
    """A producer's message without the C++ stack trace some attach."""
    return str(e).split("\n", 1)[0]


def from_dlpack(object obj, str argname, bint out=False):
    """obj's memory as an ndarray, without a copy: through its type's exchange table or its
    __dlpack__() capsule. Element types map to NumPy / ml_dtypes (bfloat16, float8, e8m0);
    strides and read-only flags carry over. `out`: the array must be writable. Errors name
    `argname`: ValueError for a tensor on another device, one that cannot be exported or
    written, TypeError for element types NumPy has no type for."""
    cdef _DLOwner owner = _DLOwner()
    cdef const qs_dlapi *api = NULL
    cdef qs_dltensor *t
    cdef uint64_t flags = 0
    cdef int i, nd, item
    cdef cnp.npy_intp dims[32]
    cdef cnp.npy_intp strides[32]
    cdef int64_t n = 1
    cdef char *data
    cdef cnp.ndarray arr
    cdef _DLType info = None
    r = _dl_type(type(obj))
    if r is not None:
        info = <_DLType>r
    cap = None
    try:   # whatever the producer raises is reported against the argument
        if info is not None and info.is_neg is not None and info.is_neg(obj):
            # PyTorch's lazy negation: the memory holds -value
            if out or getattr(obj, "resolve_neg", None) is None:
                raise _Refused(f"{argname} is a lazily negated tensor (its memory holds the "
                               f"negated values): pass {argname}.resolve_neg()")
            obj = obj.resolve_neg()
        if out and info is not None and info.has_grad and obj.requires_grad:
            raise _Refused(f"{argname} requires grad: qsimd writes its memory directly, which "
                           f"autograd cannot track (pass {argname}.detach() to do so anyway)")
        if info is not None and info.api != NULL and \
                info.api.managed_tensor_from_py_object_no_sync != NULL:
            api = info.api
        if api != NULL:
            if api.managed_tensor_from_py_object_no_sync(<void *>obj, &owner.versioned) != 0:
                _producer_failed()
        else:
            dev = getattr(obj, "__dlpack_device__", None)
            if dev is not None:
                kind, index = dev()
                _check_device(int(kind), int(index), argname)
            try:
                cap = obj.__dlpack__(max_version=(1, 3))
            except TypeError:   # a producer from before DLPack 1.0
                cap = obj.__dlpack__()
    except _Refused as e:
        raise ValueError(str(e)) from None
    except MemoryError:
        raise
    except TypeError as e:
        raise TypeError(f"{argname} cannot be read through DLPack: {_short(e)}") from e
    except Exception as e:   # BufferError, RuntimeError, ...: what the producer refuses
        raise ValueError(f"{argname} cannot be read through DLPack: {_short(e)}") from e
    if cap is not None:
        if PyCapsule_IsValid(cap, "dltensor_versioned"):
            owner.versioned = <qs_dlmanaged_v *>PyCapsule_GetPointer(cap, "dltensor_versioned")
            PyCapsule_SetName(cap, "used_dltensor_versioned")
        elif PyCapsule_IsValid(cap, "dltensor"):
            owner.legacy = <qs_dlmanaged *>PyCapsule_GetPointer(cap, "dltensor")
            PyCapsule_SetName(cap, "used_dltensor")
        else:
            raise TypeError(f"{argname}.__dlpack__() did not return a DLPack capsule")
    if owner.versioned != NULL:
        if owner.versioned.version.major != 1:
            raise ValueError(f"{argname}: DLPack version {owner.versioned.version.major} is not "
                             f"supported (qsimd reads 1.x)")
        t = &owner.versioned.dl_tensor
        flags = owner.versioned.flags
    else:
        t = &owner.legacy.dl_tensor
    _check_device(t.device.device_type, t.device.device_id, argname, ValueError)
    key = (t.dtype.code, t.dtype.bits)
    dt = _dl_dtypes.get(key) if t.dtype.lanes == 1 else None
    if dt is None:
        if t.dtype.bits < 8 or t.dtype.lanes != 1:
            raise TypeError(f"{argname}: packed DLPack elements ({t.dtype.bits} bits, "
                            f"{t.dtype.lanes} lanes) are not supported; pass 6-, 4- and 2-bit "
                            f"data as a qsimd.PackedTensor of its bytes")
        raise TypeError(f"{argname}: DLPack element type (code {t.dtype.code}, "
                        f"{t.dtype.bits} bits) has no NumPy type")
    nd = t.ndim
    if nd < 0 or nd > 32:
        raise ValueError(f"{argname} has rank {nd}: at most 32 dimensions are supported")
    item = (<cnp.dtype>dt).itemsize
    for i in range(nd - 1, -1, -1):
        if t.shape[i] < 0:
            raise ValueError(f"{argname}: DLPack shape has a negative dimension")
        dims[i] = <cnp.npy_intp>t.shape[i]
        strides[i] = <cnp.npy_intp>((t.strides[i] if t.strides != NULL else n) * item)
        if t.shape[i] and n > INT64_MAX // t.shape[i]:
            raise ValueError(f"{argname}: DLPack shape is too large")
        n *= t.shape[i]
    if out and flags & QS_DL_READ_ONLY:
        raise ValueError(f"{argname} is read-only")
    data = <char *>t.data + t.byte_offset
    if t.data == NULL:
        if n:
            raise ValueError(f"{argname}: DLPack tensor without data")
        return np.empty([dims[i] for i in range(nd)], dt)
    arr = qs_array_over(dt, nd, dims, strides, <void *>data, not (flags & QS_DL_READ_ONLY))
    cnp.set_array_base(arr, owner)
    return arr


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
    _tensor(&p.s, &p.buf, code, 0, NULL, 0)
    p.lo = NULL
    p.hi = NULL


cdef inline int _param_array(param *p, cnp.ndarray a, int code) except -1:
    fill(&p.s, a, code, 0)
    p.lo = <char *>cnp.PyArray_DATA(a)
    p.hi = p.lo + cnp.PyArray_NBYTES(a)
    return 0


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
    cdef double v
    cdef float f
    if type(o) is float:   # a Python float (a NumPy float64 is refused by the general path)
        v = PyFloat_AS_DOUBLE(o)
        if (v > FLT_MAX or v < -FLT_MAX) and not isinf(v):
            return 0   # NumPy warns about the overflow to inf
        f = <float>v   # what np.asarray(o).astype(np.float32) gives
        memcpy(&p.buf, &f, sizeof(float))
        _param_scalar(p, 1)
        return 1
    return _array_param(o, allowed, limit, p)


cdef int _zp_param(object o, int hint, uint32_t allowed, int64_t limit, param *p) except -1:
    """zero point: an array or NumPy scalar of an `allowed` code, or a Python int in range
    of the integer type `hint`; else 0 (fall back)."""
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
    return _array_param(o, allowed, limit, p)


cdef int _array_param(object o, uint32_t allowed, int64_t limit, param *p) except -1:
    """An array, tensor or NumPy scalar of an `allowed` code, of at most `limit` elements;
    else 0 (fall back: the general path raises TypeError / "more than any layout of x can
    use")."""
    cdef int code
    cdef view a
    code = _view(o, &a, False)
    if code:
        if not _has(allowed, code) or a.size > limit:
            return 0
        _tensor(&p.s, a.data, code, a.nd, a.dims, 0)
        p.lo = a.data
        p.hi = a.data + a.nbytes
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


cdef inline bint _apart(char *lo, char *hi, const char *a, int64_t n) noexcept:
    """[a, a + n) does not overlap [lo, hi) (a conservative range check; lo NULL: a scalar)."""
    return lo == NULL or a + n <= lo or hi <= a


cdef object _result(object out, int nd, const int64_t *dims, int code, char *xlo, char *xhi,
                    param *ps, param *pz, char **ydata):
    """out= when usable as it is (returned as given, even a tensor; else None: fall back), or
    a new array of type `code`; *ydata is where the result goes. out= must not overlap x or
    the parameters ps, pz (NULL: none)."""
    cdef cnp.npy_intp ndims[32]
    cdef view v
    cdef int i
    cdef object y
    if out is None:
        for i in range(nd):
            ndims[i] = <cnp.npy_intp>dims[i]
        try:
            y = _new_result(nd, ndims, _num_of[code])
        except (ValueError, MemoryError):
            return None   # (the general path checks the other arguments first, as it should)
        ydata[0] = <char *>cnp.PyArray_DATA(<cnp.ndarray>y)
        return y
    if _view(out, &v, True) != code or v.nd != nd:
        return None
    for i in range(nd):
        if v.dims[i] != dims[i]:
            return None
    if not (_apart(xlo, xhi, v.data, v.nbytes) and
            (ps == NULL or _apart(ps.lo, ps.hi, v.data, v.nbytes)) and
            (pz == NULL or _apart(pz.lo, pz.hi, v.data, v.nbytes))):
        return None   # aliasing: the general path goes through a temporary
    ydata[0] = v.data
    return out


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
    return _fast(True, x, scale, zero_point, axis, block_size, output_dtype, saturate,
                 precision, packed, out, num_threads)


def dequantize_fast(object x, object scale, object zero_point, object axis, object block_size,
                    object output_dtype, object out, object num_threads):
    """dequantize_linear for arguments in final form (x an ndarray, a tensor or a
    PackedTensor); None: take the general path."""
    return _fast(False, x, scale, zero_point, axis, block_size, output_dtype, True, None,
                 False, out, num_threads)


cdef inline object _fast(bint q, object x, object scale, object zero_point, object axis,
                         object block_size, object output_dtype, object saturate,
                         object precision, object packed, object out, object num_threads):
    """QuantizeLinear (q) or DequantizeLinear with the arguments as given, or None."""
    cdef int xt, st, zt = 0, ot, yt, sat = 1, pk = 0, prec = 0, nt
    cdef int xpk = not q and type(x) is _packed_cls
    cdef int64_t c_axis, c_block, limit, ybytes
    cdef view vx
    cdef param ps, pz
    cdef char *ydata = NULL
    cdef shaped sx, sy
    cdef qsimd_quantize_options qo
    cdef qsimd_dequantize_options do
    cdef qsimd_error err
    cdef int rc
    xt = _packed_x(x, &vx) if xpk else _view(x, &vx, False)
    if not xt:   # any type: C checks it, with the message of the general path
        return None
    if not _int64(axis, &c_axis) or not _int64(block_size, &c_block):
        return None
    nt = _threads(num_threads)
    ot = _spec_code(output_dtype)
    if nt < 0 or ot < 0 or (ot and not _has(Q_OUT if q else DQ_OUT, ot)):
        return None
    if q:
        sat = _flag(saturate)
        pk = _flag(packed)
        prec = _spec_code(precision)
        if sat < 0 or pk < 0 or prec < 0:
            return None
    limit = _limit(vx.nd, vx.dims, vx.size)
    st = _scale_param(scale, Q_SCALE if q else DQ_SCALE, limit, &ps)
    if not st:
        return None
    if zero_point is not None:   # C checks its type: the output type's, or x's
        zt = _zp_param(zero_point, (ot or 2) if q else xt, Q_OUT if q else 0xffffffffu, limit,
                       &pz)
        if not zt:
            return None
    yt = (ot or zt or 2) if q else (ot or st)
    if pk and not _bits_of[yt]:
        return None
    # the result (None when out= does not fit as it is: the general path decides)
    ybytes = (vx.size * _bits_of[yt] + 7) // 8   # packed: the bytes
    y = _result(out, 1 if pk else vx.nd, &ybytes if pk else vx.dims, 2 if pk else yt, vx.data,
                vx.data + vx.nbytes, &ps, &pz if zt else NULL, &ydata)
    if y is None:
        return None
    _tensor(&sx, vx.data, xt, vx.nd, vx.dims, xpk)
    _tensor(&sy, ydata, yt, vx.nd, vx.dims, pk)
    qo = qsimd_quantize_options(axis=c_axis, block_size=c_block, saturate=sat, precision=prec,
                                num_threads=nt)
    do = qsimd_dequantize_options(axis=c_axis, block_size=c_block, num_threads=nt)
    with nogil:   # the one C call of the plain functions
        if q:
            rc = qsimd_quantize_linear(&sx.t, &ps.s.t, &pz.s.t if zt else NULL, &qo, &sy.t, &err)
        else:
            rc = qsimd_dequantize_linear(&sx.t, &ps.s.t, &pz.s.t if zt else NULL, &do, &sy.t,
                                         &err)
    if rc != QSIMD_OK:
        raise_error(rc, &err)
    return _packed_result(y, yt, x, &vx) if pk else y


cdef inline object _packed_result(object y, int yt, object x, const view *vx):
    """PackedTensor(y, dtype, x.shape), built as the tuple it is (no Python-level __new__);
    the shape a plain tuple whatever x is."""
    cdef int i
    shape = (<object>x).shape if type(x) is cnp.ndarray else \
        tuple([vx.dims[i] for i in range(vx.nd)])
    return _tuple_new(_packed_cls, (y, _ydtype[yt], shape))


cdef int _packed_x(object x, view *v) except -1:
    """A PackedTensor in final form: its code, v its bytes with the logical shape; else 0."""
    cdef object data = <object>PyTuple_GET_ITEM(x, 0), spec = <object>PyTuple_GET_ITEM(x, 1)
    cdef object shape = <object>PyTuple_GET_ITEM(x, 2)
    cdef tuple tshape
    cdef int code, i, k
    cdef int64_t d, c = 1, nbytes
    cdef bint zero = False, big = False
    if _view(data, v, False) != 2 or v.nd != 1:
        return 0
    nbytes = v.size
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
        v.dims[i] = d
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
    if (c * _bits_of[code] + 7) // 8 != nbytes:
        return 0
    v.nd = k
    v.size = c
    return code


def dynamic_quantize_fast(object x, object out=None):
    """dynamic_quantize_linear for a float32 array or tensor in final form (and a usable out=,
    if any; the general path calls it again with them); None: general path."""
    cdef cnp.ndarray s, z
    cdef view vx
    cdef shaped sx, sy
    cdef char *ydata = NULL
    cdef qsimd_error err
    cdef float scale = 0
    cdef uint8_t zp = 0
    cdef int rc
    if _view(x, &vx, False) != 1:
        return None
    y = _result(out, vx.nd, vx.dims, 2, vx.data, vx.data + vx.nbytes, NULL, NULL, &ydata)
    if y is None:
        return None
    _tensor(&sx, vx.data, 1, vx.nd, vx.dims, 0)
    _tensor(&sy, ydata, 2, vx.nd, vx.dims, 0)
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
    void *qs_prep_vcall_ptr "((void *)qs_prep_vcall)"
    void qs_enable_vcall(object t, Py_ssize_t offset)  # PyObject * in C


cdef class _Prepared:
    cdef void *vcall           # the vectorcall entry (qs_prep_vcall); must stay first
    cdef public object _args   # (scale, zero point, the other arguments by keyword): qsimd._api
    cdef int yt, pk
    cdef object _slow
    cdef qsimd_prepared *prep  # C's prepared parameters (and chain); NULL: every call is slow
    cdef int perm_len
    cdef int64_t perm[32]

    def __cinit__(self, *args, **kwargs):
        self.vcall = qs_prep_vcall_ptr

    def _setup(self, bint is_q, cnp.ndarray scale, int st, object zp, int zt, int yt,
               int64_t axis, int64_t block, int sat, int prec, bint packed, int nt,
               object slow, tuple chain=None):
        """scale / zp: private, C-contiguous, native arrays of codes st / zt (zp may be None;
        zt -1: a zero point whose type follows each x, so every call takes the general path);
        yt: the output code (0 for a dequantizer whose output follows the scale); slow: the
        general path, called as slow(x, out); chain: (kinds, float32 constants, pre_axis,
        perm), a preprocessing chain in front that C prepares (and checks) now, calls running
        through it with y permuted by perm."""
        cdef int i, rc = QSIMD_OK, n = 0
        cdef qsimd_pre_op ops[64]
        cdef cnp.ndarray v
        cdef param ps, pz
        cdef qsimd_quantize_options opt = qsimd_quantize_options(
            axis=axis, block_size=block, saturate=sat, precision=prec, num_threads=nt)
        cdef qsimd_dequantize_options dopt = qsimd_dequantize_options(
            axis=axis, block_size=block, num_threads=nt)
        cdef qsimd_error err
        _param_array(&ps, scale, st)   # C copies them: these need not outlive the call
        if zt > 0:
            _param_array(&pz, <cnp.ndarray>zp, zt)
        self.yt = yt or st
        self.pk = packed
        self._slow = slow
        qsimd_prepared_free(self.prep)   # __init__ called again: the old object goes
        self.prep = NULL
        self.perm_len = 0
        kinds, values, pre_axis, perm = chain or ((), (), 0, ())
        n = len(kinds)
        if n > 64:
            raise ValueError(f"pre must have at most 64 operations, got {n}")
        if len(perm) > 32:
            raise ValueError(f"perm must have at most 32 entries, got {len(perm)}")
        for i in range(n):
            v = <cnp.ndarray>values[i]
            ops[i].kind = kinds[i]
            ops[i].count = cnp.PyArray_SIZE(v)
            ops[i].values = <const float *>cnp.PyArray_DATA(v)
        self.perm_len = len(perm)
        for i in range(self.perm_len):
            self.perm[i] = perm[i]
        # C checks the parameters once, here
        if chain is not None:
            rc = qsimd_prepare_quantize_chain(&ps.s.t, &pz.s.t if zt > 0 else NULL, yt, packed,
                                              &opt, ops, n, pre_axis, self.perm, self.perm_len,
                                              &self.prep, &err)
        elif is_q:
            rc = qsimd_prepare_quantize(&ps.s.t, &pz.s.t if zt > 0 else NULL, yt, packed, &opt,
                                        &self.prep, &err)
        elif zt >= 0:   # (zt -1: the zero point's type and shape follow x, per call)
            rc = qsimd_prepare_dequantize(&ps.s.t, &pz.s.t if zt > 0 else NULL, &dopt,
                                          &self.prep, &err)
        if rc != QSIMD_OK:
            raise_error(rc, &err)

    def __dealloc__(self):
        qsimd_prepared_free(self.prep)

    def __call__(self, x, out=None):
        return _prepared_call(self, x, out)

    def _run_chain(self, x, y):
        """The general path's chain call, x and y in final form."""
        return _run_prepared(self, x, y, True)

    scale = property(lambda self: self._args[0], doc="the prepared scale (a read-only copy)")
    zero_point = property(lambda self: self._args[1], doc="the prepared zero point, or None")
    axis = property(lambda self: self._args[2]["axis"])
    block_size = property(lambda self: self._args[2]["block_size"])
    output_dtype = property(lambda self: _ydtype[self._args[2]["output_dtype"]])

    def __reduce__(self):
        return (_api_mod()._rebuild, (type(self), self._args[:2], self._args[2]))

    def __repr__(self):
        return _api_mod()._repr_prepared(self)


cdef object _prepared_call(object obj, object x, object out):   # the vectorcall's
    return _run_prepared(<_Prepared>obj, x, out, False)


cdef object _run_prepared(_Prepared self, object x, object out, bint final):
    """A call, x and out in final form: C's prepared object runs it (checking x). Anything
    else, and any error, through the general path (self._slow), which converts them and
    reports what is wrong; a chain's general path calls this again with final set: the C
    error is raised then (None: x has rank > 32)."""
    cdef int xt, i
    cdef view vx, vy
    cdef int64_t ybytes
    cdef char *ydata = NULL
    cdef shaped sx, sy
    cdef qsimd_error err
    cdef int rc
    xt = _view(x, &vx, False) if self.prep != NULL else 0
    if not xt or (self.perm_len and self.perm_len != vx.nd):
        return None if final else self._slow(x, out)
    vy.nd = vx.nd   # y's shape: x's permuted
    for i in range(vx.nd):
        vy.dims[i] = vx.dims[self.perm[i]] if self.perm_len else vx.dims[i]
    ybytes = (vx.size * _bits_of[self.yt] + 7) // 8   # packed: the bytes
    # (the parameters are C's private copies: out cannot overlap them)
    y = _result(out, 1 if self.pk else vy.nd, &ybytes if self.pk else vy.dims,
                2 if self.pk else self.yt, vx.data, vx.data + vx.nbytes, NULL, NULL, &ydata)
    if y is None:
        return None if final else self._slow(x, out)
    _tensor(&sx, vx.data, xt, vx.nd, vx.dims, 0)
    _tensor(&sy, ydata, self.yt, vy.nd, vy.dims, self.pk)
    with nogil:
        rc = qsimd_prepared_run(self.prep, &sx.t, &sy.t, &err)
    if rc != QSIMD_OK:
        if not final:
            return self._slow(x, out)
        raise_error(rc, &err)
    return _packed_result(y, self.yt, None, &vy) if self.pk else y


cdef class Quantizer(_Prepared):
    """QuantizeLinear with its parameters prepared once: ``q = Quantizer(scale, zero_point,
    axis=..., ...)``, then ``q(x, out=None)`` equals ``quantize_linear(x, scale, zero_point,
    axis=..., ...)`` exactly, with only x (and out) checked per call. pre / pre_axis / perm:
    a preprocessing chain in front (``q(x)`` equals ``quantize_linear(np.transpose(chain(x),
    perm), ...)``). Thread-safe, picklable; details in docs/serving.md."""

    def __init__(self, scale, zero_point=None, *, axis=1, block_size=0, output_dtype=None,
                 saturate=True, precision=None, packed=False, num_threads=None, pre=None,
                 pre_axis=-1, perm=None):
        _api_mod()._init_quantizer(self, scale, zero_point, axis, block_size, output_dtype,
                                   saturate, precision, packed, num_threads, pre, pre_axis,
                                   perm)

    saturate = property(lambda self: self._args[2]["saturate"])

    @classmethod
    def __class_getitem__(cls, item):
        """Quantizer[np.ndarray] / Quantizer[qsimd.PackedTensor]: what a call returns, for
        annotations (the stubs make Quantizer generic over it)."""
        return _GenericAlias(cls, item)


cdef class Dequantizer(_Prepared):
    """DequantizeLinear with its parameters prepared once: ``dq(x, out=None)`` equals
    ``dequantize_linear(x, scale, zero_point, ...)`` exactly; as Quantizer otherwise."""

    def __init__(self, scale, zero_point=None, *, axis=1, block_size=0, output_dtype=None,
                 num_threads=None):
        _api_mod()._init_dequantizer(self, scale, zero_point, axis, block_size, output_dtype,
                                     num_threads)


from types import GenericAlias as _GenericAlias

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
    """qsimd.dynamic_quantize for arguments in final form (the general path calls it again
    with them); None: take the general path."""
    cdef int yt, sym, nt, i, a, rc
    cdef int64_t c_axis, c_block = 0, nb
    cdef cnp.ndarray s, z
    cdef cnp.npy_intp sdims[32]
    cdef int64_t sd[32]
    cdef view vx
    cdef shaped sx, sy, ss, sz
    cdef char *ydata = NULL
    cdef qsimd_dynamic_options opt
    cdef qsimd_error err
    if _view(x, &vx, False) != 1 or not _int64(axis, &c_axis):
        return None
    if block_size is not None and (not _int64(block_size, &c_block) or c_block < 1):
        return None
    yt = _spec_code(output_dtype)
    sym = _flag(symmetric)
    nt = _threads(num_threads)
    if yt <= 0 or not _size_of[yt] or sym < 0 or nt < 0:
        return None   # (C checks the output type, with `symmetric`)
    # blocks along the axis, without overflow for any block size; C reports a rank, axis or
    # empty x before it looks at the scale (then empty)
    a = <int>(c_axis + vx.nd if c_axis < 0 else c_axis) if -vx.nd <= c_axis < vx.nd else -1
    nb = 0 if a < 0 or vx.size == 0 else 1 if c_block == 0 else (vx.dims[a] - 1) // c_block + 1
    for i in range(vx.nd):
        sd[i] = nb if i == a or a < 0 else vx.dims[i]
        sdims[i] = <cnp.npy_intp>sd[i]
    y = _result(out, vx.nd, vx.dims, yt, vx.data, vx.data + vx.nbytes, NULL, NULL, &ydata)
    if y is None:
        return None
    s = cnp.PyArray_EMPTY(vx.nd, sdims, cnp.NPY_FLOAT32, 0)
    z = cnp.PyArray_ZEROS(vx.nd, sdims, _num_of[yt], 0) if sym else \
        cnp.PyArray_EMPTY(vx.nd, sdims, _num_of[yt], 0)
    _tensor(&sx, vx.data, 1, vx.nd, vx.dims, 0)
    _tensor(&sy, ydata, yt, vx.nd, vx.dims, 0)
    _tensor(&ss, cnp.PyArray_DATA(s), 1, vx.nd, sd, 0)
    _tensor(&sz, cnp.PyArray_DATA(z), yt, vx.nd, sd, 0)
    opt = qsimd_dynamic_options(axis=c_axis, block_size=c_block, symmetric=sym, num_threads=nt)
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
    int qsimd_mx_quantize_dequantize(const qsimd_tensor *x, const qsimd_tensor *y,
                                     const qsimd_mx_options *opt, qsimd_error *err)
    int qsimd_bfp_quantize_dequantize(const qsimd_tensor *x, const qsimd_tensor *y,
                                      const qsimd_bfp_options *opt, qsimd_error *err)
    int qsimd_quantize_mx(const qsimd_tensor *x, const qsimd_tensor *elements,
                          const qsimd_tensor *scales, const qsimd_mx_options *opt,
                          qsimd_error *err)

cdef extern from "Python.h":
    const char *PyUnicode_AsUTF8AndSize(object s, Py_ssize_t *size)


cdef const char *_mx_name(object name) noexcept:
    """A str's UTF-8 bytes without an embedded NUL, else NULL (a lone surrogate, which has no
    UTF-8, too: the general path escapes it, and C names the argument)."""
    cdef Py_ssize_t size
    cdef const char *s
    if type(name) is not str:
        return NULL
    s = PyUnicode_AsUTF8AndSize(name, &size)
    if s == NULL:
        PyErr_Clear()
        return NULL
    return s if <size_t>size == strlen(s) else NULL


def fake_quantize_fast(bint bfp, object x, object name, tuple ints, object out,
                       object num_threads):
    """qsimd.quark's MX (bfp False: v is axis, block_size, rounding_mode) / BFP (v: its int64
    options in qsimd.h's order) for arguments in final form (float32 x, a str name, plain
    ints, a fitting out= or x itself); None: take the general path, which converts them and
    calls this again. The C core checks the rest."""
    cdef int64_t v[7]
    cdef int i, rc, th = _threads(num_threads)
    cdef const char *cname = _mx_name(name)
    cdef view vx
    cdef shaped sx, sy
    cdef char *ydata = NULL
    cdef qsimd_mx_options mo
    cdef qsimd_bfp_options bo
    cdef qsimd_error err
    if _view(x, &vx, False) != 1 or cname == NULL or th < 0:
        return None
    for i in range(len(ints)):
        if not _int64(ints[i], &v[i]):
            return None
    if out is x and _view(out, &vx, True) == 1:   # in place, which the C API allows
        y, ydata = out, vx.data
    else:
        y = _result(out, vx.nd, vx.dims, 1, vx.data, vx.data + vx.nbytes, NULL, NULL, &ydata)
    if y is None:
        return None
    _tensor(&sx, vx.data, 1, vx.nd, vx.dims, 0)
    _tensor(&sy, ydata, 1, vx.nd, vx.dims, 0)
    if bfp:
        bo = qsimd_bfp_options(bfp_method=cname, axis=v[0], bit_width=v[1], block_size=v[2],
                               rounding_mode=v[3], sub_block_size=v[4],
                               sub_block_shift_bits=v[5],
                               convert_to_bfloat_before_bfp=v[6] != 0, num_threads=th)
    else:
        mo = qsimd_mx_options(element_dtype=cname, axis=v[0], block_size=v[1],
                              rounding_mode=v[2], num_threads=th)
    with nogil:
        if bfp:
            rc = qsimd_bfp_quantize_dequantize(&sx.t, &sy.t, &bo, &err)
        else:
            rc = qsimd_mx_quantize_dequantize(&sx.t, &sy.t, &mo, &err)
    if rc != QSIMD_OK:
        raise_error(rc, &err)
    return y


def quantize_mx(cnp.ndarray x, cnp.ndarray elements, int element_code, cnp.ndarray scales,
                int64_t axis, int64_t block_size, int num_threads):
    """qsimd_quantize_mx: native C-contiguous float32 x, elements of x's shape (one code per
    byte) and uint8 scales (e8m0 codes); the C core checks shapes, axis and block size."""
    cdef shaped sx, se, ss
    cdef qsimd_mx_options opt = qsimd_mx_options(   # element_dtype, rounding_mode: unused
        element_dtype=NULL, axis=axis, block_size=block_size, rounding_mode=0,
        num_threads=num_threads)
    cdef qsimd_error err
    cdef int rc
    fill(&sx, x, 1, 0)
    fill(&se, elements, element_code, 0)
    fill(&ss, scales, 24, 0)
    with nogil:
        rc = qsimd_quantize_mx(&sx.t, &se.t, &ss.t, &opt, &err)
    if rc != QSIMD_OK:
        raise_error(rc, &err)
    return elements, scales
