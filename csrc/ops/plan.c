/* The granularity plan: per-tensor / per-axis / blocked layouts as contiguous kernel runs,
 * and where work may be cut. */
#include "plan.h"

#include <string.h>

static int64_t dim(const qsimd_tensor *t, int i) { return t->shape[i]; }

int qs_make_plan(const qsimd_tensor *x, const qsimd_tensor *scale, const qsimd_tensor *zp,
                 int64_t axis, int64_t block_size, qs_plan *plan, qsimd_error *err)
{
    size_t ns, nz = 0;
    int rc;
    memset(plan, 0, sizeof *plan);
    if ((rc = qs_count(x, "x", &plan->n, err)) != QSIMD_OK) return rc;
    if ((rc = qs_count(scale, "scale", &ns, err)) != QSIMD_OK) return rc;
    if (zp && (rc = qs_count(zp, "zero_point", &nz, err)) != QSIMD_OK) return rc;
    if (block_size < 0)
        return qs_fail(err, QSIMD_ERR_VALUE, "block_size must be >= 0, got %lld",
                       (long long)block_size);
    if (zp) {
        int same = nz == ns && zp->ndim == scale->ndim;
        for (int i = 0; same && i < zp->ndim; i++) same = dim(zp, i) == dim(scale, i);
        char zs[QS_SHAPE_CHARS], ss[QS_SHAPE_CHARS];
        if (!same && !(nz == 1 && ns == 1))
            return qs_fail(err, QSIMD_ERR_VALUE, "zero_point must have the shape of scale "
                           "((%s) vs (%s))", qs_shape_str(zp, zs, sizeof zs),
                           qs_shape_str(scale, ss, sizeof ss));
    }
    if (ns == 1) {   /* one element: per-tensor whatever axis and block_size say (as ONNX) */
        plan->kind = QS_PER_TENSOR;
        plan->outer = 1; plan->d = plan->n; plan->inner = 1;
        plan->s = 1; plan->b = plan->n; plan->entries = 1;
        return QSIMD_OK;
    }
    int r = x->ndim;
    if (r == 0)
        return qs_fail(err, QSIMD_ERR_VALUE,
                       "scale must have one element for a 0-d x, got %zu elements", ns);
    if (axis < -r || axis >= r)
        return qs_fail(err, QSIMD_ERR_VALUE, "axis %lld is out of range for x of rank %d "
                       "(expected -%d <= axis <= %d)", (long long)axis, r, r, r - 1);
    int a = (int)(axis < 0 ? axis + r : axis);
    plan->outer = 1; plan->inner = 1;
    for (int i = 0; i < a; i++) plan->outer *= (size_t)dim(x, i);
    for (int i = a + 1; i < r; i++) plan->inner *= (size_t)dim(x, i);
    plan->d = (size_t)dim(x, a);
    if (block_size == 0) {
        if (scale->ndim != 1)
            return qs_fail(err, QSIMD_ERR_VALUE, "scale must be a scalar or 1-D for per-axis "
                           "quantization (block_size=0), got rank %d", (int)scale->ndim);
        if ((size_t)dim(scale, 0) != plan->d)
            return qs_fail(err, QSIMD_ERR_VALUE, "scale has %lld entries but x.shape[%d] is %zu "
                           "(per-axis scale must match the axis length)",
                           (long long)dim(scale, 0), a, plan->d);
        plan->kind = QS_PER_AXIS;
        plan->s = plan->d; plan->b = 1; plan->entries = plan->d;
        return QSIMD_OK;
    }
    if (scale->ndim != r)
        return qs_fail(err, QSIMD_ERR_VALUE, "scale must have the rank of x (%d) for blocked "
                       "quantization, got rank %d", r, (int)scale->ndim);
    for (int i = 0; i < r; i++)
        if (i != a && dim(scale, i) != dim(x, i))
            return qs_fail(err, QSIMD_ERR_VALUE, "scale.shape[%d] is %lld but x.shape[%d] is "
                           "%lld (blocked scales match x except along axis)", i,
                           (long long)dim(scale, i), i, (long long)dim(x, i));
    size_t s = (size_t)dim(scale, a), b = (size_t)block_size;
    size_t want = plan->d / b + (plan->d % b != 0);
    if (s != want)
        return qs_fail(err, QSIMD_ERR_VALUE, "block_size %zu does not fit: x.shape[%d] = %zu "
                       "needs scale.shape[%d] = ceil(%zu/%zu) = %zu, got %zu", b, a, plan->d,
                       a, plan->d, b, want, s);
    plan->kind = QS_BLOCKED;
    plan->s = s; plan->b = b; plan->entries = ns;
    return QSIMD_OK;
}

