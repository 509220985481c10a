/* DynamicQuantizeLinear (uint8): range with NaN ignored, scale and zero point exactly as the
 * ONNX reference computes them in float32, then one QuantizeLinear pass. */
#include <math.h>
#include <stdlib.h>
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

/* ---- Per-group dynamic quantization (qsimd_dynamic_quantize) ----
 * Groups are block_size consecutive elements along one axis (the whole axis when 0). x is
 * viewed as (outer, D, inner); a "slab" is one block of one outer index, len * inner
 * contiguous elements holding `inner` groups. Work is split between threads at slab
 * boundaries, and each slab is reduced and quantized while it is in the caches. */

typedef struct grp_ctx {
    qk_minmax_cols_fn minmax_cols;
    qk_minmax_groups_fn minmax_groups;
    qk_quant_fn quant;
    const float *x;
    char *y;
    float *scale;
    char *zp;              /* NULL: not wanted (symmetric) */
    size_t d, inner, b, nblocks;
    int32_t qmin, qmax;
    uint32_t mask;
    int symmetric;
    int stream;
} grp_ctx;

/* A group's scale and zero point from its NaN-ignoring range (docs/CONTRACT.md, DynamicQuantize-
 * Linear, for any integer range; symmetric: max|x| / qmax, zero point 0). */
static void group_params(const grp_ctx *c, float mn, float mx, float *scale, int32_t *zp)
{
    if (c->symmetric) {
        float a = mx > -mn ? mx : -mn;   /* all-NaN: -inf, taken as 0 below */
        a = a > 0.0f ? a : 0.0f;
        *scale = (a == 0.0f ? 1.0f : a) / (float)c->qmax;
        *zp = 0;
        return;
    }
    float hi = mx > 0.0f ? mx : 0.0f;
    float lo = mn < 0.0f ? mn : 0.0f;
    float s = (hi == lo ? 1.0f : hi - lo) / (float)(c->qmax - c->qmin);
    /* as qsimd_dynamic_quantize_linear: a NaN (lo = -inf, hi = inf) gives qmax */
    float z = (float)c->qmin - lo / s;
    z = z < (float)c->qmax ? z : (float)c->qmax;
    z = z > (float)c->qmin ? z : (float)c->qmin;
    *scale = s;
    *zp = (int32_t)qk_rint_small(z);
}

/* Scale, zero point and reciprocal of n groups from their ranges, into s / z / r and the
 * outputs from group g on (the divisions of a batch in one loop: they overlap); whether every
 * reciprocal is in the kernels' range (else they divide). */
static int group_entries(const grp_ctx *c, const float *mn, const float *mx, size_t n,
                         float *s, float *r, int32_t *z, size_t g)
{
    int all = 1;
    for (size_t i = 0; i < n; i++) {
        group_params(c, mn[i], mx[i], &s[i], &z[i]);
        r[i] = qk_recip(s[i]);
        all &= r[i] != 0.0f;
        c->scale[g + i] = s[i];
        if (c->zp) c->zp[g + i] = (char)(uint8_t)((uint32_t)z[i] & c->mask);
    }
    return all;
}

#define QS_GRP_COLS 256   /* groups of a strided slab handled at once (stack arrays) */
#define QS_GRP_RUN 4096   /* elements of groups along a last axis quantized in one run */

