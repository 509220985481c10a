/* AMD Quark's MXQuantizeDequantize / BFPQuantizeDequantize and OCP MX in ONNX terms: the
 * public entry points (qsimd.h), which validate every argument, and the active instruction
 * set's kernel (kernels/mxbfp.h) over the tensor, on the thread pool for large inputs. */
#include <string.h>

#include "common.h"
#include "mxbfp.h"

static qk_mxbfp_fn mxbfp_kernel(void)
{
    const qk_table *t = qk_active();
#if defined(QSIMD_HAVE_X86) && !defined(QSIMD_NO_AVX512)
    if (t == &qk_avx512_table) return qk_mxbfp_avx512;
#endif
#if defined(QSIMD_HAVE_X86) && !defined(QSIMD_NO_AVX2)
    if (t == &qk_avx2_table) return qk_mxbfp_avx2;
#endif
    /* SSE4.1 (no AVX2) takes the scalar build: 18 KB of code for CPUs that rarely run it */
#if defined(QSIMD_HAVE_NEON)
    if (t == &qk_neon_table) return qk_mxbfp_neon;
#endif
    (void)t;
    return qk_mxbfp_scalar;
}

static qk_mxscales_fn mxscales_kernel(void)
{
    const qk_table *t = qk_active();
#if defined(QSIMD_HAVE_X86) && !defined(QSIMD_NO_AVX512)
    if (t == &qk_avx512_table) return qk_mxscales_avx512;
#endif
#if defined(QSIMD_HAVE_X86) && !defined(QSIMD_NO_AVX2)
    if (t == &qk_avx2_table) return qk_mxscales_avx2;
#endif
#if defined(QSIMD_HAVE_NEON)
    if (t == &qk_neon_table) return qk_mxscales_neon;
#endif
    (void)t;
    return qk_mxscales_scalar;
}

typedef struct {
    qk_mxbfp_fn fn;
    qk_mxscales_fn scales;
    const float *x;
    float *y;
    uint8_t *s;
    size_t len, inner;
    const qk_mxbfp *c;
    int shift;
} mxbfp_job;

/* Elements [a, b): whole blocks of rows of one or more slabs (the cuts are block starts):
 * a slab's rows from a block start, then whole slabs in one kernel call, then the first
 * rows of a slab. */
static void mxbfp_piece(void *ctx, int index, size_t a, size_t b)
{
    const mxbfp_job *j = (const mxbfp_job *)ctx;
    size_t slab = j->len * j->inner, bs = j->c->block, nb = (j->len + bs - 1) / bs;
    (void)index;
    while (a < b) {
        size_t o = a / slab, base = o * slab, end = base + slab < b ? base + slab : b;
        if (!j->fn) {   /* scale codes: the piece starts at block (a - base) / inner / bs */
            size_t k = (a - base) / j->inner / bs;
            j->scales(j->x + a, j->s + (o * nb + k) * j->inner, (end - a) / j->inner, j->inner,
                      bs, j->shift);
        } else if (a == base && b - a >= slab) {
            size_t k = (b - a) / slab;
            j->fn(j->x + a, j->y + a, k, j->len, j->inner, j->c);
            end = a + k * slab;
        } else {
            j->fn(j->x + a, j->y + a, 1, (end - a) / j->inner, j->inner, j->c);
        }
        a = end;
    }
}

static void mxbfp_parallel(mxbfp_job *j, size_t outer, int threads)
{
    qs_plan plan;
    size_t len = j->len, inner = j->inner, bs = j->c->block;
    /* cuts only where a block starts in its slab: the blocked plan over rows of len * inner
     * elements with blocks of block * inner */
    memset(&plan, 0, sizeof plan);
    plan.kind = QS_BLOCKED;
    plan.outer = outer;
    plan.d = len * inner;
    plan.inner = 1;
    plan.n = outer * len * inner;
    plan.b = bs < len ? bs * inner : len * inner;
    plan.s = (len + bs - 1) / bs;
    plan.entries = outer * plan.s * inner;
    qs_parallel(&plan, threads, 1, mxbfp_piece, j);
}

