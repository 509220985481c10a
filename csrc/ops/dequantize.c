/* DequantizeLinear: validate, pick the kernel, then run it (exec.c). */
#include <string.h>

#include "common.h"

void qsimd_dequantize_options_init(qsimd_dequantize_options *opt)
{
    opt->axis = 1;
    opt->block_size = 0;
    opt->num_threads = 0;
}

static int out_kind(int32_t t)
{
    switch (t) {
    case QSIMD_FLOAT: return QK_O_F32;
    case QSIMD_FLOAT16: return QK_O_F16;
    case QSIMD_BFLOAT16: return QK_O_BF16;
    case QSIMD_FLOAT8E8M0: return QK_O_E8M0;   /* what the reference gives for an e8m0 scale */
    default: return -1;
    }
}

static void qs_dequantize_src(const qsimd_tensor *scale, const qsimd_tensor *zp, int32_t xdt,
                              size_t entries, qs_psrc *src)
{
    /* a float4 zero point is ignored without a check, as the reference does; a float6 one
     * is subtracted in float32 (the reference's opset 28 rule) */
    int b32 = xdt == QSIMD_INT32 || xdt == QSIMD_UINT32;
    int zf = xdt == QSIMD_FLOAT16 || xdt == QSIMD_BFLOAT16 || xdt == QSIMD_FLOAT6E2M3 ||
             xdt == QSIMD_FLOAT6E3M2;
    src->scale = scale;
    src->zp = xdt == QSIMD_FLOAT4E2M1 ? NULL : zp;
    src->entries = entries;
    src->qk = QK_Q_F32;
    src->need = (b32 ? QS_NEED_ZP64 : 0u) | (zf ? QS_NEED_ZPF : 0u);
}

qs_pkept *qs_dequantize_kept(const qsimd_tensor *scale, const qsimd_tensor *zp)
{
    size_t n;
    if (qs_count(scale, "scale", &n, NULL) != QSIMD_OK) return NULL;
    if (n == 0) return NULL;
    /* x has the zero point's type (without one, no form depends on x's type) */
    qs_psrc src;
    qs_dequantize_src(scale, zp, zp ? zp->dtype : QSIMD_UINT8, n, &src);
    return qs_params_check(&src, NULL) == QSIMD_OK ? qs_params_keep(&src) : NULL;
}

int qsimd_dequantize_linear(const qsimd_tensor *x, const qsimd_tensor *scale,
                            const qsimd_tensor *zero_point,
                            const qsimd_dequantize_options *opt, const qsimd_tensor *y,
                            qsimd_error *err)
{
    return qs_dequantize(x, scale, zero_point, opt, y, NULL, err);
}

