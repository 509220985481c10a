/* onnxruntime custom-op library: AMD Quark's quantization nodes computed by qsimd's C API.
 *
 * RegisterCustomOps(session_options, api_base) registers, with Quark 0.13's names, domains,
 * attributes, defaults and input / output types:
 *   com.amd.quark     ExtendedQuantizeLinear, ExtendedDequantizeLinear,
 *                     MXQuantizeDequantize, BFPQuantizeDequantize
 *   com.vai.quantize  VitisQuantizeLinear, VitisDequantizeLinear, MXFixNeuron, BFPFixNeuron
 *                     (the older names of the same four ops)
 *   com.qsimd.quark   all eight names: a domain of qsimd's own, for models that also need
 *                     Quark's library for its other ops (qsimd.ort.use_own_domain moves
 *                     qsimd's nodes there, so the two libraries never claim the same node)
 * Everything onnxruntime-specific is in csrc/ort/ort_abi.h; the numerics are qsimd's public
 * API (qsimd.h) and nothing else, so the kernels, ISA dispatch and results are the Python
 * package's. Every problem comes back as an OrtStatus (an exception in Python), never as an
 * abort: attribute types when a session is created, the rest when a node runs. */
#include "qsimd.h"
#include "ort_abi.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(_WIN32)
#define QO_EXPORT __declspec(dllexport)
#include <windows.h>
static SRWLOCK qo_lock = SRWLOCK_INIT;
static void qo_mutex(int on) { if (on) AcquireSRWLockExclusive(&qo_lock); else ReleaseSRWLockExclusive(&qo_lock); }
#else
#define QO_EXPORT __attribute__((visibility("default")))
#include <pthread.h>
static pthread_mutex_t qo_lock = PTHREAD_MUTEX_INITIALIZER;
static void qo_mutex(int on) { if (on) pthread_mutex_lock(&qo_lock); else pthread_mutex_unlock(&qo_lock); }
#endif

/* The MX / BFP ops need qsimd_mx_quantize_dequantize / qsimd_bfp_quantize_dequantize: the
 * builds (setup.py, CMake) define QSIMD_ORT_MXBFP when qsimd.h declares them. */
#ifdef QSIMD_ORT_MXBFP
#define QO_HAVE_MXBFP 1
#else
#define QO_HAVE_MXBFP 0
#endif

enum { QO_QUANTIZE, QO_DEQUANTIZE, QO_MX, QO_BFP };

/* Large tensors are cut into pieces of at least this many elements for the intra-op pool. */
#define QO_PIECE 65536

typedef struct qo_op {
    qo_custom_op base;   /* first: onnxruntime hands back &base */
    const char *name;
    int kind;
} qo_op;

typedef struct qo_kernel {
    const void *api;
    int kind;
    int parallel;            /* KernelContext_ParallelFor is available */
    char label[192];         /* "OpName node 'name'", for messages */
    int64_t axis;
    int has_axis;
    int64_t block_size, rounding_mode;
    char element_dtype[32];
    char bfp_method[32];
    int64_t bit_width, sub_block_size, sub_block_shift_bits, to_bfloat;
    void *cache;             /* the output, when every input is constant (qo_precompute) */
    size_t cache_bytes;
    int cache_ndim;
    int64_t cache_shape[QSIMD_MAX_DIMS];
} qo_kernel;

/* ------------------------------------------------------------------ statuses */

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static struct OrtStatus *qo_status(const void *api, int code, const char *label,
                                   const char *fmt, ...)
{
    char msg[512];
    int n = snprintf(msg, sizeof msg, "%s: ", label);
    va_list ap;
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < sizeof msg) vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
    va_end(ap);
    return QO_FN(api, CreateStatus)(code, msg);
}

static struct OrtStatus *qo_from_qsimd(const qo_kernel *k, int rc, const qsimd_error *e)
{
    int code = rc == QSIMD_ERR_VALUE || rc == QSIMD_ERR_TYPE ? QO_ORT_INVALID_ARGUMENT
                                                             : QO_ORT_FAIL;
    const char *m = e->message[0] ? e->message : "qsimd failed";
    return qo_status(k->api, code, k->label, "%s", rc == QSIMD_ERR_NOMEM ? "out of memory" : m);
}

/* ------------------------------------------------------------------ attributes */

/* Whether the node has attribute `name` of some type: onnxruntime reports a missing attribute
 * and one of another type alike, so the other types are tried. */
static int qo_has_attr(const qo_kernel *k, const struct OrtKernelInfo *info, const char *name)
{
    int64_t i;
    float f;
    size_t n = 0;
    struct OrtStatus *s;
    qo_ReleaseStatus_fn release = QO_FN(k->api, ReleaseStatus);
    if (!(s = QO_FN(k->api, KernelInfoGetAttribute_int64)(info, name, &i))) return 1;
    release(s);
    if (!(s = QO_FN(k->api, KernelInfoGetAttribute_float)(info, name, &f))) return 1;
    release(s);
    if (!(s = QO_FN(k->api, KernelInfoGetAttribute_string)(info, name, NULL, &n))) return 1;
    release(s);
    n = 0;
    if (!(s = QO_FN(k->api, KernelInfoGetAttributeArray_int64)(info, name, NULL, &n))) return 1;
    release(s);
    n = 0;
    if (!(s = QO_FN(k->api, KernelInfoGetAttributeArray_float)(info, name, NULL, &n))) return 1;
    release(s);
    return 0;
}