void qs_mxscales_run(const float *x, uint8_t *s, size_t outer, size_t len, size_t inner,
                     size_t block, int shift, int threads)
{
    mxbfp_job j;
    qk_mxbfp c;
    if (outer == 0 || len == 0 || inner == 0) return;
    memset(&j, 0, sizeof j);
    memset(&c, 0, sizeof c);
    c.block = block;
    j.scales = mxscales_kernel();
    j.x = x;
    j.s = s;
    j.len = len;
    j.inner = inner;
    j.c = &c;
    j.shift = shift;
    mxbfp_parallel(&j, outer, threads);
}

void qs_mxbfp_run(const float *x, float *y, size_t outer, size_t len, size_t inner,
                  const qk_mxbfp *c, int threads)
{
    mxbfp_job j;
    if (outer == 0 || len == 0 || inner == 0) return;
    memset(&j, 0, sizeof j);
    j.fn = mxbfp_kernel();
    j.x = x;
    j.y = y;
    j.len = len;
    j.inner = inner;
    j.c = c;
    mxbfp_parallel(&j, outer, threads);
}

/* ------------------------------------------------------------------ the public API */

/* MX element types: Quark's name, the kernel's constants, the ONNX type of quantize_mx's
 * elements and the e8m0 code offset (emax; int8's elements are 1.6 fixed point: 6). */
typedef struct mx_type {
    const char *name;
    int emax, emin, mbits;
    float max_norm;
    int32_t onnx;
    int shift;
} mx_type;

static const mx_type MX_TYPES[] = {
    {"fp8_e5m2", 15, -14, 2, 57344.0f, QSIMD_FLOAT8E5M2, 15},
    {"fp8_e4m3", 8, -6, 3, 448.0f, QSIMD_FLOAT8E4M3FN, 8},
    {"fp6_e3m2", 4, -2, 2, 28.0f, QSIMD_FLOAT6E3M2, 4},
    {"fp6_e2m3", 2, 0, 3, 7.5f, QSIMD_FLOAT6E2M3, 2},
    {"fp4_e2m1", 2, 0, 1, 6.0f, QSIMD_FLOAT4E2M1, 2},
    {"int8", 0, 0, 0, 127.0f, QSIMD_INT8, 6},
};
#define N_MX_TYPES (sizeof MX_TYPES / sizeof MX_TYPES[0])

#define MX_MAX_BLOCK ((int64_t)1 << 62)

void qsimd_mx_options_init(qsimd_mx_options *opt)
{
    if (!opt) return;
    opt->element_dtype = "int8";
    opt->axis = 1;
    opt->block_size = 32;
    opt->rounding_mode = 0;
    opt->num_threads = 0;
}

void qsimd_bfp_options_init(qsimd_bfp_options *opt)
{
    if (!opt) return;
    opt->bfp_method = "to_bfp";
    opt->axis = 1;
    opt->bit_width = 16;
    opt->block_size = 8;
    opt->rounding_mode = 0;
    opt->sub_block_size = 2;
    opt->sub_block_shift_bits = 1;
    opt->convert_to_bfloat_before_bfp = 0;
    opt->num_threads = 0;
}

static int range_check(const char *name, int64_t v, int64_t lo, int64_t hi, qsimd_error *err)
{
    if (v >= lo && v <= hi) return QSIMD_OK;
    return qs_fail(err, QSIMD_ERR_VALUE, "%s must be in [%lld, %lld], got %lld", name,
                   (long long)lo, (long long)hi, (long long)v);
}

/* x and y (NULL: not checked) of an MX / BFP call: FLOAT, rank >= 1, y of x's shape, the
 * axis in range; x viewed as (outer, len, inner) around it. */
