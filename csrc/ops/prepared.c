/* Prepared parameters (qsimd_prepare_quantize / qsimd_prepare_dequantize): the scale and
 * zero point are checked and copied once into one block the caller frees, with their entries
 * converted once as the kernels read them (params.h); each run checks only x and y and calls
 * the operator with the copies. A prepared object is never written
 * after it is made, so any number of threads may run it at once. */
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "chain.h"

struct qsimd_prepared {
    int is_quantize;
    int has_zp;
    int32_t y_dtype, y_packed;            /* quantize: the output type runs must use */
    qsimd_tensor scale, zp;
    int64_t sdims[QSIMD_MAX_DIMS], zdims[QSIMD_MAX_DIMS];
    qsimd_quantize_options qopt;
    qsimd_dequantize_options dopt;
    unsigned char *data;                  /* the copies, in this same allocation */
    qs_chain *chain;                      /* quantize: a preprocessing chain, or NULL */
    qs_pkept *kept;                       /* the entries converted once, or NULL */
};

static int q_output_type(int32_t t)
{
    switch (t) {
    case QSIMD_UINT8: case QSIMD_INT8: case QSIMD_UINT16: case QSIMD_INT16:
    case QSIMD_UINT4: case QSIMD_INT4: case QSIMD_UINT2: case QSIMD_INT2:
    case QSIMD_FLOAT8E4M3FN: case QSIMD_FLOAT8E4M3FNUZ: case QSIMD_FLOAT8E5M2:
    case QSIMD_FLOAT8E5M2FNUZ: case QSIMD_FLOAT4E2M1: case QSIMD_FLOAT6E2M3:
    case QSIMD_FLOAT6E3M2: case QSIMD_INT32: case QSIMD_UINT32:
    case QSIMD_FLOAT16: case QSIMD_BFLOAT16:
        return 1;
    default:
        return 0;
    }
}

static int scale_type(int32_t t, int quantize)
{
    return t == QSIMD_FLOAT || t == QSIMD_FLOAT16 || t == QSIMD_BFLOAT16 ||
           t == QSIMD_FLOAT8E8M0 || (quantize && t == QSIMD_INT32);
}

/* Copies scale and zero point (already type-checked) into a new object. */
static int prepare(int quantize, const qsimd_tensor *scale, const qsimd_tensor *zp,
                   int64_t block_size, qsimd_prepared **out, qsimd_error *err)
{
    size_t ns, nz = 0, sb, zb = 0;
    int rc;
    if ((rc = qs_count(scale, "scale", &ns, err)) != QSIMD_OK) return rc;
    if (zp && (rc = qs_count(zp, "zero_point", &nz, err)) != QSIMD_OK) return rc;
    /* an empty scale is allowed: per-axis, it fits an x whose axis has length 0, as it does
     * for the operator itself */
    if (block_size < 0)
        return qs_fail(err, QSIMD_ERR_VALUE, "block_size must be >= 0, got %lld",
                       (long long)block_size);
    if (zp) {
        int same = nz == ns && zp->ndim == scale->ndim;
        for (int i = 0; same && i < zp->ndim; i++) same = zp->shape[i] == scale->shape[i];
        char zs[QS_SHAPE_CHARS], ss[QS_SHAPE_CHARS];
        if (!same && !(nz == 1 && ns == 1))
            return qs_fail(err, QSIMD_ERR_VALUE, "zero_point must have the shape of scale "
                           "((%s) vs (%s))", qs_shape_str(zp, zs, sizeof zs),
                           qs_shape_str(scale, ss, sizeof ss));
        if (zp->packed && qs_is_subbyte(zp->dtype))
            return qs_fail(err, QSIMD_ERR_VALUE, "zero_point must hold one element per byte");
    }
    if (block_size == 0 && scale->ndim > 1 && ns != 1)
        return qs_fail(err, QSIMD_ERR_VALUE, "scale must be a scalar or 1-D for per-axis "
                       "quantization (block_size=0), got rank %d", (int)scale->ndim);
    if (!scale->data || (zp && !zp->data))
        return qs_fail(err, QSIMD_ERR_VALUE, "a tensor's data pointer is NULL");
    sb = (qs_nbytes(scale->dtype, 0, ns) + 7) & ~(size_t)7;   /* the zero point aligned */
    if (zp) zb = qs_nbytes(zp->dtype, 0, nz);
    qsimd_prepared *p = (qsimd_prepared *)malloc(sizeof *p + 63 + sb + zb);
    if (!p) return qs_fail(err, QSIMD_ERR_NOMEM, "cannot allocate the prepared parameters");
    memset(p, 0, sizeof *p);
    p->is_quantize = quantize;
    /* the copies start on a cache line: every run reads them (per-axis: each entry), and
     * right after the struct a 256-entry per-axis run measured ~4% slower */
    p->data = (unsigned char *)(p + 1) + (64 - (uintptr_t)(p + 1) % 64) % 64;
    memcpy(p->data, scale->data, qs_nbytes(scale->dtype, 0, ns));
    p->scale = *scale;
    p->scale.data = p->data;
    p->scale.packed = 0;
    for (int i = 0; i < scale->ndim; i++) p->sdims[i] = scale->shape[i];
    p->scale.shape = p->sdims;
    if (zp) {
        memcpy(p->data + sb, zp->data, zb);
        p->has_zp = 1;
        p->zp = *zp;
        p->zp.data = p->data + sb;
        for (int i = 0; i < zp->ndim; i++) p->zdims[i] = zp->shape[i];
        p->zp.shape = p->zdims;
    }
    *out = p;
    return QSIMD_OK;
}

