/* QuantizeLinear: resolve types, validate, pick the kernel, then run it (exec.c). */
#include <string.h>

#include "common.h"

void qsimd_quantize_options_init(qsimd_quantize_options *opt)
{
    opt->axis = 1;
    opt->block_size = 0;
    opt->saturate = 1;
    opt->precision = 0;
    opt->num_threads = 0;
}

static int x_kind(int32_t t)
{
    switch (t) {
    case QSIMD_FLOAT: return QK_X_F32;
    case QSIMD_FLOAT16: return QK_X_F16;
    case QSIMD_BFLOAT16: return QK_X_BF16;
    case QSIMD_INT32: return QK_X_I32;
    default: return -1;
    }
}

/* Quotient precision: docs/CONTRACT.md rule 1 and its table of quotient types. */
static int quotient_kind(int32_t xt, int32_t st, int32_t precision)
{
    if (precision == QSIMD_FLOAT) return QK_Q_F32;
    if (precision == QSIMD_FLOAT16) return QK_Q_F16;
    if (precision == QSIMD_BFLOAT16) return QK_Q_BF16;
    if (xt == QSIMD_INT32 || st == QSIMD_INT32) return QK_Q_F64;
    if (xt == QSIMD_FLOAT16 && st == QSIMD_FLOAT16) return QK_Q_F16;
    if (xt == QSIMD_BFLOAT16 && st == QSIMD_BFLOAT16) return QK_Q_BF16;
    return QK_Q_F32;
}

/* Kernel output kind of a type; the range for the integer kinds. -1: not an output type. */
static int output_kind(int32_t t, int packed, int32_t *qmin, int32_t *qmax)
{
    switch (t) {
    case QSIMD_FLOAT8E4M3FN: return QK_Y_E4M3FN;
    case QSIMD_FLOAT8E4M3FNUZ: return QK_Y_E4M3FNUZ;
    case QSIMD_FLOAT8E5M2: return QK_Y_E5M2;
    case QSIMD_FLOAT8E5M2FNUZ: return QK_Y_E5M2FNUZ;
    case QSIMD_FLOAT4E2M1: return packed ? QK_Y_PE2M1 : QK_Y_E2M1;
    case QSIMD_FLOAT6E2M3: return packed ? QK_Y_PE2M3 : QK_Y_E2M3;
    case QSIMD_FLOAT6E3M2: return packed ? QK_Y_PE3M2 : QK_Y_E3M2;
    case QSIMD_INT32: case QSIMD_UINT32: return QK_Y_B32;   /* AMD Quark */
    case QSIMD_FLOAT16: return QK_Y_F16;                     /* AMD Quark */
    case QSIMD_BFLOAT16: return QK_Y_BF16;                   /* AMD Quark */
    default:
        if (!qs_int_range(t, qmin, qmax)) return -1;
        if (qs_bits(t) == 16) return QK_Y_B16;
        if (packed) return qs_bits(t) == 4 ? QK_Y_P4 : QK_Y_P2;
        return QK_Y_B8;
    }
}

static void qs_quantize_src(const qsimd_tensor *scale, const qsimd_tensor *zp, int qk, int yk,
                            int32_t ydt, size_t entries, qs_psrc *src)
{
    /* float8 outputs ignore the zero point (ONNX reference and onnxruntime): not read */
    src->scale = scale;
    src->zp = qs_is_float8(ydt) ? NULL : zp;
    src->entries = entries;
    src->qk = qk;
    /* float zero points are added only when given: -0 + 0 is +0 */
    src->need = (qk == QK_Q_F64 ? QS_NEED_SCALE64 : 0u) | (yk == QK_Y_B32 ? QS_NEED_ZP64 : 0u) |
                (yk == QK_Y_E2M1 || yk == QK_Y_PE2M1 || yk == QK_Y_F16 || yk == QK_Y_BF16 ||
                 yk >= QK_Y_E2M3 ? QS_NEED_ZPF : 0u) |
                /* the reciprocal form serves float32 quotients rounded to an integer, float8,
                 * float4 (without a zero point), or float16/bfloat16 precision */
                (qk != QK_Q_F64 && yk != QK_Y_B32 && yk != QK_Y_F16 && yk != QK_Y_BF16
                     ? QS_NEED_RSCALE : 0u);
}

qs_pkept *qs_quantize_kept(const qsimd_tensor *scale, const qsimd_tensor *zp, int32_t y_dtype,
                           int32_t y_packed, int32_t precision)
{
    int32_t qmin, qmax;
    int yk = output_kind(y_dtype, qs_bits(y_dtype) < 8 && y_packed, &qmin, &qmax);
    size_t n;
    if (qs_count(scale, "scale", &n, NULL) != QSIMD_OK) return NULL;
    if (yk < 0 || n == 0) return NULL;
    /* as runs of float32 x read them (the common case; other runs convert per call) */
    qs_psrc src;
    qs_quantize_src(scale, zp, quotient_kind(QSIMD_FLOAT, scale->dtype, precision), yk, y_dtype,
                    n, &src);
    return qs_params_check(&src, NULL) == QSIMD_OK ? qs_params_keep(&src) : NULL;
}

int qsimd_quantize_linear(const qsimd_tensor *x, const qsimd_tensor *scale,
                          const qsimd_tensor *zero_point, const qsimd_quantize_options *opt,
                          const qsimd_tensor *y, qsimd_error *err)
{
    return qs_quantize(x, scale, zero_point, opt, y, NULL, err);
}

