/* Where a run's parameter entries come from, chunk by chunk (driver.h).
 *
 * A chunk is QD_U = 4 QV_W consecutive elements; its parameters are one vector per QV_W
 * elements (qd_pv). The run's layout (kernels.h) decides how they are found, once per run:
 *   QD_UNI   the whole body uses one entry: broadcast once, the loop keeps it in registers;
 *   QD_SEG   entries are constant over segments of at least QV_W elements (per-axis, blocks
 *            along the last axis): the current entry broadcast, a vector that crosses into
 *            the next segment blends the two (at most one boundary per vector);
 *   QD_KROW  entries vary along rows of K >= QV_W elements (per-axis on the last axis,
 *            blocks along an outer axis): vectors load the row of entries, a vector that
 *            crosses into the next row splices the end of one row of entries with the start
 *            of the next (the arrays are padded, kernels.h);
 *   QD_WIN   segments or rows shorter than a vector whose pattern repeats within QD_WMAX
 *            vectors (blocks of a short last axis, per-axis along a short last axis): per
 *            vector a window of QV_W consecutive entries permuted by the pattern's index;
 *   QD_EXP   anything else: entries expanded per element, QD_EXPN at a time, into stack
 *            arrays.
 * Positions are absolute (j = pos + i); the state moves forward only, one chunk per call. */
#ifndef QSIMD_GENERIC_LAYOUT_H
#define QSIMD_GENERIC_LAYOUT_H

#define QD_U (4 * QV_W)
#define QD_EXPN 256   /* elements per expansion (a multiple of every QD_U) */

enum { QD_UNI, QD_SEG, QD_KROW, QD_WIN, QD_EXP };
#define QD_WMAX 32   /* vectors of the longest pattern QD_WIN keeps */
/* parameter arrays a kernel reads: scale, reciprocal, integer zero point, float zero point */
enum { QD_S = 1, QD_R = 2, QD_Z = 4, QD_F = 8 };

typedef struct qd_pv {
    vf s[4], r[4], f[4];
    vi z[4];
} qd_pv;

/* The reciprocal form's bound on x for a scale s (driver.h): QD_RK s, exact. */
#define QD_XL(s) qv_mul(qv_set1(131072.0f), (s))

typedef struct qd_src {
    int mode;
    int sega;                   /* SEG: every segment boundary of the body falls on a chunk */
    const float *s, *r, *f;
    const int32_t *z;
    size_t blk, row, erow, kdim, ebase;
    size_t j;                   /* absolute position of the next chunk */
    size_t e, segend, rowend;   /* SEG: entry, end of its segment, end of its row */
    size_t kend, prow, rowbase, gleft, rleft;   /* KROW: end of the K-row, its entries */
    vf cs, cr, cf;              /* SEG: the current entry, broadcast */
    vi cz;
    size_t xend, jend;          /* EXP: end of the expanded window, of the body */
    /* WIN: vector wt of a pattern of wp, in its wcyc-th repetition (entries advancing by winc
     * per repetition); wlast: the last entry the run uses; wloc: the window is wl (all the
     * entries a run along a short last axis uses, copied) */
    size_t wp, wt, wcyc, winc, wlast;
    int wloc;
    vf wls, wlr, wlf;
    vi wlz;
    union {
        struct { float s[QD_EXPN], r[QD_EXPN], f[QD_EXPN]; int32_t z[QD_EXPN]; } x;
        struct { size_t base[QD_WMAX]; int32_t idx[QD_WMAX * QV_W]; } w;
    } u;
} qd_src;

QD_INLINE void qd_seg_load(qd_src *c)
{
    size_t e = c->e - c->ebase;
    c->cs = qv_set1(c->s[e]);
    c->cr = qv_set1(c->r ? c->r[e] : 1.0f);
    c->cf = qv_set1(c->f ? c->f[e] : 0.0f);
    c->cz = qv_set1_i(c->z ? c->z[e] : 0);
}

/* The next segment: the next entry, or the first of the next row (loaded only when the
 * body goes on: the arrays end with the run). */
QD_INLINE void qd_seg_next(qd_src *c)
{
    size_t end = c->segend;
    if (end == c->rowend) {
        c->e = (c->rowend / c->row) * c->erow;
        c->rowend += c->row;
    } else {
        c->e++;
    }
    c->segend = end + c->blk < c->rowend ? end + c->blk : c->rowend;
    if (end < c->jend) qd_seg_load(c);
}