int qs_dequantize(const qsimd_tensor *x, const qsimd_tensor *scale,
                  const qsimd_tensor *zero_point, const qsimd_dequantize_options *opt,
                  const qsimd_tensor *y, const qs_pkept *kept, qsimd_error *err)
{
    qsimd_dequantize_options defaults;
    if (!opt) { qsimd_dequantize_options_init(&defaults); opt = &defaults; }
    if (!x || !scale || !y)
        return qs_fail(err, QSIMD_ERR_VALUE, "x, scale and y are required");
    if (opt->num_threads < 0 || opt->num_threads > 64)
        return qs_fail(err, QSIMD_ERR_VALUE, "num_threads must be between 1 and 64 (0: the "
                       "default), got %d", (int)opt->num_threads);
    int dk, is_signed = 0;
    unsigned bits = qs_bits(x->dtype);
    switch (x->dtype) {
    case QSIMD_INT8: case QSIMD_INT16: case QSIMD_INT32: case QSIMD_INT4: case QSIMD_INT2:
        is_signed = 1;
        /* fall through */
    case QSIMD_UINT8: case QSIMD_UINT16: case QSIMD_UINT32: case QSIMD_UINT4: case QSIMD_UINT2:
        if (bits == 32) dk = QK_D_B32;
        else if (bits == 16) dk = QK_D_B16;
        else if (bits < 8 && x->packed) dk = bits == 4 ? QK_D_P4 : QK_D_P2;
        else dk = QK_D_B8;
        break;
    case QSIMD_FLOAT8E4M3FN: dk = QK_D_E4M3FN; break;
    case QSIMD_FLOAT8E4M3FNUZ: dk = QK_D_E4M3FNUZ; break;
    case QSIMD_FLOAT8E5M2: dk = QK_D_E5M2; break;
    case QSIMD_FLOAT8E5M2FNUZ: dk = QK_D_E5M2FNUZ; break;
    case QSIMD_FLOAT4E2M1: dk = x->packed ? QK_D_PE2M1 : QK_D_E2M1; break;
    case QSIMD_FLOAT6E2M3: dk = x->packed ? QK_D_PE2M3 : QK_D_E2M3; break;
    case QSIMD_FLOAT6E3M2: dk = x->packed ? QK_D_PE3M2 : QK_D_E3M2; break;
    case QSIMD_FLOAT16: dk = QK_D_F16; break;     /* AMD Quark */
    case QSIMD_BFLOAT16: dk = QK_D_BF16; break;   /* AMD Quark */
    default:
        return qs_fail(err, QSIMD_ERR_TYPE, "x must have a quantized type (uint8, int8, "
                       "uint16, int16, uint4, int4, uint2, int2, int32, uint32, float8_e4m3fn, "
                       "float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz, float4_e2m1fn, "
                       "float6_e2m3fn, float6_e3m2fn, float16 or bfloat16), got %s",
                       qs_dtype_name(x->dtype));
    }
    if (scale->dtype != QSIMD_FLOAT && scale->dtype != QSIMD_FLOAT16 &&
        scale->dtype != QSIMD_BFLOAT16 && scale->dtype != QSIMD_FLOAT8E8M0)
        return qs_fail(err, QSIMD_ERR_TYPE, "scale must be float32, float16, bfloat16 or "
                       "float8_e8m0fnu, got %s", qs_dtype_name(scale->dtype));
    int ok = out_kind(y->dtype);
    if (ok < 0)
        return qs_fail(err, QSIMD_ERR_TYPE, "output type must be float32, float16, bfloat16 "
                       "or float8_e8m0fnu, got %s", qs_dtype_name(y->dtype));
    if (zero_point && zero_point->dtype != x->dtype)
        return qs_fail(err, QSIMD_ERR_VALUE, "zero_point has type %s but x has type %s",
                       qs_dtype_name(zero_point->dtype), qs_dtype_name(x->dtype));
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

    qs_psrc src;
    qs_dequantize_src(scale, zero_point, x->dtype, plan.entries, &src);
    if ((rc = qs_params_check(&src, err)) != QSIMD_OK) return rc;
    qs_exec e;
    memset(&e, 0, sizeof e);
    e.plan = &plan;
    e.src = &src;
    e.kept = qs_params_kept(kept, &src);
    e.dequant = qk_get_dequant(qk_active(), dk, ok);
    e.x = (const char *)x->data;
    e.y = (char *)y->data;
    e.per_byte = (dk == QK_D_P4 || dk == QK_D_P2 || dk == QK_D_PE2M1) ? 8u / bits
                 : (dk == QK_D_PE2M3 || dk == QK_D_PE3M2) ? 4u : 0u;
    e.gbytes = bits == 6 ? 3u : 1u;
    e.xsize = e.per_byte ? 0 : (bits < 8 ? 1 : bits / 8);
    e.ysize = qs_bits(y->dtype) / 8;
    e.dp.bits = bits;   /* QK_D_B8 reads 8, 4 or 2 */
    e.dp.is_signed = is_signed;
    e.dp.stream = qs_stream(qs_nbytes(x->dtype, x->packed, plan.n), plan.n * e.ysize);
    return qs_execute(&e, opt->num_threads, err);
}