static void group_piece(void *vctx, int index, size_t a, size_t b)
{
    grp_ctx *c = (grp_ctx *)vctx;
    size_t row = c->d * c->inner;
    qk_qparams p;
    (void)index;
    memset(&p, 0, sizeof p);
    p.qmin = c->qmin;
    p.qmax = c->qmax;
    p.mask = c->mask;
    p.stream = c->stream;
    while (a < b) {
        size_t o = a / row, k = (a % row) / (c->b * c->inner);
        size_t len = c->d - k * c->b < c->b ? c->d - k * c->b : c->b;
        size_t g0 = (o * c->nblocks + k) * c->inner;   /* first group (scale entry) */
        const float *xs = c->x + a;
        char *ys = c->y + a;
        if (c->inner == 1) {
            /* Groups along the last axis, up to QS_GRP_COLS of them or QS_GRP_RUN elements
             * at a time (still in L1 when quantized): their ranges, then one kernel run in
             * the layout of blocks along a last axis. A run per group had left groups shorter
             * than the kernel's chunk to its scalar tail (64x64 in blocks of 32: 16 us). */
            float mn[QS_GRP_COLS], mx[QS_GRP_COLS], s[QS_GRP_COLS], r[QS_GRP_COLS];
            int32_t z[QS_GRP_COLS];
            size_t ng = 0, m = 0, e0 = o * c->nblocks + k, kk = k;
            size_t last = c->d - (c->nblocks - 1) * c->b;   /* a row's last group */
            while (ng < QS_GRP_COLS && m < QS_GRP_RUN && a + m < b) {
                /* the groups of length b from kk on (across rows when all are), else the
                 * row's shorter last one */
                size_t run = last == c->b ? QS_GRP_COLS : c->nblocks - 1 - kk, gl = c->b;
                if (!run) run = 1, gl = last;
                if (run > QS_GRP_COLS - ng) run = QS_GRP_COLS - ng;
                if (run > (QS_GRP_RUN - m + gl - 1) / gl) run = (QS_GRP_RUN - m + gl - 1) / gl;
                if (run > (b - a - m) / gl) run = (b - a - m) / gl;
                c->minmax_groups(xs + m, run, gl, mn + ng, mx + ng);
                ng += run;
                m += run * gl;
                kk = (kk + run) % c->nblocks;
            }
            p.scale = s;
            p.rscale = group_entries(c, mn, mx, ng, s, r, z, e0) ? r : NULL;
            p.zp = z;
            p.blk = c->b;
            p.row = c->d;
            p.erow = c->nblocks;
            p.pos = a;
            p.ebase = e0;
            c->quant(xs, ys, m, &p);
            a += m;
            continue;
        } else {
            /* The slab's `inner` groups (columns): their ranges QS_GRP_COLS columns at a time,
             * then, with every column's entries at hand (on the heap past QS_GRP_COLS), one
             * kernel run over the slab in the layout of blocks along an outer axis (rows of
             * `inner` elements sharing a row of entries). A run per row with an entry per
             * element had cost 14x DynamicQuantizeLinear (1x64x56x56 in blocks of 32
             * channels); without the heap, that is still the way. */
            size_t K = c->inner;
            float mn[QS_GRP_COLS], mx[QS_GRP_COLS], sb[QS_GRP_COLS], rb[QS_GRP_COLS];
            int32_t zb[QS_GRP_COLS];
            float *s = sb, *r = rb;
            int32_t *z = zb;
            char *heap = K > QS_GRP_COLS ? (char *)malloc(K * 12) : NULL;
            int whole = K <= QS_GRP_COLS || heap, all_recip = 1;
            if (heap) {
                s = (float *)(void *)heap;
                r = s + K;
                z = (int32_t *)(void *)(r + K);
            }
            p.scale = s;
            p.zp = z;
            for (size_t i0 = 0; i0 < K; i0 += QS_GRP_COLS) {
                size_t m = K - i0 < QS_GRP_COLS ? K - i0 : QS_GRP_COLS, j, e = whole ? i0 : 0;
                c->minmax_cols(xs + i0, len, K, m, mn, mx);
                int ok = group_entries(c, mn, mx, m, s + e, r + e, z + e, g0 + i0);
                all_recip = whole ? all_recip & ok : ok;
                if (whole) continue;
                p.rscale = all_recip ? r : NULL;
                p.blk = 1;   /* one entry per element along a row of the slab */
                p.row = p.erow = p.kdim = p.pos = p.ebase = 0;
                for (j = 0; j < len; j++)
                    c->quant(xs + j * K + i0, ys + j * K + i0, m, &p);
            }
            if (whole) {
                p.rscale = all_recip ? r : NULL;
                p.blk = c->b * K;
                p.row = c->d * K;
                p.erow = c->nblocks * K;
                p.kdim = K;
                p.pos = a;
                p.ebase = g0;
                c->quant(xs, ys, len * K, &p);
            }
            free(heap);
        }
        a += len * c->inner;
    }
    if (c->stream) qs_fence_streams();
}