/* An int attribute: absent -> *present = 0 and *out untouched; another type -> an error. */
static struct OrtStatus *qo_int_attr(const qo_kernel *k, const struct OrtKernelInfo *info,
                                     const char *name, int64_t *out, int *present)
{
    struct OrtStatus *s = QO_FN(k->api, KernelInfoGetAttribute_int64)(info, name, out);
    if (present) *present = !s;
    if (!s) return NULL;
    QO_FN(k->api, ReleaseStatus)(s);
    if (qo_has_attr(k, info, name))
        return qo_status(k->api, QO_ORT_INVALID_ARGUMENT, k->label,
                         "attribute %s must be an int", name);
    return NULL;
}

/* A string attribute into buf (absent: untouched); too long for buf: "?" (no such name). */
static struct OrtStatus *qo_str_attr(const qo_kernel *k, const struct OrtKernelInfo *info,
                                     const char *name, char *buf, size_t cap)
{
    size_t n = 0;
    char *tmp;
    struct OrtStatus *s = QO_FN(k->api, KernelInfoGetAttribute_string)(info, name, NULL, &n);
    if (s) {
        QO_FN(k->api, ReleaseStatus)(s);
        if (qo_has_attr(k, info, name))
            return qo_status(k->api, QO_ORT_INVALID_ARGUMENT, k->label,
                             "attribute %s must be a string", name);
        return NULL;
    }
    tmp = (char *)malloc(n + 1);
    if (!tmp) return qo_status(k->api, QO_ORT_FAIL, k->label, "out of memory");
    s = QO_FN(k->api, KernelInfoGetAttribute_string)(info, name, tmp, &n);
    if (s) {
        free(tmp);
        return s;
    }
    tmp[n] = 0;   /* n counts the terminator; this only guards a missing one */
    if (strlen(tmp) >= cap) snprintf(buf, cap, "%s", "?");
    else memcpy(buf, tmp, strlen(tmp) + 1);
    free(tmp);
    return NULL;
}

/* ------------------------------------------------------------------ op description */

static const char *QO_CALL qo_name(const qo_custom_op *op) { return ((const qo_op *)op)->name; }
static const char *QO_CALL qo_provider(const qo_custom_op *op) { (void)op; return NULL; }

/* Quark's declared types: Q (float x, float scale, any zero point) -> any; DQ (any x, float
 * scale, any zero point) -> float; MX / BFP any -> any (the kernels take float / float16). */
static size_t QO_CALL qo_input_count(const qo_custom_op *op)
{
    int kind = ((const qo_op *)op)->kind;
    return kind == QO_QUANTIZE || kind == QO_DEQUANTIZE ? 3 : 1;
}
static int QO_CALL qo_input_type(const qo_custom_op *op, size_t i)
{
    int kind = ((const qo_op *)op)->kind;
    if (kind == QO_QUANTIZE) return i < 2 ? QO_T_FLOAT : QO_T_UNDEFINED;
    if (kind == QO_DEQUANTIZE) return i == 1 ? QO_T_FLOAT : QO_T_UNDEFINED;
    return QO_T_UNDEFINED;
}
static size_t QO_CALL qo_output_count(const qo_custom_op *op) { (void)op; return 1; }
static int QO_CALL qo_output_type(const qo_custom_op *op, size_t i)
{
    (void)i;
    return ((const qo_op *)op)->kind == QO_DEQUANTIZE ? QO_T_FLOAT : QO_T_UNDEFINED;
}
static int QO_CALL qo_required(const qo_custom_op *op, size_t i) { (void)op; (void)i; return QO_REQUIRED; }
static int QO_CALL qo_mem_default(const qo_custom_op *op, size_t i) { (void)op; (void)i; return 0; }
static int QO_CALL qo_one(const qo_custom_op *op) { (void)op; return 1; }

/* ------------------------------------------------------------------ kernel creation */

static int qo_parallel_available;   /* written under qo_lock at registration */

static void qo_precompute(qo_kernel *k, const struct OrtKernelInfo *info);