/* KROW: the entries of the K-row starting at absolute position t (a multiple of K). */
static void qd_krow_at(qd_src *c, size_t t)
{
    size_t K = c->kdim, r = t / K, per = c->row ? c->row / K : (size_t)-1, g = c->blk / K;
    size_t in = r % per;   /* K-rows since the start of the row (L1) */
    c->kend = t + K;
    c->rowbase = (c->row ? r / per * c->erow : 0);
    c->prow = c->rowbase + in / g * K - c->ebase;
    c->gleft = g - in % g;
    c->rleft = per - in;
}

QD_INLINE void qd_krow_next(qd_src *c)
{
    c->kend += c->kdim;
    if (--c->rleft == 0) {   /* the next row (L1) starts a new group */
        c->rowbase += c->erow;
        c->prow = c->rowbase - c->ebase;
        c->rleft = c->row / c->kdim;
        c->gleft = c->blk / c->kdim;
    } else if (--c->gleft == 0) {
        c->prow += c->kdim;
        c->gleft = c->blk / c->kdim;
    }
}

/* Entries of [c->j, c->j + QD_EXPN) into the stack arrays. */
QD_NOINLINE void qd_exp_fill(qd_src *c)
{
    size_t len, n = c->jend - c->j < QD_EXPN ? c->jend - c->j : QD_EXPN;
    for (size_t i = 0; i < n; i += len) {
        size_t e = qk_entry(c->blk, c->j + i, c->row, c->erow, c->kdim, c->ebase, 0, &len);
        if (len > n - i) len = n - i;
        for (size_t k = i; k < i + len; k++) {
            c->u.x.s[k] = c->s[e];
            c->u.x.r[k] = c->r ? c->r[e] : 1.0f;
            c->u.x.f[k] = c->f ? c->f[e] : 0.0f;
            c->u.x.z[k] = c->z ? c->z[e] : 0;
        }
    }
    c->xend = c->j + QD_EXPN;
}

static size_t qd_lcm(size_t a, size_t b)
{
    size_t x = a, y = b;
    while (y) { size_t t = x % y; x = y; y = t; }
    return a / x * b;
}

/* QD_WIN's pattern from absolute position j on; 0 when the layout has none that fits. Entries
 * that rise along the run (blocks of a short last axis) are read as a window of QV_W from the
 * vector's first entry; a run whose entries repeat (per-axis along a short last axis, or over
 * a short axis) and number at most QV_W has them all in one vector (wloc). */
static int qd_win_init(qd_src *c, size_t j)
{
    size_t per, len, e, n = 0, last, cnt = 0;
    if (c->kdim > 1) {   /* a short last axis, every row with the same entries */
        if (c->row || c->blk < (size_t)-1 / 2 || c->kdim >= QV_W) return 0;
        cnt = c->kdim;
    } else if (c->row && !c->erow) {   /* per-axis: (j % row) / blk repeats */
        cnt = c->row / c->blk;
        if (cnt > QV_W) return 0;
    }
    per = qd_lcm(cnt ? (c->kdim > 1 ? c->kdim : c->row) : c->row ? c->row : c->blk, QV_W);
    if (per / QV_W > QD_WMAX) return 0;
    c->winc = cnt ? 0 : c->row ? per / c->row * c->erow : per / c->blk;
    c->wp = per / QV_W;
    c->wt = c->wcyc = 0;
    c->wloc = cnt > 0;
    last = qk_entry(c->blk, c->jend - 1, c->row, c->erow, c->kdim, 0, 0, &len);
    if (!cnt && last + 1 < c->ebase + QV_W) return 0;   /* fewer entries than a window: EXP */
    c->wlast = last;
    e = qk_entry(c->blk, j, c->row, c->erow, c->kdim, 0, 0, &len);
    size_t emax = 0;   /* wloc: the largest entry of the run, the last the arrays hold */
    for (size_t v = 0, b = 0; v < c->wp; v++) {
        for (size_t l = 0; l < QV_W; l++, n++) {
            if (c->kdim > 1) e = (j + n) % c->kdim;
            else if (n && --len == 0) e = qk_entry(c->blk, j + n, c->row, c->erow, 1, 0, 0, &len);
            if (l == 0) b = cnt ? 0 : e;   /* rising entries: from the first lane's on */
            c->u.w.idx[v * QV_W + l] = (int32_t)(e - b);
            if (j + n < c->jend && e > emax) emax = e;
        }
        c->u.w.base[v] = b;
    }
    if (cnt) {   /* entries 0 .. cnt - 1 in vectors (lanes past them: never picked) */
        float ls[QV_W], lr[QV_W], lf[QV_W];
        int32_t lz[QV_W];
        for (size_t k = 0; k < QV_W; k++) {
            size_t q = (k <= emax ? k : 0) - c->ebase;
            ls[k] = c->s[q];
            lr[k] = c->r ? c->r[q] : 1.0f;
            lf[k] = c->f ? c->f[q] : 0.0f;
            lz[k] = c->z ? c->z[q] : 0;
        }
        c->wls = qv_loadu_f(ls); c->wlr = qv_loadu_f(lr); c->wlf = qv_loadu_f(lf);
        c->wlz = qv_loadu_i(lz);
    }
    return 1;
}

