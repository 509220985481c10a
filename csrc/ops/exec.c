/* The run loop of QuantizeLinear / DequantizeLinear (exec.h): plan runs -> entries -> kernel. */
#include "exec.h"

#include <stdlib.h>

#include "pool.h"

/* One run with the entries pp holds (pp covers the run's entries). */
static void exec_run(const qs_exec *e, const qs_run *r, const qs_params *pp)
{
    size_t off = r->entry - pp->first;
    size_t g = e->per_byte ? r->start / e->per_byte * e->gbytes : 0;   /* packed group's byte */
    unsigned phase = e->per_byte ? (unsigned)(r->start % e->per_byte) : 0u;
    const char *x = e->x + (e->xsize ? r->start * e->xsize : g);
    char *y = e->y + (e->ysize ? r->start * e->ysize : g);
    /* the kernel's parameters with pp's arrays, advanced to the run's first entry */
    if (e->quant) {
        qk_qparams p = e->qp;
        p.scale = pp->scale;
        p.scale64 = pp->scale64;
        p.zp = pp->zp;
        p.zp64 = pp->zp64;
        p.zpf = pp->zpf;
        p.rscale = pp->rscale;
        p = qk_qparams_at(&p, off);
        p.blk = r->blk;
        p.phase = phase;
        e->quant(x, y, r->n, &p);
    } else {
        qk_dparams p = e->dp;
        p.scale = pp->scale;
        p.zp = pp->zp;
        p.zp64 = pp->zp64;
        p.zpf = pp->zpf;
        p = qk_dparams_at(&p, off);
        p.blk = r->blk;
        p.phase = phase;
        e->dequant(x, y, r->n, &p);
    }
}

/* Elements [a, b). pp holds every entry, or (chunked) QS_CHUNK_ENTRIES at a time fetched
 * just before the runs that read them: blocks along the last axis, whose entries are never
 * reused, so a call never converts more than a chunk ahead. */
static void exec_piece(const qs_exec *e, qs_params *pp, int chunked, size_t a, size_t b)
{
    qs_runs it;
    qs_run r;
    for (qs_runs_start(&it, e->plan, a, b); qs_runs_next(&it, &r);) {
        if (!chunked) {
            exec_run(e, &r, pp);
            continue;
        }
        size_t blk = r.blk, ne = r.n <= blk ? 1 : r.n / blk + (r.n % blk != 0);
        for (size_t k = 0; k < ne; k += QS_CHUNK_ENTRIES) {
            size_t m = ne - k < QS_CHUNK_ENTRIES ? ne - k : QS_CHUNK_ENTRIES;
            qs_run sub = r;
            sub.entry = r.entry + k;
            if (ne > 1) {
                sub.start = r.start + k * blk;
                sub.n = k + m == ne ? r.n - k * blk : m * blk;
            }
            qs_params_fetch(e->src, sub.entry, m, pp);
            exec_run(e, &sub, pp);
        }
    }
    if (e->quant ? e->qp.stream : e->dp.stream) qs_fence_streams();
}

typedef struct piece_ctx {
    const qs_exec *e;
    qs_params *pp;   /* shared (every entry), or NULL: each piece fetches its own chunks */
} piece_ctx;

static void exec_thread_piece(void *vctx, int index, size_t a, size_t b)
{
    const piece_ctx *c = (const piece_ctx *)vctx;
    (void)index;
    if (c->pp) {
        exec_piece(c->e, c->pp, 0, a, b);
    } else {
        qs_params pp;   /* this thread's chunk */
        pp.count = 0;
        exec_piece(c->e, &pp, 1, a, b);
    }
}

int qs_execute(const qs_exec *e, int threads, qsimd_error *err)
{
    const qs_plan *plan = e->plan;
    int one = qs_thread_count(plan->n, threads) <= 1;
    piece_ctx c = {e, NULL};
    qs_params pp;
    if (e->src->entries > QS_CHUNK_ENTRIES && plan->kind == QS_BLOCKED && plan->inner == 1) {
        pp.count = 0;
        if (one) exec_piece(e, &pp, 1, 0, plan->n);
        else qs_parallel(plan, threads, e->per_byte, exec_thread_piece, &c);
        return QSIMD_OK;
    }
    int rc = qs_params_all(e->src, &pp, err);
    if (rc != QSIMD_OK) return rc;
    c.pp = &pp;
    if (one) exec_piece(e, &pp, 0, 0, plan->n);
    else qs_parallel(plan, threads, e->per_byte, exec_thread_piece, &c);
    free(pp.heap);
    return QSIMD_OK;
}