int qsimd_prepare_quantize(const qsimd_tensor *scale, const qsimd_tensor *zero_point,
                           int32_t y_dtype, int32_t y_packed, const qsimd_quantize_options *opt,
                           qsimd_prepared **out, qsimd_error *err)
{
    qsimd_quantize_options defaults;
    if (!opt) { qsimd_quantize_options_init(&defaults); opt = &defaults; }
    if (!out) return qs_fail(err, QSIMD_ERR_VALUE, "out is required");
    *out = NULL;
    if (!scale) return qs_fail(err, QSIMD_ERR_VALUE, "scale is required");
    if (!scale_type(scale->dtype, 1))
        return qs_fail(err, QSIMD_ERR_TYPE, "scale must be float32, float16, bfloat16, int32 "
                       "or float8_e8m0fnu, got %s", qs_dtype_name(scale->dtype));
    if (!q_output_type(y_dtype))
        return qs_fail(err, QSIMD_ERR_TYPE, "output type %s is not supported (supported: "
                       QS_Q_OUTPUT_NAMES ")", qs_dtype_name(y_dtype));
    if (y_packed != 0 && y_packed != 1)
        return qs_fail(err, QSIMD_ERR_VALUE, "y_packed must be 0 or 1");
    if (zero_point && zero_point->dtype != y_dtype)
        return qs_fail(err, QSIMD_ERR_VALUE, "zero_point has type %s but output_dtype is %s",
                       qs_dtype_name(zero_point->dtype), qs_dtype_name(y_dtype));
    if (opt->precision != 0 && opt->precision != QSIMD_FLOAT &&
        opt->precision != QSIMD_FLOAT16 && opt->precision != QSIMD_BFLOAT16)
        return qs_fail(err, QSIMD_ERR_TYPE, "precision must be float32, float16 or bfloat16, "
                       "got %s", qs_dtype_name(opt->precision));
    if (opt->saturate != 0 && opt->saturate != 1)
        return qs_fail(err, QSIMD_ERR_VALUE, "saturate must be 0 or 1, got %d",
                       (int)opt->saturate);
    if (opt->num_threads < 0 || opt->num_threads > 64)
        return qs_fail(err, QSIMD_ERR_VALUE, "num_threads must be between 1 and 64 (0: the "
                       "default), got %d", (int)opt->num_threads);
    int rc = prepare(1, scale, zero_point, opt->block_size, out, err);
    if (rc != QSIMD_OK) return rc;
    qsimd_prepared *p = *out;
    p->y_dtype = y_dtype;
    p->y_packed = qs_is_subbyte(y_dtype) ? y_packed : 0;
    p->qopt = *opt;
    p->kept = qs_quantize_kept(&p->scale, p->has_zp ? &p->zp : NULL, y_dtype, p->y_packed,
                               opt->precision);
    return QSIMD_OK;
}