/* Moves to absolute position j (the mode stays). */
static void qd_src_seek(qd_src *c, size_t j)
{
    size_t len;
    c->j = j;
    c->xend = j;   /* EXP: nothing expanded yet */
    if (c->mode == QD_KROW) {
        qd_krow_at(c, j / c->kdim * c->kdim);
    } else if (c->mode == QD_WIN) {
        if (!qd_win_init(c, j)) c->mode = QD_EXP;
    } else if (c->mode != QD_EXP) {
        c->e = qk_entry(c->blk, j, c->row, c->erow, 1, 0, 0, &len);
        c->segend = j + len;
        c->rowend = c->row ? (j / c->row + 1) * c->row : (size_t)-1;
        c->sega = c->mode == QD_SEG && len % QD_U == 0 && c->blk % QD_U == 0 &&
                  (c->row == 0 || c->row % c->blk % QD_U == 0);
        qd_seg_load(c);
    }
}

/* Starts at absolute position j for a body of m elements: picks the mode. */
static void qd_src_init(qd_src *c, size_t blk, size_t row, size_t erow, size_t kdim,
                        size_t ebase, size_t j, size_t m)
{
    size_t len, tail;
    c->blk = blk ? blk : 1;
    c->row = row;
    c->erow = erow;
    c->kdim = kdim > 1 ? kdim : 1;
    c->ebase = ebase;
    c->jend = j + m;
    tail = row ? row % c->blk : 0;
    if (kdim > 1) c->mode = kdim >= QV_W ? QD_KROW : QD_WIN;
    else if (qk_entry(c->blk, j, row, erow, 1, 0, 0, &len), len >= m) c->mode = QD_UNI;
    else if (c->blk >= QV_W && (tail == 0 || tail >= QV_W)) c->mode = QD_SEG;
    else c->mode = QD_WIN;
    qd_src_seek(c, j);
}

/* A chunk that crosses a segment or row boundary, or EXP: out of line, one copy for every
 * table entry of the file. */