static struct OrtStatus *QO_CALL qo_create(const qo_custom_op *op_, const void *api,
                                           const struct OrtKernelInfo *info, void **out)
{
    const qo_op *op = (const qo_op *)op_;
    struct OrtStatus *s = NULL;
    char node[128] = "";
    size_t n = sizeof node;
    qo_kernel *k = (qo_kernel *)calloc(1, sizeof *k);
    *out = NULL;
    if (!k) return QO_FN(api, CreateStatus)(QO_ORT_FAIL, "qsimd: out of memory");
    k->api = api;
    k->kind = op->kind;
    qo_mutex(1);
    k->parallel = qo_parallel_available;
    qo_mutex(0);
    s = QO_FN(api, KernelInfo_GetNodeName)(info, node, &n);
    if (s) {   /* a name longer than the buffer: the op name alone is enough */
        QO_FN(api, ReleaseStatus)(s);
        node[0] = 0;
    }
    node[sizeof node - 1] = 0;
    if (node[0]) snprintf(k->label, sizeof k->label, "%s node '%s'", op->name, node);
    else snprintf(k->label, sizeof k->label, "%s node", op->name);

    /* Quark's defaults (its kernels', where they differ from the declared schema's) */
    switch (op->kind) {
    case QO_QUANTIZE:
    case QO_DEQUANTIZE:
        k->axis = 0;   /* Quark's kernel: no axis attribute means axis 0 (weights) */
        s = qo_int_attr(k, info, "axis", &k->axis, &k->has_axis);
        break;
    case QO_MX:
        strcpy(k->element_dtype, "int8");
        k->axis = 1;
        k->block_size = 32;
        k->rounding_mode = 0;
        if (!(s = qo_str_attr(k, info, "element_dtype", k->element_dtype,
                              sizeof k->element_dtype)) &&
            !(s = qo_int_attr(k, info, "axis", &k->axis, NULL)) &&
            !(s = qo_int_attr(k, info, "block_size", &k->block_size, NULL)))
            s = qo_int_attr(k, info, "rounding_mode", &k->rounding_mode, NULL);
        if (!s) {   /* Quark's only scale type; anything else would be computed wrongly */
            char scale[32] = "e8m0";
            s = qo_str_attr(k, info, "scale_dtype", scale, sizeof scale);
            if (!s && strcmp(scale, "e8m0") != 0)
                s = qo_status(api, QO_ORT_INVALID_ARGUMENT, k->label,
                              "scale_dtype must be 'e8m0', got '%s'", scale);
        }
        break;
    default: {
        int64_t compiler = 0;
        strcpy(k->bfp_method, "to_bfp");
        k->axis = 1;
        k->bit_width = 16;
        k->block_size = 8;
        k->rounding_mode = 0;
        k->sub_block_size = 2;
        k->sub_block_shift_bits = 1;
        k->to_bfloat = 0;
        if (!(s = qo_str_attr(k, info, "bfp_method", k->bfp_method, sizeof k->bfp_method)) &&
            !(s = qo_int_attr(k, info, "axis", &k->axis, NULL)) &&
            !(s = qo_int_attr(k, info, "bit_width", &k->bit_width, NULL)) &&
            !(s = qo_int_attr(k, info, "block_size", &k->block_size, NULL)) &&
            !(s = qo_int_attr(k, info, "rounding_mode", &k->rounding_mode, NULL)) &&
            !(s = qo_int_attr(k, info, "sub_block_size", &k->sub_block_size, NULL)) &&
            !(s = qo_int_attr(k, info, "sub_block_shift_bits", &k->sub_block_shift_bits,
                              NULL)) &&
            !(s = qo_int_attr(k, info, "convert_to_bfloat_before_bfp", &k->to_bfloat, NULL)))
            s = qo_int_attr(k, info, "use_compiler_version_cpu_kernel", &compiler, NULL);
        /* Quark's second to_bfp kernel (a compiler's rounding) is not qsimd's: refused
         * rather than computed differently */
        if (!s && compiler != 0)
            s = qo_status(api, QO_ORT_NOT_IMPLEMENTED, k->label,
                          "use_compiler_version_cpu_kernel=%lld is not supported (only 0)",
                          (long long)compiler);
        break;
    }
    }
    if (s) {
        free(k);
        return s;
    }
    qo_precompute(k, info);
    *out = k;
    return NULL;
}

static void QO_CALL qo_destroy(void *kernel)
{
    qo_kernel *k = (qo_kernel *)kernel;
    if (k) free(k->cache);
    free(k);
}

/* ------------------------------------------------------------------ tensors */

typedef struct qo_in {
    void *data;
    int type;
    int ndim;
    int64_t shape[QSIMD_MAX_DIMS];
    int64_t n;   /* elements */
} qo_in;

static struct OrtStatus *qo_read(const qo_kernel *k, const struct OrtValue *v, const char *name,
                                 qo_in *t)
{
    struct OrtTensorTypeAndShapeInfo *info = NULL;
    size_t nd = 0;
    struct OrtStatus *s;
    static char empty[16];
    if (!v)
        return qo_status(k->api, QO_ORT_INVALID_ARGUMENT, k->label,
                         "input %s is missing", name);
    if ((s = QO_FN(k->api, GetTensorTypeAndShape)(v, &info))) return s;
    if (!(s = QO_FN(k->api, GetTensorElementType)(info, &t->type)) &&
        !(s = QO_FN(k->api, GetDimensionsCount)(info, &nd))) {
        if (nd > QSIMD_MAX_DIMS)
            s = qo_status(k->api, QO_ORT_INVALID_ARGUMENT, k->label,
                          "%s has rank %lld, at most 32 is supported", name, (long long)nd);
        else
            s = QO_FN(k->api, GetDimensions)(info, t->shape, nd);
    }
    QO_FN(k->api, ReleaseTensorTypeAndShapeInfo)(info);
    if (s) return s;
    t->ndim = (int)nd;
    t->n = 1;
    for (size_t i = 0; i < nd; i++) {
        if (t->shape[i] < 0)
            return qo_status(k->api, QO_ORT_INVALID_ARGUMENT, k->label,
                             "%s has a negative dimension %lld", name, (long long)t->shape[i]);
        t->n *= t->shape[i];
    }
    if ((s = QO_FN(k->api, GetTensorMutableData)((struct OrtValue *)v, &t->data))) return s;
    if (!t->data) t->data = empty;   /* empty tensors may have none; nothing is read */
    return NULL;
}