/* How the runs are laid out: one for the whole tensor, one per (d, inner) slab or row of
 * blocks, or one per row of `inner` elements (blocked on an outer axis). */
enum { RUNS_ONE, RUNS_SLAB, RUNS_ROW };

static int runs_mode(const qs_plan *p)
{
    /* rows of whole blocks along the last axis: entry i / b runs on from row to row, so one
     * run covers all (a short last block needs a run per row) */
    if (p->kind == QS_PER_TENSOR || (p->kind == QS_BLOCKED && p->inner == 1 && p->d % p->b == 0))
        return RUNS_ONE;
    return p->kind == QS_PER_AXIS || p->inner == 1 ? RUNS_SLAB : RUNS_ROW;
}

void qs_runs_start(qs_runs *it, const qs_plan *p, size_t a, size_t b)
{
    it->plan = p;
    it->a = a;
    it->b = b > p->n ? p->n : b;
    it->i = it->end = 0;
    if (it->a >= it->b) return;
    int mode = runs_mode(p);
    size_t unit = mode == RUNS_ONE ? p->n : mode == RUNS_SLAB ? p->d * p->inner : p->inner;
    it->i = it->a / unit;
    it->end = (it->b - 1) / unit + 1;
}

int qs_runs_next(qs_runs *it, qs_run *r)
{
    const qs_plan *p = it->plan;
    int mode = runs_mode(p);
    while (it->i < it->end) {
        size_t k = it->i++;
        if (mode == RUNS_ONE) {
            r->start = 0; r->n = p->n; r->entry = 0;
            r->blk = p->kind == QS_PER_TENSOR ? p->n : p->b;
        } else if (mode == RUNS_SLAB) {
            /* per-axis: the whole (d, inner) slab, entry = index / inner;
             * blocked along the last axis: one row, entry = index / b */
            int axis = p->kind == QS_PER_AXIS;
            r->start = k * p->d * p->inner;
            r->n = axis ? p->d * p->inner : p->d;
            r->entry = axis ? 0 : k * p->s;
            r->blk = axis ? p->inner : p->b;
        } else {   /* each row of `inner` elements reads a row of entries */
            size_t o = k / p->d, d = k % p->d;
            r->start = k * p->inner; r->n = p->inner;
            r->entry = (o * p->s + d / p->b) * p->inner; r->blk = 1;
        }
        /* clipped to [a, b): the cuts are valid, so the clipped run starts on an entry
         * boundary (or the run has a single entry) */
        size_t end = r->start + r->n, lo = r->start > it->a ? r->start : it->a;
        size_t hi = end < it->b ? end : it->b;
        if (lo >= hi) continue;
        r->entry += (lo - r->start) / r->blk;
        r->start = lo;
        r->n = hi - lo;
        return 1;
    }
    return 0;
}

int qs_valid_cut(const qs_plan *p, size_t cut, unsigned per_byte)
{
    if (per_byte > 1 && cut % per_byte) return 0;   /* packed bytes are never shared */
    if (p->kind == QS_PER_AXIS) return cut % p->inner == 0;
    if (p->kind == QS_BLOCKED && p->inner == 1) return (cut % p->d) % p->b == 0;
    return 1;   /* one entry per run, or one entry per element */
}

size_t qs_next_cut(const qs_plan *p, unsigned per_byte, size_t want, size_t limit)
{
    size_t row = 0, off = want, period = limit, step = 1;   /* per-tensor: any element */
    if (p->kind == QS_PER_AXIS) {
        step = p->inner;             /* channel starts */
    } else if (p->kind == QS_BLOCKED && p->inner == 1) {
        period = p->d; step = p->b;  /* block starts inside each row */
        row = want / period; off = want % period;
    }
    off = (off + step - 1) / step * step;
    for (int tries = 0; tries < 16; tries++) {
        if (off >= period) { row++; off = 0; }
        size_t cut = row * period + off;
        if (cut >= limit) break;
        if (qs_valid_cut(p, cut, per_byte)) return cut;
        off += step;
    }
    return limit;
}