QD_NOINLINE void qd_src_slow(qd_src *c, qd_pv *pv)
{
    size_t j = c->j - QD_U;
    if (c->mode == QD_SEG) {
        QD_UNROLL
        for (int v = 0; v < 4; v++, j += QV_W) {
            if (j + QV_W <= c->segend) {
                pv->s[v] = c->cs; pv->r[v] = c->cr; pv->f[v] = c->cf; pv->z[v] = c->cz;
                if (j + QV_W == c->segend) qd_seg_next(c);
            } else {   /* k lanes of this segment, the rest of the next */
                unsigned k = (unsigned)(c->segend - j);
                vf s = c->cs, r = c->cr, f = c->cf;
                vi z = c->cz;
                qd_seg_next(c);
                pv->s[v] = qv_blend_f(s, c->cs, k);
                pv->r[v] = qv_blend_f(r, c->cr, k);
                pv->f[v] = qv_blend_f(f, c->cf, k);
                pv->z[v] = qv_blend_i(z, c->cz, k);
            }
        }
    } else if (c->mode == QD_KROW) {
        QD_UNROLL
        for (int v = 0; v < 4; v++, j += QV_W) {
            size_t p = c->prow + (j - (c->kend - c->kdim)), q = p;
            unsigned n = QV_W;
            if (j + QV_W > c->kend) {
                /* the last n entries of this row (read as the row's last QV_W, which lie
                 * inside it: the arrays end with the run), then the next row's first */
                n = (unsigned)(c->kend - j);
                p = c->prow + c->kdim - QV_W;
                qd_krow_next(c);
                q = c->prow;
            }
            pv->s[v] = qv_splice_f(qv_loadu_f(c->s + p), qv_loadu_f(c->s + q), n);
            pv->r[v] = c->r ? qv_splice_f(qv_loadu_f(c->r + p), qv_loadu_f(c->r + q), n)
                            : qv_set1(1.0f);
            pv->f[v] = c->f ? qv_splice_f(qv_loadu_f(c->f + p), qv_loadu_f(c->f + q), n)
                            : qv_set1(0.0f);
            pv->z[v] = c->z ? qv_splice_i(qv_loadu_i(c->z + p), qv_loadu_i(c->z + q), n)
                            : qv_set1_i(0);
            if (n == QV_W && j + QV_W == c->kend) qd_krow_next(c);
        }
    } else if (c->mode == QD_WIN) {
        QD_UNROLL
        for (int v = 0; v < 4; v++) {
            vi idx = qv_loadu_i(c->u.w.idx + c->wt * QV_W);
            if (c->wloc) {
                pv->s[v] = qv_perm_f(c->wls, idx); pv->r[v] = qv_perm_f(c->wlr, idx);
                pv->f[v] = qv_perm_f(c->wlf, idx); pv->z[v] = qv_perm_i(c->wlz, idx);
            } else {   /* the window ends by the run's last entry at the latest */
                size_t b = c->u.w.base[c->wt] + c->wcyc * c->winc;
                if (b + QV_W - 1 > c->wlast) {
                    idx = qv_add_i(idx, qv_set1_i((int32_t)(b + QV_W - 1 - c->wlast)));
                    b = c->wlast + 1 - QV_W;
                }
                b -= c->ebase;
                pv->s[v] = qv_perm_f(qv_loadu_f(c->s + b), idx);
                pv->r[v] = c->r ? qv_perm_f(qv_loadu_f(c->r + b), idx) : qv_set1(1.0f);
                pv->f[v] = c->f ? qv_perm_f(qv_loadu_f(c->f + b), idx) : qv_set1(0.0f);
                pv->z[v] = c->z ? qv_perm_i(qv_loadu_i(c->z + b), idx) : qv_set1_i(0);
            }
            if (++c->wt == c->wp) { c->wt = 0; c->wcyc++; }
        }
    } else {
        if (j + QD_U > c->xend) {   /* EXP: chunks start on multiples of QD_U from the window */
            c->j = j;
            qd_exp_fill(c);
            c->j = j + QD_U;
        }
        size_t o = QD_EXPN - (c->xend - j);
        QD_UNROLL
        for (int v = 0; v < 4; v++, o += QV_W) {
            pv->s[v] = qv_loadu_f(c->u.x.s + o);
            pv->r[v] = qv_loadu_f(c->u.x.r + o);
            pv->f[v] = qv_loadu_f(c->u.x.f + o);
            pv->z[v] = qv_loadu_i(c->u.x.z + o);
        }
    }
}

/* The parameters of the chunk at c->j, then c->j moves past it. Inline: one entry for the
 * whole chunk, or a chunk inside one row of entries; the rest is qd_src_slow's. Returned by
 * value: a qd_pv whose address reached qd_src_slow would be reloaded from memory after
 * every store to y (a byte pointer may alias it). */
QD_INLINE qd_pv qd_src_next(qd_src *c, unsigned need)
{
    qd_pv pv;
    size_t j = c->j;
    c->j = j + QD_U;
    if (c->mode == QD_UNI || (c->mode == QD_SEG && j + QD_U < c->segend)) {
        vf s = c->cs, r = c->cr, f = c->cf;
        vi z = c->cz;
        QD_UNROLL
        for (int v = 0; v < 4; v++) {
            pv.s[v] = s; pv.r[v] = r; pv.f[v] = f; pv.z[v] = z;
        }
    } else if (c->mode == QD_KROW && j + QD_U < c->kend) {
        size_t p = c->prow + (j - (c->kend - c->kdim));
        QD_UNROLL
        for (int v = 0; v < 4; v++, p += QV_W) {
            pv.s[v] = qv_loadu_f(c->s + p);
            pv.r[v] = need & QD_R ? qv_loadu_f(c->r + p) : qv_set1(1.0f);
            pv.f[v] = need & QD_F && c->f ? qv_loadu_f(c->f + p) : qv_set1(0.0f);
            pv.z[v] = need & QD_Z && c->z ? qv_loadu_i(c->z + p) : qv_set1_i(0);
        }
    } else {
        qd_pv t;
        qd_src_slow(c, &t);
        pv = t;
    }
    return pv;
}

#endif