static struct OrtStatus *qo_output(const qo_kernel *k, struct OrtKernelContext *ctx,
                                   const qo_in *x, void **data)
{
    static char empty[16];
    struct OrtValue *v = NULL;
    struct OrtStatus *s = QO_FN(k->api, KernelContext_GetOutput)(ctx, 0, x->shape,
                                                                (size_t)x->ndim, &v);
    if (s) return s;
    if ((s = QO_FN(k->api, GetTensorMutableData)(v, data))) return s;
    if (!*data) *data = empty;
    return NULL;
}

static qsimd_tensor qo_tensor(void *data, int type, int ndim, const int64_t *shape)
{
    qsimd_tensor t;
    t.data = data;
    t.dtype = type;
    t.ndim = ndim;
    t.shape = shape;
    t.packed = 0;
    return t;
}

static size_t qo_size(int type)
{
    switch (type) {
    case QSIMD_INT8: case QSIMD_UINT8: return 1;
    case QSIMD_INT16: case QSIMD_UINT16: case QSIMD_FLOAT16: case QSIMD_BFLOAT16: return 2;
    case QSIMD_INT32: case QSIMD_UINT32: case QSIMD_FLOAT: return 4;
    default: return 0;
    }
}

static const char *qo_type_name(int type)
{
    switch (type) {
    case QSIMD_FLOAT: return "float"; case QSIMD_UINT8: return "uint8";
    case QSIMD_INT8: return "int8"; case QSIMD_UINT16: return "uint16";
    case QSIMD_INT16: return "int16"; case QSIMD_INT32: return "int32";
    case QSIMD_FLOAT16: return "float16"; case QSIMD_UINT32: return "uint32";
    case QSIMD_BFLOAT16: return "bfloat16";
    default: return "a type outside Quark's";
    }
}

/* Quark's quantized types (ExtendedQuantizeLinear's T3) */
static int qo_quark_type(int type)
{
    return qo_size(type) != 0 && type != QSIMD_FLOAT;
}

/* ------------------------------------------------------------------ one computation, in pieces

 * A job is the op over x collapsed to (outer, len, inner) with `len` the axis (per-tensor:
 * (1, n, 1)). Piece i covers rows [o0, o0 + olen) and, along the axis, [d0, d0 + dlen) with
 * dlen a multiple of `granule` (1 per channel, the block size for MX / BFP), so every piece is
 * a contiguous part of x and y and a complete problem of its own. Piece -1 is the whole
 * tensor in its own shape (the call when nothing is split). */
typedef struct qo_job {
    const qo_kernel *k;
    qo_in x;
    qo_in scale, zp;         /* Q / DQ */
    char *y;
    int ytype;
    int per_axis;
    int64_t axis;            /* normalised (MX / BFP, per-axis Q / DQ) */
    int64_t outer, len, inner;
    int64_t ostep, dstep, dpieces, npieces;
    float *tmp;              /* MX / BFP on float16: float32 work space, 2 * n */
    signed char *codes;      /* per piece, from the pool */
} qo_job;

#if QO_HAVE_MXBFP
static int qo_mxbfp(const qo_job *j, const qsimd_tensor *x, const qsimd_tensor *y, int64_t axis,
                    qsimd_error *err)
{
    const qo_kernel *k = j->k;
    if (k->kind == QO_MX) {
        qsimd_mx_options o;
        qsimd_mx_options_init(&o);
        o.element_dtype = k->element_dtype;
        o.axis = axis;
        o.block_size = k->block_size;
        o.rounding_mode = k->rounding_mode;
        o.num_threads = 1;
        return qsimd_mx_quantize_dequantize(x, y, &o, err);
    } else {
        qsimd_bfp_options o;
        qsimd_bfp_options_init(&o);
        o.bfp_method = k->bfp_method;
        o.axis = axis;
        o.bit_width = k->bit_width;
        o.block_size = k->block_size;
        o.rounding_mode = k->rounding_mode;
        o.sub_block_size = k->sub_block_size;
        o.sub_block_shift_bits = k->sub_block_shift_bits;
        o.convert_to_bfloat_before_bfp = k->to_bfloat != 0;
        o.num_threads = 1;
        return qsimd_bfp_quantize_dequantize(x, y, &o, err);
    }
}
#endif