void qsimd_dynamic_options_init(qsimd_dynamic_options *opt)
{
    opt->axis = -1;
    opt->block_size = 0;
    opt->symmetric = 0;
    opt->num_threads = 0;
}

int qsimd_dynamic_quantize(const qsimd_tensor *x, const qsimd_tensor *y,
                           const qsimd_tensor *scale, const qsimd_tensor *zero_point,
                           const qsimd_dynamic_options *opt, qsimd_error *err)
{
    qsimd_dynamic_options defaults;
    if (!opt) { qsimd_dynamic_options_init(&defaults); opt = &defaults; }
    if (!x || !y || !scale)
        return qs_fail(err, QSIMD_ERR_VALUE, "x, y and scale are required");
    if (x->dtype != QSIMD_FLOAT)
        return qs_fail(err, QSIMD_ERR_TYPE, "x must be float32, got %s",
                       qs_dtype_name(x->dtype));
    int32_t qmin, qmax;
    if ((y->dtype != QSIMD_UINT8 && y->dtype != QSIMD_INT8 && y->dtype != QSIMD_UINT4 &&
         y->dtype != QSIMD_INT4) || y->packed)
        return qs_fail(err, QSIMD_ERR_TYPE, "output_dtype (y's type) must be uint8, int8, "
                       "uint4 or int4, one per byte, got %s%s", qs_dtype_name(y->dtype),
                       y->packed ? " packed" : "");
    qs_int_range(y->dtype, &qmin, &qmax);
    if (opt->symmetric != 0 && opt->symmetric != 1)
        return qs_fail(err, QSIMD_ERR_VALUE, "symmetric must be 0 or 1, got %d",
                       (int)opt->symmetric);
    if (opt->symmetric && qmin == 0)
        return qs_fail(err, QSIMD_ERR_VALUE, "symmetric needs a signed output_dtype (int8 or "
                       "int4), got %s", qs_dtype_name(y->dtype));
    if (!opt->symmetric && !zero_point)
        return qs_fail(err, QSIMD_ERR_VALUE, "zero_point is required unless symmetric");
    if (scale->dtype != QSIMD_FLOAT)
        return qs_fail(err, QSIMD_ERR_TYPE, "scale must be float32, got %s",
                       qs_dtype_name(scale->dtype));
    if (zero_point && (zero_point->dtype != y->dtype || zero_point->packed))
        return qs_fail(err, QSIMD_ERR_TYPE, "zero_point must have y's type (%s), got %s",
                       qs_dtype_name(y->dtype), qs_dtype_name(zero_point->dtype));
    if (opt->num_threads < 0 || opt->num_threads > 64)
        return qs_fail(err, QSIMD_ERR_VALUE, "num_threads must be between 1 and 64 (0: the "
                       "default), got %d", (int)opt->num_threads);
    size_t n, ny, ns, nz = 0;
    int rc;
    if ((rc = qs_count(x, "x", &n, err)) != QSIMD_OK) return rc;
    if ((rc = qs_count(y, "y", &ny, err)) != QSIMD_OK) return rc;
    if ((rc = qs_count(scale, "scale", &ns, err)) != QSIMD_OK) return rc;
    if (zero_point && (rc = qs_count(zero_point, "zero_point", &nz, err)) != QSIMD_OK) return rc;
    int same = ny == n && y->ndim == x->ndim;
    for (int i = 0; same && i < x->ndim; i++) same = y->shape[i] == x->shape[i];
    if (!same) return qs_fail(err, QSIMD_ERR_VALUE, "y must have the shape of x");
    int r = x->ndim;
    if (r == 0)
        return qs_fail(err, QSIMD_ERR_VALUE, "x must have at least one dimension");
    if (opt->axis < -r || opt->axis >= r)
        return qs_fail(err, QSIMD_ERR_VALUE, "axis %lld is out of range for x of rank %d "
                       "(expected -%d <= axis <= %d)", (long long)opt->axis, r, r, r - 1);
    int ax = (int)(opt->axis < 0 ? opt->axis + r : opt->axis);
    if (opt->block_size < 0)
        return qs_fail(err, QSIMD_ERR_VALUE, "block_size must be >= 0, got %lld",
                       (long long)opt->block_size);
    size_t outer = 1, inner = 1, d = (size_t)x->shape[ax];
    for (int i = 0; i < ax; i++) outer *= (size_t)x->shape[i];
    for (int i = ax + 1; i < r; i++) inner *= (size_t)x->shape[i];
    size_t b = opt->block_size ? (size_t)opt->block_size : d;
    if (n == 0)
        return qs_fail(err, QSIMD_ERR_VALUE, "x is empty: dynamic quantization needs at least "
                       "one element per group");
    if (b > d) b = d;   /* one block covers the whole axis */
    size_t nblocks = d / b + (d % b != 0);
    /* scale (and zero point): x's shape with nblocks entries along the axis */
    same = scale->ndim == r && ns == outer * nblocks * inner;
    for (int i = 0; same && i < r; i++)
        same = (size_t)scale->shape[i] == (i == ax ? nblocks : (size_t)x->shape[i]);
    if (!same)
        return qs_fail(err, QSIMD_ERR_VALUE, "scale must have x's shape with %zu entries along "
                       "axis %d", nblocks, ax);
    if (zero_point) {
        same = zero_point->ndim == r && nz == ns;
        for (int i = 0; same && i < r; i++) same = zero_point->shape[i] == scale->shape[i];
        if (!same) return qs_fail(err, QSIMD_ERR_VALUE, "zero_point must have scale's shape");
    }
    if (!x->data || !y->data || !scale->data || (zero_point && !zero_point->data))
        return qs_fail(err, QSIMD_ERR_VALUE, "a tensor's data pointer is NULL");

    const qk_table *t = qk_active();
    grp_ctx c;
    memset(&c, 0, sizeof c);
    c.minmax_cols = qk_get_minmax_cols(t);
    c.minmax_groups = qk_get_minmax_groups(t);
    c.quant = qk_get_quant(t, QK_X_F32, QK_Q_F32, QK_Y_B8);
    c.x = (const float *)x->data;
    c.y = (char *)y->data;
    c.scale = (float *)scale->data;
    c.zp = zero_point && !opt->symmetric ? (char *)zero_point->data : NULL;
    c.d = d; c.inner = inner; c.b = b; c.nblocks = nblocks;
    c.qmin = qmin; c.qmax = qmax;
    c.mask = qs_bits(y->dtype) == 4 ? 0x0fu : 0xffu;
    c.symmetric = opt->symmetric;
    c.stream = qs_stream(n * sizeof(float), n);
    if (zero_point && opt->symmetric) memset(zero_point->data, 0, nz);
    /* the cut rule of a plan blocked along its last axis with blocks of b * inner elements
     * in rows of d * inner: pieces hold whole slabs */
    qs_plan plan;
    memset(&plan, 0, sizeof plan);
    plan.kind = QS_BLOCKED;
    plan.n = n;
    plan.outer = outer;
    plan.d = d * inner;
    plan.inner = 1;
    plan.b = b * inner;
    qs_parallel(&plan, opt->num_threads, 1, group_piece, &c);
    return QSIMD_OK;
}