int qs_quantize(const qsimd_tensor *x, const qsimd_tensor *scale,
                const qsimd_tensor *zero_point, const qsimd_quantize_options *opt,
                const qsimd_tensor *y, const qs_pkept *kept, qsimd_error *err)
{
    qsimd_quantize_options defaults;
    if (!opt) { qsimd_quantize_options_init(&defaults); opt = &defaults; }
    if (!x || !scale || !y)
        return qs_fail(err, QSIMD_ERR_VALUE, "x, scale and y are required");
    int xk = x_kind(x->dtype);
    if (xk < 0)
        return qs_fail(err, QSIMD_ERR_TYPE, "x must be float32, float16, bfloat16 or int32, "
                       "got %s", qs_dtype_name(x->dtype));
    if (x_kind(scale->dtype) < 0 && scale->dtype != QSIMD_FLOAT8E8M0)
        return qs_fail(err, QSIMD_ERR_TYPE, "scale must be float32, float16, bfloat16, int32 "
                       "or float8_e8m0fnu, got %s", qs_dtype_name(scale->dtype));
    if (opt->precision != 0 && opt->precision != QSIMD_FLOAT &&
        opt->precision != QSIMD_FLOAT16 && opt->precision != QSIMD_BFLOAT16)
        return qs_fail(err, QSIMD_ERR_TYPE, "precision must be float32, float16 or bfloat16, "
                       "got %s", qs_dtype_name(opt->precision));
    if (opt->num_threads < 0 || opt->num_threads > 64)
        return qs_fail(err, QSIMD_ERR_VALUE, "num_threads must be between 1 and 64 (0: the "
                       "default), got %d", (int)opt->num_threads);
    if (opt->saturate != 0 && opt->saturate != 1)
        return qs_fail(err, QSIMD_ERR_VALUE, "saturate must be 0 or 1, got %d",
                       (int)opt->saturate);
    int32_t qmin = 0, qmax = 0;
    unsigned bits = qs_bits(y->dtype);
    int packed = bits < 8 && y->packed;
    int yk = output_kind(y->dtype, packed, &qmin, &qmax);
    if (yk < 0)
        return qs_fail(err, QSIMD_ERR_TYPE, "output type %s is not supported (supported: "
                       QS_Q_OUTPUT_NAMES ")", qs_dtype_name(y->dtype));
    if (zero_point && zero_point->dtype != y->dtype)
        return qs_fail(err, QSIMD_ERR_VALUE, "zero_point has type %s but output_dtype is %s",
                       qs_dtype_name(zero_point->dtype), qs_dtype_name(y->dtype));
    qs_plan plan;
    int rc = qs_make_plan(x, scale, zero_point, opt->axis, opt->block_size, &plan, err);
    if (rc != QSIMD_OK) return rc;
    size_t ny;
    if ((rc = qs_count(y, "y", &ny, err)) != QSIMD_OK) return rc;
    int same = ny == plan.n && y->ndim == x->ndim;
    for (int i = 0; same && i < x->ndim; i++) same = y->shape[i] == x->shape[i];
    if (!same) return qs_fail(err, QSIMD_ERR_VALUE, "y must have the shape of x");
    if (plan.n == 0) return QSIMD_OK;
    if (!x->data || !scale->data || !y->data || (zero_point && !zero_point->data))
        return qs_fail(err, QSIMD_ERR_VALUE, "a tensor's data pointer is NULL");

    int qk = quotient_kind(x->dtype, scale->dtype, opt->precision);
    qs_psrc src;
    qs_quantize_src(scale, zero_point, qk, yk, y->dtype, plan.entries, &src);
    if ((rc = qs_params_check(&src, err)) != QSIMD_OK) return rc;

    qs_exec e;
    memset(&e, 0, sizeof e);
    e.plan = &plan;
    e.src = &src;
    e.kept = qs_params_kept(kept, &src);
    e.quant = qk_get_quant(qk_active(), xk, qk, yk);
    e.x = (const char *)x->data;
    e.y = (char *)y->data;
    e.xsize = qs_bits(x->dtype) / 8;
    /* unpacked 4- and 2-bit codes: one per byte; packed groups: one byte of 2 or 4 codes, or
     * 3 bytes of 4 six-bit codes */
    e.ysize = packed ? 0 : bits < 8 ? 1 : bits / 8;
    e.per_byte = packed ? (bits == 6 ? 4u : 8u / bits) : 0u;
    e.gbytes = bits == 6 ? 3u : 1u;
    e.qp.qmin = qmin;
    e.qp.qmax = qmax;
    e.qp.mask = bits < 8 ? (1u << bits) - 1u : 0xffu;
    e.qp.saturate = opt->saturate;
    e.qp.qmin64 = y->dtype == QSIMD_INT32 ? INT32_MIN : 0;
    e.qp.qmax64 = y->dtype == QSIMD_INT32 ? INT32_MAX : (int64_t)UINT32_MAX;
    e.qp.stream = qs_stream(plan.n * e.xsize, qs_nbytes(y->dtype, packed, plan.n));
    if (packed && plan.n % e.per_byte)   /* padding bits of the last group are zero */
        memset(e.y + plan.n / e.per_byte * e.gbytes, 0,
               qs_nbytes(y->dtype, 1, plan.n) - plan.n / e.per_byte * e.gbytes);
    return qs_execute(&e, opt->num_threads, err);
}