static int qo_run_piece(const qo_job *j, int64_t piece, qsimd_error *err)
{
    const qo_kernel *k = j->k;
    int64_t shape3[3], sshape[1];
    const int64_t *shape = j->x.shape;
    int ndim = j->x.ndim;
    int64_t off = 0, d0 = 0, axis = j->axis;
    if (piece >= 0) {
        int64_t o0 = piece / j->dpieces * j->ostep;
        d0 = piece % j->dpieces * j->dstep;
        shape3[0] = j->outer - o0 < j->ostep ? j->outer - o0 : j->ostep;
        shape3[1] = j->len - d0 < j->dstep ? j->len - d0 : j->dstep;
        shape3[2] = j->inner;
        off = (o0 * j->len + d0) * j->inner;
        shape = shape3;
        ndim = 3;
        axis = 1;
    }
    if (k->kind == QO_QUANTIZE || k->kind == QO_DEQUANTIZE) {
        size_t xs = qo_size(j->x.type), ys = qo_size(j->ytype);
        qsimd_tensor x = qo_tensor((char *)j->x.data + off * (int64_t)xs, j->x.type, ndim, shape);
        qsimd_tensor y = qo_tensor(j->y + off * (int64_t)ys, j->ytype, ndim, shape);
        qsimd_tensor s = qo_tensor(j->scale.data, j->scale.type, j->scale.ndim, j->scale.shape);
        qsimd_tensor z = qo_tensor(j->zp.data, j->zp.type, j->zp.ndim, j->zp.shape);
        if (piece >= 0 && j->per_axis) {   /* this piece's channels */
            sshape[0] = shape3[1];
            s = qo_tensor((char *)j->scale.data + d0 * 4, j->scale.type, 1, sshape);
            z = qo_tensor((char *)j->zp.data + d0 * (int64_t)qo_size(j->zp.type), j->zp.type, 1,
                          sshape);
        }
        if (k->kind == QO_QUANTIZE) {
            qsimd_quantize_options o;
            qsimd_quantize_options_init(&o);
            o.axis = axis;
            o.num_threads = 1;
            return qsimd_quantize_linear(&x, &s, &z, &o, &y, err);
        } else {
            qsimd_dequantize_options o;
            qsimd_dequantize_options_init(&o);
            o.axis = axis;
            o.num_threads = 1;
            return qsimd_dequantize_linear(&x, &s, &z, &o, &y, err);
        }
    }
#if QO_HAVE_MXBFP
    if (j->x.type == QSIMD_FLOAT) {
        qsimd_tensor x = qo_tensor((float *)j->x.data + off, QSIMD_FLOAT, ndim, shape);
        qsimd_tensor y = qo_tensor((float *)j->y + off, QSIMD_FLOAT, ndim, shape);
        return qo_mxbfp(j, &x, &y, axis, err);
    } else {
        /* float16: to float32 exactly, the op, back rounded to nearest even; the conversions
         * are qsimd's own Quark float16 paths with scale 1 and, on the way back, a zero point
         * of -0 (the sum's identity, so -0 stays -0) */
        int64_t n = 1, one = 1;
        int rc;
        float unit = 1.0f;
        uint16_t negzero = 0x8000;
        for (int i = 0; i < ndim; i++) n *= shape[i];
        {
            static float none[2];   /* empty or 0-d x: the op refuses or reads nothing */
            float *a = j->tmp ? j->tmp + off : none, *b = j->tmp ? j->tmp + j->x.n + off : none;
            qsimd_tensor h = qo_tensor((uint16_t *)j->x.data + off, QSIMD_FLOAT16, ndim, shape);
            qsimd_tensor f = qo_tensor(a, QSIMD_FLOAT, ndim, shape);
            qsimd_tensor g = qo_tensor(b, QSIMD_FLOAT, ndim, shape);
            qsimd_tensor out = qo_tensor((uint16_t *)j->y + off, QSIMD_FLOAT16, ndim, shape);
            qsimd_tensor sc = qo_tensor(&unit, QSIMD_FLOAT, 0, &one);
            qsimd_tensor zp = qo_tensor(&negzero, QSIMD_FLOAT16, 0, &one);
            qsimd_quantize_options qo;
            qsimd_dequantize_options dq;
            qsimd_quantize_options_init(&qo);
            qsimd_dequantize_options_init(&dq);
            qo.num_threads = dq.num_threads = 1;
            /* the op first on a rank check of its own: the conversions would accept 0-d */
            if (n == 0 || ndim == 0) return qo_mxbfp(j, &f, &g, axis, err);
            if ((rc = qsimd_dequantize_linear(&h, &sc, NULL, &dq, &f, err))) return rc;
            if ((rc = qo_mxbfp(j, &f, &g, axis, err))) return rc;
            return qsimd_quantize_linear(&g, &sc, &zp, &qo, &out, err);
        }
    }
#else
    (void)err;
    return QSIMD_ERR_TYPE;
#endif
}

static void qo_piece_fn(void *job, size_t i)
{
    qo_job *j = (qo_job *)job;
    qsimd_error e;
    j->codes[i] = (signed char)qo_run_piece(j, (int64_t)i, &e);
}

/* Cuts the job into pieces when it pays and the pool is there: sets npieces (0: one call). */
static void qo_plan(qo_job *j, int64_t granule)
{
    int64_t row = j->len * j->inner;
    j->npieces = 0;
    if (!j->k->parallel || j->x.n < 2 * QO_PIECE || granule < 1 || row == 0) return;
    if (row >= QO_PIECE) {   /* pieces within a row: whole granules along the axis */
        int64_t d = (QO_PIECE + j->inner - 1) / j->inner;
        d = (d + granule - 1) / granule;
        j->dstep = d > j->len / granule ? j->len : d * granule;
        j->ostep = 1;
    } else {                 /* whole rows together */
        j->dstep = j->len;
        j->ostep = (QO_PIECE + row - 1) / row;
    }
    j->dpieces = (j->len + j->dstep - 1) / j->dstep;
    j->npieces = (j->outer + j->ostep - 1) / j->ostep * j->dpieces;
    if (j->npieces < 2) j->npieces = 0;
}