static int mx_tensors(const qsimd_tensor *x, const qsimd_tensor *y, int64_t axis,
                      size_t *outer, size_t *len, size_t *inner, size_t *n, qsimd_error *err)
{
    int rc;
    if (x->dtype != QSIMD_FLOAT)
        return qs_fail(err, QSIMD_ERR_TYPE, "x must be float32, got %s", qs_dtype_name(x->dtype));
    if (y && y->dtype != QSIMD_FLOAT)
        return qs_fail(err, QSIMD_ERR_TYPE, "y must be float32, got %s", qs_dtype_name(y->dtype));
    if ((rc = qs_count(x, "x", n, err)) != QSIMD_OK) return rc;
    if (x->ndim == 0)
        return qs_fail(err, QSIMD_ERR_VALUE, "x must have at least one dimension (blocks run "
                       "along an axis)");
    if (y) {
        size_t ny;
        if ((rc = qs_count(y, "y", &ny, err)) != QSIMD_OK) return rc;
        int same = ny == *n && y->ndim == x->ndim;
        for (int i = 0; same && i < x->ndim; i++) same = y->shape[i] == x->shape[i];
        if (!same) return qs_fail(err, QSIMD_ERR_VALUE, "y must have the shape of x");
    }
    if ((rc = range_check("axis", axis, -(int64_t)x->ndim, x->ndim - 1, err)) != QSIMD_OK)
        return rc;
    int a = (int)(axis < 0 ? axis + x->ndim : axis);
    *outer = *inner = 1;
    *len = (size_t)x->shape[a];
    if (*n) {   /* each product divides n: no overflow */
        for (int i = 0; i < a; i++) *outer *= (size_t)x->shape[i];
        for (int i = a + 1; i < x->ndim; i++) *inner *= (size_t)x->shape[i];
    }
    return QSIMD_OK;
}

static int threads_check(int32_t t, qsimd_error *err)
{
    if (t >= 0 && t <= 64) return QSIMD_OK;
    return qs_fail(err, QSIMD_ERR_VALUE, "num_threads must be between 1 and 64 (0: the "
                   "default), got %d", (int)t);
}

/* The start of a caller's string for a message: printable ASCII, other bytes as \xNN (the
 * message stays valid UTF-8 whatever the caller passed). */
static const char *printable(const char *s, char *buf, size_t size)
{
    static const char hex[] = "0123456789abcdef";
    size_t k = 0;
    for (; *s && k + 5 < size; s++) {
        unsigned char c = (unsigned char)*s;
        if (c >= 0x20 && c < 0x7f) {
            buf[k++] = (char)c;
        } else {
            buf[k++] = '\\';
            buf[k++] = 'x';
            buf[k++] = hex[c >> 4];
            buf[k++] = hex[c & 15];
        }
    }
    if (*s && k + 3 < size) { buf[k++] = '.'; buf[k++] = '.'; buf[k++] = '.'; }
    buf[k] = '\0';
    return buf;
}

static const mx_type *mx_type_named(const char *name, qsimd_error *err)
{
    char buf[64];
    if (!name) name = "int8";
    for (size_t i = 0; i < N_MX_TYPES; i++)
        if (strcmp(name, MX_TYPES[i].name) == 0) return &MX_TYPES[i];
    qs_fail(err, QSIMD_ERR_VALUE, "element_dtype must be one of fp8_e5m2, fp8_e4m3, fp6_e3m2, "
            "fp6_e2m3, fp4_e2m1, int8, got '%s'", printable(name, buf, sizeof buf));
    return NULL;
}

