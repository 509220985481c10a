/* QuantizeLinear: resolve types, validate, then feed contiguous runs to the active kernels. */
#include <string.h>

#include "common.h"

void qsimd_quantize_options_init(qsimd_quantize_options *opt)
{
    opt->axis = 1;
    opt->block_size = 0;
    opt->saturate = 1;
    opt->precision = 0;
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

/* Quotient precision, CONTRACT.md rule 1 and onnx-semantics.md section 2. */
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

typedef struct qctx {
    qk_quant_fn fn;
    const char *x;
    char *y;
    size_t xsize;       /* bytes per x element */
    size_t ysize;       /* bytes per y element; 0 for packed */
    unsigned per_byte;  /* packed: elements per byte */
    const qs_params *pp;
    qk_qparams kp;
} qctx;

static void quant_run(void *vctx, const qs_run *r)
{
    qctx *c = (qctx *)vctx;
    qk_qparams p = c->kp;
    p.scale = c->pp->scale + r->entry;
    p.scale64 = c->pp->scale64 + r->entry;
    p.zp = c->pp->zp + r->entry;
    p.blk = r->blk;
    void *y;
    if (c->per_byte) {
        y = c->y + r->start / c->per_byte;
        p.phase = (unsigned)(r->start % c->per_byte);
    } else {
        y = c->y + r->start * c->ysize;
    }
    c->fn(c->x + r->start * c->xsize, y, r->n, &p);
}

int qsimd_quantize_linear(const qsimd_tensor *x, const qsimd_tensor *scale,
                          const qsimd_tensor *zero_point, const qsimd_quantize_options *opt,
                          const qsimd_tensor *y, qsimd_error *err)
{
    qsimd_quantize_options defaults;
    if (!opt) { qsimd_quantize_options_init(&defaults); opt = &defaults; }
    if (!x || !scale || !y)
        return qs_fail(err, QSIMD_ERR_VALUE, "x, scale and y are required");
    int xk = x_kind(x->dtype);
    if (xk < 0)
        return qs_fail(err, QSIMD_ERR_TYPE, "x must be float32, float16, bfloat16 or int32, "
                       "got %s", qs_dtype_name(x->dtype));
    if (x_kind(scale->dtype) < 0)
        return qs_fail(err, QSIMD_ERR_TYPE, "scale must be float32, float16, bfloat16 or "
                       "int32, got %s", qs_dtype_name(scale->dtype));
    if (opt->precision != 0 && opt->precision != QSIMD_FLOAT &&
        opt->precision != QSIMD_FLOAT16 && opt->precision != QSIMD_BFLOAT16)
        return qs_fail(err, QSIMD_ERR_TYPE, "precision must be float32, float16 or bfloat16, "
                       "got %s", qs_dtype_name(opt->precision));
    int32_t qmin, qmax;
    if (!qs_int_range(y->dtype, &qmin, &qmax))
        return qs_fail(err, QSIMD_ERR_TYPE, "output type %s is not supported by "
                       "quantize_linear", qs_dtype_name(y->dtype));
    if (zero_point && zero_point->dtype != y->dtype)
        return qs_fail(err, QSIMD_ERR_VALUE, "zero_point has type %s but the output type is %s",
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
    qs_params pp;
    if ((rc = qs_params_alloc(&pp, plan.entries, err)) != QSIMD_OK) return rc;
    if ((rc = qs_load_scales(scale, plan.entries, qk, &pp, err)) != QSIMD_OK ||
        (rc = qs_load_zps(zero_point, plan.entries, &pp, err)) != QSIMD_OK) {
        qs_params_free(&pp);
        return rc;
    }

    unsigned bits = qs_bits(y->dtype);
    int packed = bits < 8 && y->packed;
    int yk = packed ? (bits == 4 ? QK_Y_P4 : QK_Y_P2) : (bits == 16 ? QK_Y_B16 : QK_Y_B8);
    qctx c;
    memset(&c, 0, sizeof c);
    c.fn = qk_get_quant(qk_active(), xk, qk, yk);
    c.x = (const char *)x->data;
    c.y = (char *)y->data;
    c.xsize = qs_bits(x->dtype) / 8;
    c.ysize = bits < 8 ? 1u : bits / 8;   /* unpacked sub-byte codes: one byte each */
    c.per_byte = packed ? 8u / bits : 0u;
    c.pp = &pp;
    c.kp.qmin = qmin;
    c.kp.qmax = qmax;
    c.kp.mask = bits < 8 ? (1u << bits) - 1u : 0xffu;
    if (packed && plan.n % c.per_byte)   /* padding bits of the last byte are zero */
        c.y[plan.n / c.per_byte] = 0;
    qs_for_each_run(&plan, quant_run, &c);
    qs_params_free(&pp);
    return QSIMD_OK;
}