static struct OrtStatus *qo_execute(qo_job *j, const struct OrtKernelContext *ctx)
{
    const qo_kernel *k = j->k;
    qsimd_error e;
    int rc;
    e.message[0] = 0;
    if (j->npieces == 0) {
        rc = qo_run_piece(j, -1, &e);
        return rc ? qo_from_qsimd(k, rc, &e) : NULL;
    }
    j->codes = (signed char *)calloc((size_t)j->npieces, 1);
    if (!j->codes) return qo_status(k->api, QO_ORT_FAIL, k->label, "out of memory");
    {
        struct OrtStatus *s = QO_FN(k->api, KernelContext_ParallelFor)(
            ctx, qo_piece_fn, (size_t)j->npieces, 0, j);
        if (s) {
            free(j->codes);
            return s;
        }
    }
    for (int64_t i = 0; i < j->npieces; i++)
        if (j->codes[i]) {   /* the same call again for its message (it fails before writing) */
            rc = qo_run_piece(j, i, &e);
            free(j->codes);
            return qo_from_qsimd(k, rc ? rc : QSIMD_ERR_VALUE, &e);
        }
    free(j->codes);
    return NULL;
}

/* ------------------------------------------------------------------ compute */

static int64_t qo_prod(const int64_t *shape, int from, int to)
{
    int64_t p = 1;
    for (int i = from; i < to; i++) p *= shape[i];
    return p;
}

/* x, scale and zero point of a Q / DQ node (v: its three inputs) checked into j, with the
 * split planned; j->y is the caller's. */
static struct OrtStatus *qo_setup_qdq(const qo_kernel *k, const struct OrtValue *const *v,
                                      qo_job *j)
{
    struct OrtStatus *s;
    static const char *names[3] = {"x", "scale", "zero_point"};
    if ((s = qo_read(k, v[0], names[0], &j->x)) || (s = qo_read(k, v[1], names[1], &j->scale)) ||
        (s = qo_read(k, v[2], names[2], &j->zp)))
        return s;
    if (j->scale.type != QSIMD_FLOAT)
        return qo_status(k->api, QO_ORT_INVALID_ARGUMENT, k->label,
                         "scale must be float, got %s", qo_type_name(j->scale.type));
    if (!qo_quark_type(j->zp.type))
        return qo_status(k->api, QO_ORT_INVALID_ARGUMENT, k->label,
                         "zero_point must be int8, uint8, int16, uint16, int32, uint32, "
                         "float16 or bfloat16, got %s", qo_type_name(j->zp.type));
    if (k->kind == QO_QUANTIZE) {
        if (j->x.type != QSIMD_FLOAT)
            return qo_status(k->api, QO_ORT_INVALID_ARGUMENT, k->label,
                             "x must be float, got %s", qo_type_name(j->x.type));
        j->ytype = j->zp.type;
    } else {
        if (j->x.type != j->zp.type)
            return qo_status(k->api, QO_ORT_INVALID_ARGUMENT, k->label,
                             "x and zero_point must have the same type, got %s and %s",
                             qo_type_name(j->x.type), qo_type_name(j->zp.type));
        j->ytype = QSIMD_FLOAT;
    }

    /* per-tensor when the scale has one element (Quark: the axis is then not looked at) */
    j->per_axis = j->scale.n != 1;
    j->axis = k->axis;
    if (!j->per_axis) {
        j->axis = 0;
        j->outer = 1;
        j->len = j->x.n;
        j->inner = 1;
        qo_plan(j, 1);
    } else {
        int64_t a = k->axis < 0 ? k->axis + j->x.ndim : k->axis;
        /* pieces only for the shapes qsimd accepts: the rest gets its message from one call */
        if (a >= 0 && a < j->x.ndim && j->scale.ndim == 1 && j->scale.shape[0] == j->x.shape[a] &&
            j->zp.ndim == 1 && j->zp.shape[0] == j->x.shape[a]) {
            j->outer = qo_prod(j->x.shape, 0, (int)a);
            j->len = j->x.shape[a];
            j->inner = qo_prod(j->x.shape, (int)a + 1, j->x.ndim);
            qo_plan(j, 1);
        }
    }
    return NULL;
}

/* x of an MX / BFP node checked into j, with the split planned and, for float16, j->tmp
 * allocated (the caller frees it); j->y is the caller's. */
static struct OrtStatus *qo_setup_mxbfp(const qo_kernel *k, const struct OrtValue *v, qo_job *j)
{
    struct OrtStatus *s;
    if ((s = qo_read(k, v, "x", &j->x))) return s;
    if (j->x.type != QSIMD_FLOAT && j->x.type != QSIMD_FLOAT16)
        return qo_status(k->api, QO_ORT_INVALID_ARGUMENT, k->label,
                         "x must be float or float16, got %s", qo_type_name(j->x.type));
    if (!QO_HAVE_MXBFP)
        return qo_status(k->api, QO_ORT_NOT_IMPLEMENTED, k->label,
                         "this qsimd build has no MX / BFP operators");
    j->ytype = j->x.type;
    /* Quark computes rank-1 tensors along their only axis whatever `axis` says (a bias with
     * the default axis 1 is a valid node there) */
    j->axis = j->x.ndim == 1 ? 0 : k->axis;
    if (j->x.type == QSIMD_FLOAT16 && j->x.n > 0) {
        if ((uint64_t)j->x.n > (uint64_t)(SIZE_MAX / 8))
            return qo_status(k->api, QO_ORT_FAIL, k->label, "out of memory");
        j->tmp = (float *)malloc((size_t)j->x.n * 2 * sizeof(float));
        if (!j->tmp) return qo_status(k->api, QO_ORT_FAIL, k->label, "out of memory");
    }
    if (j->x.ndim >= 1) {
        int64_t a = j->axis < 0 ? j->axis + j->x.ndim : j->axis;
        if (a >= 0 && a < j->x.ndim && k->block_size >= 1) {
            j->outer = qo_prod(j->x.shape, 0, (int)a);
            j->len = j->x.shape[a];
            j->inner = qo_prod(j->x.shape, (int)a + 1, j->x.ndim);
            qo_plan(j, k->block_size);
        }
    }
    return NULL;
}