int qsimd_mx_quantize_dequantize(const qsimd_tensor *x, const qsimd_tensor *y,
                                 const qsimd_mx_options *opt, qsimd_error *err)
{
    qsimd_mx_options defaults;
    size_t outer, len, inner, n;
    int rc;
    if (!opt) { qsimd_mx_options_init(&defaults); opt = &defaults; }
    if (!x || !y) return qs_fail(err, QSIMD_ERR_VALUE, "x and y are required");
    const mx_type *t = mx_type_named(opt->element_dtype, err);
    if (!t) return QSIMD_ERR_VALUE;
    if ((rc = mx_tensors(x, y, opt->axis, &outer, &len, &inner, &n, err)) != QSIMD_OK ||
        (rc = range_check("block_size", opt->block_size, 1, MX_MAX_BLOCK, err)) != QSIMD_OK ||
        (rc = range_check("rounding_mode", opt->rounding_mode, 0, 2, err)) != QSIMD_OK ||
        (rc = threads_check(opt->num_threads, err)) != QSIMD_OK)
        return rc;
    if (n == 0) return QSIMD_OK;
    if (!x->data || !y->data)
        return qs_fail(err, QSIMD_ERR_VALUE, "a tensor's data pointer is NULL");
    qk_mxbfp c;
    memset(&c, 0, sizeof c);
    c.method = t->emax == 0 ? QK_MX_INT8 : QK_MX_FLOAT;
    c.emax = t->emax;
    c.emin = t->emin;
    c.mbits = t->mbits;
    c.max_norm = t->max_norm;
    c.rounding = (int)opt->rounding_mode;
    c.block = (size_t)opt->block_size;
    c.sub_block = 1;
    qs_mxbfp_run((const float *)x->data, (float *)y->data, outer, len, inner, &c,
                 opt->num_threads);
    return QSIMD_OK;
}

int qsimd_bfp_quantize_dequantize(const qsimd_tensor *x, const qsimd_tensor *y,
                                  const qsimd_bfp_options *opt, qsimd_error *err)
{
    qsimd_bfp_options defaults;
    size_t outer, len, inner, n;
    int rc, prime;
    if (!opt) { qsimd_bfp_options_init(&defaults); opt = &defaults; }
    if (!x || !y) return qs_fail(err, QSIMD_ERR_VALUE, "x and y are required");
    const char *m = opt->bfp_method ? opt->bfp_method : "to_bfp";
    char buf[64];
    if (strcmp(m, "to_bfp") == 0) prime = 0;
    else if (strcmp(m, "to_bfp_prime") == 0 || strcmp(m, "to_bfp_prime_shared") == 0) prime = 1;
    else
        return qs_fail(err, QSIMD_ERR_VALUE, "bfp_method must be 'to_bfp' or 'to_bfp_prime', "
                       "got '%s'", printable(m, buf, sizeof buf));
    if ((rc = range_check("bit_width", opt->bit_width, 10, 32, err)) != QSIMD_OK) return rc;
    if (prime) {   /* to_bfp ignores the sub-block attributes, as Quark does */
        if ((rc = range_check("sub_block_size", opt->sub_block_size, 1, MX_MAX_BLOCK, err)) ||
            (rc = range_check("sub_block_shift_bits", opt->sub_block_shift_bits, 0, 30, err)) ||
            (rc = range_check("block_size", opt->block_size, 1, MX_MAX_BLOCK, err)))
            return rc;
        if (opt->block_size % opt->sub_block_size)
            return qs_fail(err, QSIMD_ERR_VALUE, "sub_block_size (%lld) must divide block_size "
                           "(%lld) for to_bfp_prime", (long long)opt->sub_block_size,
                           (long long)opt->block_size);
    }
    if ((rc = mx_tensors(x, y, opt->axis, &outer, &len, &inner, &n, err)) != QSIMD_OK ||
        (rc = range_check("block_size", opt->block_size, 1, MX_MAX_BLOCK, err)) != QSIMD_OK ||
        (rc = range_check("rounding_mode", opt->rounding_mode, 0, 2, err)) != QSIMD_OK ||
        (rc = threads_check(opt->num_threads, err)) != QSIMD_OK)
        return rc;
    if (n == 0) return QSIMD_OK;
    if (!x->data || !y->data)
        return qs_fail(err, QSIMD_ERR_VALUE, "a tensor's data pointer is NULL");
    qk_mxbfp c;
    memset(&c, 0, sizeof c);
    c.method = prime ? QK_BFP_PRIME : QK_BFP;
    c.mbits = (int)opt->bit_width - 9;
    c.rounding = (int)opt->rounding_mode;
    c.to_bfloat = opt->convert_to_bfloat_before_bfp != 0;
    c.block = (size_t)opt->block_size;
    c.sub_block = prime ? (size_t)opt->sub_block_size : 1;
    c.shift_max = prime ? (1u << opt->sub_block_shift_bits) - 1u : 0u;
    qs_mxbfp_run((const float *)x->data, (float *)y->data, outer, len, inner, &c,
                 opt->num_threads);
    return QSIMD_OK;
}

