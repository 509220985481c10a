/* The run loop of QuantizeLinear / DequantizeLinear (exec.h): one kernel call per piece of
 * work, described by the plan's layout (kernels.h); the kernel walks the layout itself. */
#include "exec.h"

#include <stdlib.h>

#include "pool.h"

/* The plan as a kernel layout: blk, row, erow, kdim (kernels.h). */
static void layout_of(const qs_plan *p, size_t l[4])
{
    l[0] = (size_t)-1; l[1] = l[2] = l[3] = 0;   /* per-tensor: one entry */
    if (p->kind == QS_PER_AXIS && p->inner == 1) {
        l[3] = p->d;                            /* entry j % D */
    } else if (p->kind == QS_PER_AXIS) {
        /* (one row, of entries shorter than a vector: plain blocks, which take a window of
         * entries per chunk where rows would take one per vector) */
        l[0] = p->inner; l[1] = p->outer == 1 && p->inner < 16 ? 0 : p->d * p->inner;
    } else if (p->kind == QS_BLOCKED && p->inner == 1 && (p->d % p->b == 0 || p->b >= p->d)) {
        /* whole blocks per row, or one block per row: entry j / b (j / d), no rows */
        l[0] = p->b < p->d ? p->b : p->d;
    } else if (p->kind == QS_BLOCKED) {
        l[0] = p->b * p->inner; l[1] = p->d * p->inner; l[2] = p->s * p->inner;
        l[3] = p->inner > 1 ? p->inner : 0;
    }
}

/* Elements [a, b) with the entries pp holds (all those the elements use). */
static void exec_run(const qs_exec *e, size_t a, size_t b, const qs_params *pp)
{
    size_t l[4], g = e->per_byte ? a / e->per_byte * e->gbytes : 0;   /* packed group's byte */
    unsigned phase = e->per_byte ? (unsigned)(a % e->per_byte) : 0u;
    const char *x = e->x + (e->xsize ? a * e->xsize : g);
    char *y = e->y + (e->ysize ? a * e->ysize : g);
    layout_of(e->plan, l);
    if (e->quant) {
        qk_qparams p = e->qp;
        p.scale = pp->scale; p.scale64 = pp->scale64; p.zp = pp->zp; p.zp64 = pp->zp64;
        p.zpf = pp->zpf; p.rscale = pp->rscale; p.negs = pp->negs;
        p.blk = l[0]; p.row = l[1]; p.erow = l[2]; p.kdim = l[3];
        p.pos = a; p.ebase = pp->first; p.phase = phase;
        e->quant(x, y, b - a, &p);
    } else {
        qk_dparams p = e->dp;
        p.scale = pp->scale; p.zp = pp->zp; p.zp64 = pp->zp64; p.zpf = pp->zpf;
        p.blk = l[0]; p.row = l[1]; p.erow = l[2]; p.kdim = l[3];
        p.pos = a; p.ebase = pp->first; p.phase = phase;
        e->dequant(x, y, b - a, &p);
    }
}

/* Elements [a, b). pp holds every entry, or (chunked: blocks along the last axis, whose
 * entries are never reused) qs_params_room at a time, fetched just before the elements
 * that use them, so a call never converts more than a chunk ahead. */
static void exec_piece(const qs_exec *e, qs_params *pp, int chunked, size_t a, size_t b)
{
    const qs_plan *pl = e->plan;
    while (a < b) {
        size_t end = b;
        if (chunked) {   /* entry (j / d) s + (j % d) / blk: the first of a chunk at a */
            size_t e0 = a / pl->d * pl->s + a % pl->d / pl->b, e1 = e0 + qs_params_room(e->src);
            size_t j1 = e1 / pl->s * pl->d + e1 % pl->s * pl->b;
            if (e1 > pl->entries) e1 = pl->entries;
            qs_params_fetch(e->src, e0, e1 - e0, pp);
            /* whole packed groups: a cut inside one rounds down (its entry is still held) */
            if (e->per_byte) j1 -= j1 % e->per_byte;
            if (j1 > a && j1 < b) end = j1;
        }
        exec_run(e, a, end, pp);
        a = end;
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
    qs_plan cuts = *plan;   /* kernels take any piece: cuts only keep packed groups whole */
    cuts.kind = QS_PER_TENSOR;
    if (!e->kept && e->src->entries > qs_params_room(e->src) && plan->kind == QS_BLOCKED &&
        plan->inner == 1) {
        pp.count = 0;
        if (one) exec_piece(e, &pp, 1, 0, plan->n);
        else qs_parallel(&cuts, threads, e->per_byte, exec_thread_piece, &c);
        return QSIMD_OK;
    }
    pp.heap = NULL;
    if (e->kept) {   /* (read-only: shared by the threads as qs_params_all's would be) */
        c.pp = (qs_params *)e->kept;
    } else {
        int rc = qs_params_all(e->src, &pp, err);
        if (rc != QSIMD_OK) return rc;
        c.pp = &pp;
    }
    if (one) exec_piece(e, c.pp, 0, 0, plan->n);
    else qs_parallel(&cuts, threads, e->per_byte, exec_thread_piece, &c);
    free(pp.heap);
    return QSIMD_OK;
}