/* A node whose inputs are all constant (weights: initializers that a run cannot override)
 * has the same output in every run. Quark's library computes it again each time; qsimd
 * computes it once, when the kernel is created, and a run copies it out, which costs a
 * fraction of the computation. Anything unusual (an input that is not constant, a node qsimd
 * refuses, no memory, an output above QO_CACHE_MAX bytes, which would double the memory of
 * large weights) leaves the kernel computing in every run, as before: errors still come from
 * the run, with the same message. */
#define QO_CACHE_MAX ((size_t)16 << 20)

static void qo_precompute(qo_kernel *k, const struct OrtKernelInfo *info)
{
    const struct OrtValue *v[3] = {NULL, NULL, NULL};
    int nin = k->kind == QO_QUANTIZE || k->kind == QO_DEQUANTIZE ? 3 : 1;
    qo_job j;
    struct OrtStatus *s = NULL;
    size_t bytes;
    for (int i = 0; i < nin; i++) {
        int is_constant = 0;
        s = QO_FN(k->api, KernelInfoGetConstantInput_tensor)(info, (size_t)i, &is_constant, &v[i]);
        if (s) {
            QO_FN(k->api, ReleaseStatus)(s);
            return;
        }
        if (!is_constant || !v[i]) return;
    }
    memset(&j, 0, sizeof j);
    j.k = k;
    s = nin == 3 ? qo_setup_qdq(k, v, &j) : qo_setup_mxbfp(k, v[0], &j);
    j.npieces = 0;   /* one call, on this thread */
    if (!s && j.x.n > 0 && qo_size(j.ytype) != 0 &&
        (uint64_t)j.x.n <= (uint64_t)(QO_CACHE_MAX / qo_size(j.ytype))) {
        bytes = (size_t)j.x.n * qo_size(j.ytype);
        j.y = (char *)malloc(bytes);
        if (j.y && !(s = qo_execute(&j, NULL))) {
            k->cache = j.y;
            k->cache_bytes = bytes;
            k->cache_ndim = j.x.ndim;
            memcpy(k->cache_shape, j.x.shape, sizeof k->cache_shape);
            j.y = NULL;
        }
    }
    if (s) QO_FN(k->api, ReleaseStatus)(s);
    free(j.y);
    free(j.tmp);
}

static struct OrtStatus *qo_compute_cached(const qo_kernel *k, struct OrtKernelContext *ctx)
{
    struct OrtValue *v = NULL;
    void *data = NULL;
    struct OrtStatus *s = QO_FN(k->api, KernelContext_GetOutput)(
        ctx, 0, k->cache_shape, (size_t)k->cache_ndim, &v);
    if (s) return s;
    if ((s = QO_FN(k->api, GetTensorMutableData)(v, &data))) return s;
    memcpy(data, k->cache, k->cache_bytes);
    return NULL;
}

static struct OrtStatus *qo_compute_qdq(qo_kernel *k, struct OrtKernelContext *ctx)
{
    qo_job j;
    const struct OrtValue *v[3];
    struct OrtStatus *s;
    size_t count = 0;
    memset(&j, 0, sizeof j);
    j.k = k;
    if ((s = QO_FN(k->api, KernelContext_GetInputCount)(ctx, &count))) return s;
    if (count != 3)
        return qo_status(k->api, QO_ORT_INVALID_ARGUMENT, k->label,
                         "needs 3 inputs (x, scale, zero_point), got %lld", (long long)count);
    for (size_t i = 0; i < 3; i++)
        if ((s = QO_FN(k->api, KernelContext_GetInput)(ctx, i, &v[i]))) return s;
    if ((s = qo_setup_qdq(k, v, &j))) return s;
    if ((s = qo_output(k, ctx, &j.x, (void **)&j.y))) return s;
    return qo_execute(&j, ctx);
}

static struct OrtStatus *qo_compute_mxbfp(qo_kernel *k, struct OrtKernelContext *ctx)
{
    qo_job j;
    const struct OrtValue *v;
    struct OrtStatus *s;
    memset(&j, 0, sizeof j);
    j.k = k;
    if ((s = QO_FN(k->api, KernelContext_GetInput)(ctx, 0, &v))) return s;
    if (!(s = qo_setup_mxbfp(k, v, &j)) && !(s = qo_output(k, ctx, &j.x, (void **)&j.y)))
        s = qo_execute(&j, ctx);
    free(j.tmp);
    return s;
}

static struct OrtStatus *QO_CALL qo_compute(void *kernel, struct OrtKernelContext *ctx)
{
    qo_kernel *k = (qo_kernel *)kernel;
    if (k->cache) return qo_compute_cached(k, ctx);
    return k->kind == QO_QUANTIZE || k->kind == QO_DEQUANTIZE ? qo_compute_qdq(k, ctx)
                                                               : qo_compute_mxbfp(k, ctx);
}

/* ------------------------------------------------------------------ registration */