int qsimd_prepare_dequantize(const qsimd_tensor *scale, const qsimd_tensor *zero_point,
                             const qsimd_dequantize_options *opt, qsimd_prepared **out,
                             qsimd_error *err)
{
    qsimd_dequantize_options defaults;
    if (!opt) { qsimd_dequantize_options_init(&defaults); opt = &defaults; }
    if (!out) return qs_fail(err, QSIMD_ERR_VALUE, "out is required");
    *out = NULL;
    if (!scale) return qs_fail(err, QSIMD_ERR_VALUE, "scale is required");
    if (!scale_type(scale->dtype, 0))
        return qs_fail(err, QSIMD_ERR_TYPE, "scale must be float32, float16, bfloat16 or "
                       "float8_e8m0fnu, got %s", qs_dtype_name(scale->dtype));
    if (opt->num_threads < 0 || opt->num_threads > 64)
        return qs_fail(err, QSIMD_ERR_VALUE, "num_threads must be between 1 and 64 (0: the "
                       "default), got %d", (int)opt->num_threads);
    int rc = prepare(0, scale, zero_point, opt->block_size, out, err);
    if (rc != QSIMD_OK) return rc;
    (*out)->dopt = *opt;
    (*out)->kept = qs_dequantize_kept(&(*out)->scale, (*out)->has_zp ? &(*out)->zp : NULL);
    return QSIMD_OK;
}

int qsimd_prepared_run(const qsimd_prepared *p, const qsimd_tensor *x, const qsimd_tensor *y,
                       qsimd_error *err)
{
    if (!p || !x || !y) return qs_fail(err, QSIMD_ERR_VALUE, "p, x and y are required");
    const qsimd_tensor *zp = p->has_zp ? &p->zp : NULL;
    if (!p->is_quantize)
        return qs_dequantize(x, &p->scale, zp, &p->dopt, y, p->kept, err);
    if (y->dtype != p->y_dtype || (qs_is_subbyte(y->dtype) && (y->packed != 0) != p->y_packed))
        return qs_fail(err, QSIMD_ERR_VALUE, "y must be %s%s as prepared, got %s%s",
                       qs_dtype_name(p->y_dtype), p->y_packed ? " packed" : "",
                       qs_dtype_name(y->dtype), y->packed ? " packed" : "");
    if (p->chain) return qs_chain_run(p->chain, x, y, err);
    return qs_quantize(x, &p->scale, zp, &p->qopt, y, p->kept, err);
}

int qsimd_prepare_quantize_chain(const qsimd_tensor *scale, const qsimd_tensor *zero_point,
                                 int32_t y_dtype, int32_t y_packed,
                                 const qsimd_quantize_options *opt, const qsimd_pre_op *ops,
                                 int32_t n_ops, int64_t pre_axis, const int64_t *perm,
                                 int32_t perm_len, qsimd_prepared **out, qsimd_error *err)
{
    int rc = qsimd_prepare_quantize(scale, zero_point, y_dtype, y_packed, opt, out, err);
    if (rc != QSIMD_OK) return rc;
    qsimd_prepared *p = *out;
    qs_chain_q q;
    q.scale = &p->scale;
    q.zp = p->has_zp ? &p->zp : NULL;
    q.y_dtype = p->y_dtype;
    q.y_packed = p->y_packed;
    q.opt = p->qopt;
    rc = qs_chain_make(&q, ops, n_ops, pre_axis, perm, perm_len, &p->chain, err);
    qs_params_unkeep(p->kept);   /* (the chain's runs never read them) */
    p->kept = NULL;
    if (rc != QSIMD_OK) {
        qsimd_prepared_free(p);
        *out = NULL;
    }
    return rc;
}

void qsimd_prepared_free(qsimd_prepared *p)
{
    if (p) {
        qs_chain_free(p->chain);
        qs_params_unkeep(p->kept);
    }
    free(p);
}
