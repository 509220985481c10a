/* DynamicQuantizeLinear (uint8): range with NaN ignored, scale and zero point exactly as the
 * ONNX reference computes them in float32, then one QuantizeLinear pass. */
#include <math.h>
#include <string.h>

#include "common.h"
#include "../kernels/convert.h"

typedef struct mm_ctx {
    qk_minmax_fn fn;
    const float *x;
    float mn[64], mx[64];
} mm_ctx;

static void minmax_piece(void *vctx, int index, size_t a, size_t b)
{
    mm_ctx *m = (mm_ctx *)vctx;
    m->fn(m->x + a, b - a, &m->mn[index], &m->mx[index]);
}

typedef struct q_ctx {
    qk_quant_fn fn;
    const float *x;
    uint8_t *y;
    const qk_qparams *p;
} q_ctx;

/* Elements per kernel call of the quantize pass, which takes them from the end. */
#define QS_DYN_CHUNK ((size_t)1 << 20)

static void quant_piece(void *vctx, int index, size_t a, size_t b)
{
    q_ctx *q = (q_ctx *)vctx;
    qk_qparams p = *q->p;   /* one scale: any piece may start anywhere */
    (void)index;
    /* Backwards, a chunk at a time: the range pass just read x front to back, so its end is
     * what the caches still hold. */
    while (b > a) {
        size_t start = b - a > QS_DYN_CHUNK ? b - QS_DYN_CHUNK : a;
        p.blk = b - start;
        q->fn(q->x + start, q->y + start, b - start, &p);
        b = start;
    }
    if (p.stream) qs_fence_streams();
}

int qsimd_dynamic_quantize_linear(const qsimd_tensor *x, const qsimd_tensor *y,
                                  float *y_scale, uint8_t *y_zero_point, qsimd_error *err)
{
    if (!x || !y || !y_scale || !y_zero_point)
        return qs_fail(err, QSIMD_ERR_VALUE, "x, y, y_scale and y_zero_point are required");
    if (x->dtype != QSIMD_FLOAT)
        return qs_fail(err, QSIMD_ERR_TYPE, "x must be float32, got %s",
                       qs_dtype_name(x->dtype));
    if (y->dtype != QSIMD_UINT8)
        return qs_fail(err, QSIMD_ERR_TYPE, "y must be uint8, got %s", qs_dtype_name(y->dtype));
    size_t n, ny;
    int rc;
    if ((rc = qs_count(x, "x", &n, err)) != QSIMD_OK) return rc;
    if ((rc = qs_count(y, "y", &ny, err)) != QSIMD_OK) return rc;
    int same = ny == n && y->ndim == x->ndim;
    for (int i = 0; same && i < x->ndim; i++) same = y->shape[i] == x->shape[i];
    if (!same) return qs_fail(err, QSIMD_ERR_VALUE, "y must have the shape of x");
    if (n == 0)
        return qs_fail(err, QSIMD_ERR_VALUE, "x is empty: DynamicQuantizeLinear needs at least "
                       "one element to find a range");
    if (!x->data || !y->data)
        return qs_fail(err, QSIMD_ERR_VALUE, "a tensor's data pointer is NULL");

    const qk_table *t = qk_active();
    qs_plan plan;
    memset(&plan, 0, sizeof plan);
    plan.kind = QS_PER_TENSOR;
    plan.n = n;
    mm_ctx m;
    m.fn = qk_get_minmax(t);
    m.x = (const float *)x->data;
    int pieces = qs_parallel(&plan, 0, 1, minmax_piece, &m);
    float mn = m.mn[0], mx = m.mx[0];
    for (int i = 1; i < pieces; i++) {   /* in order, with the kernels' comparisons */
        if (m.mn[i] < mn) mn = m.mn[i];
        if (m.mx[i] > mx) mx = m.mx[i];
    }
    float hi = mx > 0.0f ? mx : 0.0f;   /* all-NaN input leaves mx = -inf: range [0, 0] */
    float lo = mn < 0.0f ? mn : 0.0f;
    float scale = (hi == lo ? 1.0f : hi - lo) / 255.0f;
    /* zp = max(0, min(255, 0 - lo / scale)) with Python's min/max, where a NaN argument
     * loses to the first one: NaN (lo = -inf) gives 255 as in the reference */
    float z = 0.0f - lo / scale;
    z = z < 255.0f ? z : 255.0f;
    z = z > 0.0f ? z : 0.0f;
    int32_t zp = (int32_t)qk_rint_small(z);

    qk_qparams p;
    float rscale = qk_recip(scale);
    memset(&p, 0, sizeof p);
    p.scale = &scale;
    p.rscale = rscale != 0.0f ? &rscale : NULL;
    p.zp = &zp;
    p.blk = n;
    p.qmin = 0;
    p.qmax = 255;
    p.mask = 0xffu;
    p.stream = qs_stream(n * sizeof(float), n);
    q_ctx q;
    q.fn = qk_get_quant(t, QK_X_F32, QK_Q_F32, QK_Y_B8);
    q.x = (const float *)x->data;
    q.y = (uint8_t *)y->data;
    q.p = &p;
    qs_parallel(&plan, 0, 1, quant_piece, &q);
    *y_scale = scale;
    *y_zero_point = (uint8_t)zp;
    return QSIMD_OK;
}