#define QO_OP(NAME, KIND)                                                                   \
    {{QO_API_MIN, NULL, qo_name, qo_provider, qo_input_type, qo_input_count, qo_output_type,  \
      qo_output_count, NULL, qo_destroy, qo_required, qo_required, qo_mem_default, qo_one,    \
      qo_one, qo_one, qo_one, qo_create, qo_compute, NULL, NULL, NULL},                      \
     NAME, KIND}

static const qo_op qo_ops[] = {
    QO_OP("ExtendedQuantizeLinear", QO_QUANTIZE),
    QO_OP("ExtendedDequantizeLinear", QO_DEQUANTIZE),
    QO_OP("MXQuantizeDequantize", QO_MX),
    QO_OP("BFPQuantizeDequantize", QO_BFP),
    QO_OP("VitisQuantizeLinear", QO_QUANTIZE),
    QO_OP("VitisDequantizeLinear", QO_DEQUANTIZE),
    QO_OP("MXFixNeuron", QO_MX),
    QO_OP("BFPFixNeuron", QO_BFP),
};

/* The domains are made once and shared by every session options object (onnxruntime only
 * keeps a pointer to them, and they must outlive every session). */
static const char *const qo_domain_names[3] = {"com.amd.quark", "com.vai.quantize",
                                               "com.qsimd.quark"};
static struct OrtCustomOpDomain *qo_domains[3];

static struct OrtStatus *qo_make_domains(const void *api)
{
    struct OrtStatus *s;
    for (int d = 0; d < 3; d++) {
        if (qo_domains[d]) continue;
        if ((s = QO_FN(api, CreateCustomOpDomain)(qo_domain_names[d], &qo_domains[d]))) {
            qo_domains[d] = NULL;
            return s;
        }
        for (int i = 0; i < 8; i++) {
            if (d == 0 && i >= 4) break;            /* the Quark names */
            if (d == 1 && i < 4) continue;          /* the Vitis names */
            if (!QO_HAVE_MXBFP && (qo_ops[i].kind == QO_MX || qo_ops[i].kind == QO_BFP))
                continue;
            if ((s = QO_FN(api, CustomOpDomain_Add)(qo_domains[d], &qo_ops[i].base))) return s;
        }
    }
    return NULL;
}

/* The session config entry "qsimd.ort.domains" (comma-separated) chooses the domains to
 * register; all three when it is absent. Only "com.qsimd.quark" lets Quark's own library,
 * which claims com.amd.quark and com.vai.quantize, serve the same session. */
#define QO_DOMAINS_KEY "qsimd.ort.domains"

static struct OrtStatus *qo_chosen_domains(const void *api, struct OrtSessionOptions *options,
                                           int *chosen)
{
    char value[128], *p, *end;
    size_t n = sizeof value;
    int has = 0;
    struct OrtStatus *s = QO_FN(api, HasSessionConfigEntry)(options, QO_DOMAINS_KEY, &has);
    if (s) return s;
    *chosen = 7;
    if (!has) return NULL;
    if ((s = QO_FN(api, GetSessionConfigEntry)(options, QO_DOMAINS_KEY, value, &n))) {
        QO_FN(api, ReleaseStatus)(s);
        return QO_FN(api, CreateStatus)(QO_ORT_INVALID_ARGUMENT,
                                        "qsimd: session config entry " QO_DOMAINS_KEY
                                        " is too long (a comma-separated list of domains)");
    }
    value[sizeof value - 1] = 0;
    *chosen = 0;
    for (p = value; *p; p = *end ? end + 1 : end) {
        int d;
        size_t len;
        end = strchr(p, ',');
        if (!end) end = p + strlen(p);
        len = (size_t)(end - p);
        for (d = 0; d < 3; d++)
            if (strlen(qo_domain_names[d]) == len && !strncmp(p, qo_domain_names[d], len)) break;
        if (d == 3) {
            char msg[256];
            snprintf(msg, sizeof msg, "qsimd: session config entry " QO_DOMAINS_KEY
                     " names an unknown domain '%.*s' (com.amd.quark, com.vai.quantize or "
                     "com.qsimd.quark)", (int)(len > 64 ? 64 : len), p);
            return QO_FN(api, CreateStatus)(QO_ORT_INVALID_ARGUMENT, msg);
        }
        *chosen |= 1 << d;
    }
    return NULL;
}

QO_EXPORT struct OrtStatus *QO_CALL RegisterCustomOps(struct OrtSessionOptions *options,
                                                       const qo_api_base *base)
{
    const void *api = NULL;
    struct OrtStatus *s = NULL;
    int parallel = 0, chosen = 0;
    if (!base || !options) return NULL;
    if ((api = base->GetApi(QO_API_PARALLEL))) parallel = 1;
    else api = base->GetApi(QO_API_MIN);
    if (!api) {
        const void *old = base->GetApi(1);
        if (!old) return NULL;
        return QO_FN(old, CreateStatus)(
            QO_ORT_NOT_IMPLEMENTED, "qsimd's custom ops need onnxruntime 1.16 or later");
    }
    if ((s = qo_chosen_domains(api, options, &chosen))) return s;
    qo_mutex(1);
    qo_parallel_available = parallel;
    s = qo_make_domains(api);
    for (int d = 0; !s && d < 3; d++)
        if (chosen & (1 << d)) s = QO_FN(api, AddCustomOpDomain)(options, qo_domains[d]);
    qo_mutex(0);
    return s;
}