int qsimd_quantize_mx(const qsimd_tensor *x, const qsimd_tensor *elements,
                      const qsimd_tensor *scales, const qsimd_mx_options *opt, qsimd_error *err)
{
    qsimd_mx_options defaults;
    size_t outer, len, inner, n, ne, ns;
    int rc;
    if (!opt) { qsimd_mx_options_init(&defaults); opt = &defaults; }
    if (!x || !elements || !scales)
        return qs_fail(err, QSIMD_ERR_VALUE, "x, elements and scales are required");
    const mx_type *t = NULL;
    for (size_t i = 0; i < N_MX_TYPES; i++)
        if (elements->dtype == MX_TYPES[i].onnx) t = &MX_TYPES[i];
    if (!t)
        return qs_fail(err, QSIMD_ERR_TYPE, "elements must be float8_e4m3fn, float8_e5m2, "
                       "float6_e3m2fn, float6_e2m3fn, float4_e2m1fn or int8, got %s",
                       qs_dtype_name(elements->dtype));
    if (scales->dtype != QSIMD_FLOAT8E8M0)
        return qs_fail(err, QSIMD_ERR_TYPE, "scales must be float8_e8m0fnu, got %s",
                       qs_dtype_name(scales->dtype));
    if ((rc = mx_tensors(x, NULL, opt->axis, &outer, &len, &inner, &n, err)) != QSIMD_OK ||
        (rc = range_check("block_size", opt->block_size, 1, MX_MAX_BLOCK, err)) != QSIMD_OK ||
        (rc = threads_check(opt->num_threads, err)) != QSIMD_OK)
        return rc;
    if ((rc = qs_count(elements, "elements", &ne, err)) != QSIMD_OK) return rc;
    int same = ne == n && elements->ndim == x->ndim;
    for (int i = 0; same && i < x->ndim; i++) same = elements->shape[i] == x->shape[i];
    if (!same) return qs_fail(err, QSIMD_ERR_VALUE, "elements must have the shape of x");
    int a = (int)(opt->axis < 0 ? opt->axis + x->ndim : opt->axis);
    size_t block = (size_t)opt->block_size;
    size_t nb = len / block + (len % block != 0);
    if ((rc = qs_count(scales, "scales", &ns, err)) != QSIMD_OK) return rc;
    same = scales->ndim == x->ndim;
    for (int i = 0; same && i < x->ndim; i++)
        same = (uint64_t)scales->shape[i] == (i == a ? (uint64_t)nb : (uint64_t)x->shape[i]);
    if (!same)
        return qs_fail(err, QSIMD_ERR_VALUE, "scales must have x's shape with "
                       "ceil(%zu / %zu) = %zu entries along axis %d", len, block, nb, a);
    if (n == 0) return QSIMD_OK;
    if (!x->data || !elements->data || !scales->data)
        return qs_fail(err, QSIMD_ERR_VALUE, "a tensor's data pointer is NULL");
    qs_mxscales_run((const float *)x->data, (uint8_t *)scales->data, outer, len, inner, block,
                    t->shift, opt->num_threads);
    qsimd_quantize_options q;
    qsimd_quantize_options_init(&q);
    q.axis = opt->axis;
    q.block_size = opt->block_size;
    q.num_threads = opt->num_threads;
    return qsimd_quantize_linear(x, scales, NULL, &q, elements, err);
}
