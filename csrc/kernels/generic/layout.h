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
 *   QD_PER   entries that repeat with a period of P <= QD_EXPN - QD_U positions (per-axis
 *            along a last axis or over rows that short): the entries of P + QD_U positions
 *            expanded once per run into stack arrays, a chunk at offset o of the period reads
 *            them from o on (short rows, several per vector, cost no more than long ones);
 *   QD_WIN   rising entries (blocks of a short last axis, segments that do not fall on
 *            chunks) whose pattern repeats within QD_WMAX chunks, no chunk spanning more than
 *            QV_W entries: per chunk a window of QV_W consecutive entries, permuted per
 *            vector by the pattern's index;
 *   QD_KPER  rows of K < QV_W entries shared by segments of at least QV_W elements (blocks
 *            along an outer axis of a short inner size: entry base + j % K in a segment):
 *            the segment's K entries in registers, permuted per vector by its phase j % K;
 *   QD_VWIN  entries that rise by segments shorter than a vector (per-axis over an inner
 *            size that short on long rows, plain blocks that short, rows of a K-row each
 *            shorter than a vector): per vector a window of QV_W entries from its segment's
 *            first, permuted by its phase; a vector that crosses a wrapping row or would read
 *            past the arrays takes its entries one by one;
 *   QD_EXP   anything else: entries expanded per element, QD_EXPN at a time, into stack
 *            arrays.
 * Positions are absolute (j = pos + i); the state moves forward only, one chunk per call. */
#ifndef QSIMD_GENERIC_LAYOUT_H
#define QSIMD_GENERIC_LAYOUT_H

#define QD_U (4 * QV_W)
#define QD_EXPN 512   /* elements per expansion (a multiple of every QD_U) */

enum { QD_UNI, QD_SEG, QD_KROW, QD_PER, QD_WIN, QD_KPER, QD_VWIN, QD_EXP };
#define QD_WMAX 32   /* chunks of the longest pattern QD_WIN keeps */
/* parameter arrays a kernel reads: scale, reciprocal, integer zero point, float zero point */
enum { QD_S = 1, QD_R = 2, QD_Z = 4, QD_F = 8 };

typedef struct qd_pv {
    vf s[4], r[4], f[4];
    vi z[4];
} qd_pv;

/* The reciprocal form's bound on x for a scale s (driver.h): QD_RK s, exact. */
#define QD_XL(s) qv_mul(qv_set1(131072.0f), (s))
/* A vector the compiler must not see through (the layer's qv_opaque, where it has one): for
 * an entry broadcast per vector gcc would otherwise compute QD_XL on the scalar and broadcast
 * both it and s from registers (shuffle-port work per vector) instead of broadcasting s from
 * memory and multiplying the vector. */
#ifndef QV_OPAQUE
#define qv_opaque(v) (v)
#endif

/* SEG: a segment's entry, its end and the end of its row (absolute positions). */
typedef struct qd_seg {
    size_t e, segend, rowend;
} qd_seg;

typedef struct qd_src {
    int mode;
    int sega;                   /* SEG: every segment boundary of the body falls on a chunk */
    int segok;                  /* SEG may take the run (WIN's fallback) */
    const float *s, *r, *f;
    const int32_t *z;
    size_t blk, row, erow, kdim, ebase;
    size_t j;                   /* absolute position of the next chunk */
    qd_seg sg;                  /* SEG: the current segment */
    size_t kend, prow, rowbase, gleft, rleft;   /* KROW: end of the K-row, its entries */
    vf cs, cr, cf;              /* SEG: the current entry, broadcast */
    vi cz;
    size_t xend, jend;          /* EXP: end of the expanded window, of the body */
    /* WIN: chunk wt of a pattern of wp, whose windows start at base[wt] + wcb (wcb advancing
     * by winc per repetition); wlast: the last entry the run uses (relative); chunks that
     * start before wsafe have windows inside the arrays. PER: wp the period, wt the next
     * chunk's offset in it, winc QD_U % wp. KPER: sg the segment (e its K-row's first
     * entry), cs .. cz its entries, wt the phase j % K of c->j, winc QD_U % K, wlast the last
     * entry the arrays hold (relative), u.w.idx row p the lanes' (p + l) % K. VWIN: sg.e
     * the next vector's segment's first entry, wt its phase in its segment of winc elements,
     * sg.rowend its row's end, wlast as KPER's, u.w.idx row p the lanes' entries from sg.e,
     * u.w.base[p] the next vector's advance of sg.e. */
    size_t wp, wt, wcb, winc, wlast, wsafe;
    union {
        vf align;   /* (the arrays start on a vector) */
        struct { float s[QD_EXPN], r[QD_EXPN], f[QD_EXPN]; int32_t z[QD_EXPN]; } x;
        struct { size_t base[QD_WMAX]; int32_t idx[QD_WMAX * QD_U + QV_W]; } w;
    } u;
} qd_src;

QD_INLINE void qd_seg_load(qd_src *c)
{
    size_t e = c->sg.e - c->ebase;
    c->cs = qv_set1(c->s[e]);
    c->cr = qv_set1(c->r ? c->r[e] : 1.0f);
    c->cf = qv_set1(c->f ? c->f[e] : 0.0f);
    c->cz = qv_set1_i(c->z ? c->z[e] : 0);
}

/* The next segment: the next entry, or the first of the next row (loaded only when the
 * body goes on: the arrays end with the run). */
QD_INLINE void qd_seg_next(qd_src *c)
{
    size_t end = c->sg.segend;
    if (end == c->sg.rowend) {
        c->sg.e = (c->sg.rowend / c->row) * c->erow;
        c->sg.rowend += c->row;
    } else {
        c->sg.e++;
    }
    c->sg.segend = end + c->blk < c->sg.rowend ? end + c->blk : c->sg.rowend;
    if (end < c->jend) qd_seg_load(c);
}

/* KPER: the segment's K entries into lanes 0 .. K-1 of cs .. cz (the lanes after them are
 * never selected); through a stack copy where QV_W entries from the first would pass the
 * arrays' end. */
QD_NOINLINE void qd_kper_load(qd_src *c)
{
    size_t e = c->sg.e - c->ebase;
    if (e + QV_W - 1 <= c->wlast) {
        c->cs = qv_loadu_f(c->s + e);
        c->cr = c->r ? qv_loadu_f(c->r + e) : qv_set1(1.0f);
        c->cf = c->f ? qv_loadu_f(c->f + e) : qv_set1(0.0f);
        c->cz = c->z ? qv_loadu_i(c->z + e) : qv_set1_i(0);
        return;
    }
    union { vf align; struct { float s[QV_W], r[QV_W], f[QV_W]; int32_t z[QV_W]; } a; } b;
    for (size_t k = 0; k < QV_W; k++) {
        size_t t = e + (k < c->kdim ? k : 0);
        b.a.s[k] = c->s[t];
        b.a.r[k] = c->r ? c->r[t] : 1.0f;
        b.a.f[k] = c->f ? c->f[t] : 0.0f;
        b.a.z[k] = c->z ? c->z[t] : 0;
    }
    c->cs = qv_loadu_f(b.a.s); c->cr = qv_loadu_f(b.a.r);
    c->cf = qv_loadu_f(b.a.f); c->cz = qv_loadu_i(b.a.z);
}

/* KPER: the segment holding absolute position j (its K-row's entries loaded, the phase). */
static void qd_kper_at(qd_src *c, size_t j)
{
    size_t o = j % c->row, rs = j - o, ss = j - o % c->blk;
    c->sg.e = j / c->row * c->erow + o / c->blk * c->kdim;
    c->sg.rowend = rs + c->row;
    c->sg.segend = ss + c->blk < c->sg.rowend ? ss + c->blk : c->sg.rowend;
    c->wt = j % c->kdim;
    qd_kper_load(c);
}

/* KPER: the next segment (loaded only when the body goes on). */
static void qd_kper_next(qd_src *c)
{
    size_t end = c->sg.segend;
    if (end == c->sg.rowend) {
        c->sg.e = c->sg.rowend / c->row * c->erow;
        c->sg.rowend += c->row;
    } else {
        c->sg.e += c->kdim;
    }
    c->sg.segend = end + c->blk < c->sg.rowend ? end + c->blk : c->sg.rowend;
    c->wt = 0;
    if (end < c->jend) qd_kper_load(c);
}

/* KPER for a run from absolute j: the phases' lane patterns and the arrays' last entry
 * (kernels.h: they hold the whole K-rows the run touches). */
static void qd_kper_init(qd_src *c)
{
    size_t K = c->kdim, jl = c->jend - 1, o = jl % c->row;
    int32_t *idx = c->u.w.idx, *ext = idx + K * QD_U;   /* (K < QV_W rows, then room) */
    /* lane l of phase p's row is (p + l) % K: lanes p .. p + QD_U - 1 of one row of m % K,
     * copied by vectors */
    for (size_t m = 0, v = 0; m < QD_U + K; m++, v = v + 1 < K ? v + 1 : 0) ext[m] = (int32_t)v;
    for (size_t p = 0; p < K; p++)
        for (size_t l = 0; l < QD_U; l += QV_W)
            qv_storeu_i(idx + p * QD_U + l, qv_loadu_i(ext + p + l));
    c->wlast = jl / c->row * c->erow + o / c->blk * K + K - 1 - c->ebase;
    c->winc = QD_U % K;
}

/* VWIN: the vector at absolute j (the next): its segment's first entry, its phase in the
 * segment and its row's end. Segments of winc elements: blocks (kdim 1), or rows of a
 * K-row each (blocks along an outer axis longer than it, rows shorter than a vector), whose
 * entries follow on from row to row. */
static void qd_vwin_at(qd_src *c, size_t j)
{
    size_t o = c->row ? j % c->row : j;
    c->sg.e = (c->row ? j / c->row * c->erow : 0) + (c->kdim > 1 ? 0 : o / c->blk);
    c->wt = o % c->winc;
    c->sg.rowend = c->row && c->kdim == 1 ? j - o + c->row : (size_t)-1;
}

/* VWIN: the phases' lane patterns (lane QV_W of a row: the next vector's phase) and window
 * advances, the last entry the arrays hold (the run's last, or a row's last when per-axis
 * rows wrap inside the run). */
static void qd_vwin_init(qd_src *c, size_t j)
{
    size_t b = c->winc, K = c->kdim, jl = c->jend - 1, o = c->row ? jl % c->row : jl;
    for (size_t p = 0; p < b; p++) {
        /* lane l: (p + l) / b K + (p + l) % K, by counters (p < b): two divisions per lane
         * had cost more than the quantization of small calls (1x16x3x3 dequantized blocked
         * along H: 1.7 -> 1.0 us) */
        for (size_t l = 0, q = 0, rb = p, rk = p % K; l < QV_W; l++) {
            c->u.w.idx[p * QD_U + l] = (int32_t)(q * K + rk);
            if (++rb == b) { rb = 0; q++; }
            if (++rk == K) rk = 0;
        }
        c->u.w.idx[p * QD_U + QV_W] = (int32_t)((p + QV_W) % b);
        c->u.w.base[p] = (p + QV_W) / b * K;
    }
    c->wlast = (c->row ? jl / c->row * c->erow : 0) + (K > 1 ? K - 1 : o / b) - c->ebase;
    if (c->row && !c->erow && jl - o > j) c->wlast = (c->row - 1) / b - c->ebase;
}

/* VWIN: the next vector's parameters into lane slot v of pv, then on to the vector after. */
QD_INLINE void qd_vwin_vec(qd_src *c, qd_pv *pv, int v, size_t j)
{
    size_t e = c->sg.e - c->ebase, p = c->wt;
    if (c->sg.rowend - j >= QV_W && e + QV_W - 1 <= c->wlast) {
        vi idx = qv_loadu_i(c->u.w.idx + p * QD_U);
        size_t de = c->u.w.base[p];
        pv->s[v] = qv_perm_f(qv_loadu_f(c->s + e), idx);
        pv->r[v] = c->r ? qv_perm_f(qv_loadu_f(c->r + e), idx) : qv_set1(1.0f);
        pv->f[v] = c->f ? qv_perm_f(qv_loadu_f(c->f + e), idx) : qv_set1(0.0f);
        pv->z[v] = c->z ? qv_perm_i(qv_loadu_i(c->z + e), idx) : qv_set1_i(0);
        c->sg.e += de;
        c->wt = (size_t)c->u.w.idx[p * QD_U + QV_W];
        if (c->sg.rowend - j == QV_W) qd_vwin_at(c, j + QV_W);
        return;
    }
    union { vf align; struct { float s[QV_W], r[QV_W], f[QV_W]; int32_t z[QV_W]; } a; } b;
    for (size_t l = 0; l < QV_W; l++) {   /* lane by lane, by counters */
        e = c->sg.e - c->ebase + c->wt % c->kdim;
        b.a.s[l] = c->s[e];
        b.a.r[l] = c->r ? c->r[e] : 1.0f;
        b.a.f[l] = c->f ? c->f[e] : 0.0f;
        b.a.z[l] = c->z ? c->z[e] : 0;
        if (j + l + 1 == c->sg.rowend) qd_vwin_at(c, j + l + 1);
        else if (++c->wt == c->winc) { c->wt = 0; c->sg.e += c->kdim; }
    }
    pv->s[v] = qv_loadu_f(b.a.s); pv->r[v] = qv_loadu_f(b.a.r);
    pv->f[v] = qv_loadu_f(b.a.f); pv->z[v] = qv_loadu_i(b.a.z);
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

/* Entry e's parameters into slot k of the stack arrays. */
QD_INLINE void qd_put(qd_src *c, size_t k, size_t e)
{
    c->u.x.s[k] = c->s[e];
    c->u.x.r[k] = c->r ? c->r[e] : 1.0f;
    c->u.x.f[k] = c->f ? c->f[e] : 0.0f;
    c->u.x.z[k] = c->z ? c->z[e] : 0;
}

/* Entries e .. e + n - 1 into slots k .. k + n - 1 of the stack arrays. */
static void qd_put_n(qd_src *c, size_t k, size_t e, size_t n)
{
    size_t i = 0;
    for (; n - i >= QV_W; i += QV_W) {
        qv_storeu_f(c->u.x.s + k + i, qv_loadu_f(c->s + e + i));
        qv_storeu_f(c->u.x.r + k + i, c->r ? qv_loadu_f(c->r + e + i) : qv_set1(1.0f));
        qv_storeu_f(c->u.x.f + k + i, c->f ? qv_loadu_f(c->f + e + i) : qv_set1(0.0f));
        qv_storeu_i(c->u.x.z + k + i, c->z ? qv_loadu_i(c->z + e + i) : qv_set1_i(0));
    }
    for (; i < n; i++) qd_put(c, k + i, e + i);
}

/* Entries of [c->j, c->j + QD_EXPN) into the stack arrays: the first by qk_entry's formula,
 * the others by counters (a division per element cost 50x the kernel: blocks along an axis
 * of 12 rows of 12 went at 100 us for 12K elements). */
QD_NOINLINE void qd_exp_fill(qd_src *c)
{
    size_t n = c->jend - c->j < QD_EXPN ? c->jend - c->j : QD_EXPN, j = c->j;
    size_t K = c->kdim, b = c->blk, row = c->row;
    size_t o = row ? j % row : j, in = o % b, k = j % K;   /* in the row, block, K-row */
    size_t rb = (row ? j / row * c->erow : 0) - c->ebase, bo = o / b * K;   /* row's, block's */
    for (size_t t = 0; t < n; t++) {
        qd_put(c, t, rb + bo + k);
        if (++k == K) k = 0;
        if (++in == b) { in = 0; bo += K; }
        if (++o == row) { o = in = k = bo = 0; rb += c->erow; }
    }
    c->xend = c->j + QD_EXPN;
}

static size_t qd_lcm(size_t a, size_t b)
{
    size_t x = a, y = b;
    while (y) { size_t t = x % y; x = y; y = t; }
    return a / x * b;
}

/* PER: the entries of offsets 0 .. P + QD_U - 1 of the period from the body's start j on
 * (offsets the body does not reach take its first entry: the arrays may hold no other). The
 * period is taken as a whole number of vectors when that fits (56 as 112), so that a body
 * that starts on a vector reads its entries with aligned loads (a load split over two cache
 * lines counts twice, and a chunk loads three times as many entries as inputs). */
static int qd_per_init(qd_src *c, size_t j)
{
    size_t P = c->kdim > 1 ? c->kdim : c->row, len, e0, k, pw = qd_lcm(P, QV_W);
    if (pw + QD_U <= QD_EXPN) P = pw;
    if (P + QD_U > QD_EXPN) return 0;
    c->wp = P;
    c->winc = QD_U % P;
    if (c->kdim > 1) {
        /* entry j % K (no rows): slot k, of the absolute positions k mod P, takes entry k % K
         * (K divides P); the arrays hold that whole row of K entries (kernels.h), so ebase is
         * 0. Copied by vectors: position by position this had doubled a call of one row of
         * 256 elements (1.5 -> 0.8 us per-axis along the last axis) */
        for (k = 0; k < P + QD_U; k += c->kdim)
            qd_put_n(c, k, 0, P + QD_U - k < c->kdim ? P + QD_U - k : c->kdim);
        return 1;
    }
    e0 = qk_entry(c->blk, j, c->row, c->erow, 1, c->ebase, 0, &len);
    /* (rows of one-entry blocks: slots, entries and segments by counters: a division per
     * segment of a short block cost more than the run: (4, 64, 4) per-axis 1.5 -> 0.7 us) */
    size_t slot = j % P, o = j % c->row, e = e0;
    for (size_t t = 0; t < P; t += len) {
        if (t) {   /* (no entry offset per row) */
            o += len;
            if (o == c->row) o = 0;
            e = o ? e + 1 : 0 - c->ebase;
            len = c->row - o < c->blk ? c->row - o : c->blk;
        }
        /* (the segment's entry read once: the stores below may alias the arrays) */
        size_t lim = len < P - t ? len : P - t, in = j + t < c->jend ? c->jend - j - t : 0;
        size_t eo = in ? e : e0;
        float sv = c->s[eo], rv = c->r ? c->r[eo] : 1.0f, fv = c->f ? c->f[eo] : 0.0f;
        int32_t zv = c->z ? c->z[eo] : 0;
        if (in >= lim && slot >= j % P && slot + lim <= P) {
            /* by vectors: lanes past the segment land on slots still to be written, or on
             * those after P that the copy below rewrites (the setup had been a quarter of a
             * call of 1K elements per-axis over rows of 4) */
            for (size_t l = 0; l < lim; l += QV_W) {
                qv_storeu_f(c->u.x.s + slot + l, qv_set1(sv));
                qv_storeu_f(c->u.x.r + slot + l, qv_set1(rv));
                qv_storeu_f(c->u.x.f + slot + l, qv_set1(fv));
                qv_storeu_i(c->u.x.z + slot + l, qv_set1_i(zv));
            }
            slot = slot + lim < P ? slot + lim : 0;
            continue;
        }
        for (size_t l = 0; l < lim; l++) {
            if (l == in) {   /* past the run's end: its first entry */
                sv = c->s[e0]; rv = c->r ? c->r[e0] : 1.0f;
                fv = c->f ? c->f[e0] : 0.0f; zv = c->z ? c->z[e0] : 0;
            }
            c->u.x.s[slot] = sv; c->u.x.r[slot] = rv; c->u.x.f[slot] = fv; c->u.x.z[slot] = zv;
            slot = slot + 1 < P ? slot + 1 : 0;
        }
    }
    k = P;
    if (P >= QV_W)   /* (vectors QV_W apart or more: none reads what another writes) */
        for (; k < P + QD_U; k += QV_W) {
            qv_storeu_f(c->u.x.s + k, qv_loadu_f(c->u.x.s + k - P));
            qv_storeu_f(c->u.x.r + k, qv_loadu_f(c->u.x.r + k - P));
            qv_storeu_f(c->u.x.f + k, qv_loadu_f(c->u.x.f + k - P));
            qv_storeu_i(c->u.x.z + k, qv_loadu_i(c->u.x.z + k - P));
        }
    for (; k < P + QD_U; k++) {
        c->u.x.s[k] = c->u.x.s[k - P]; c->u.x.r[k] = c->u.x.r[k - P];
        c->u.x.f[k] = c->u.x.f[k - P]; c->u.x.z[k] = c->u.x.z[k - P];
    }
    return 1;
}

/* WIN's pattern from absolute position j on; 0 when the layout has none that fits. Entries
 * rise along the run (blocks of a short last axis or short blocks: entry (j / row) erow +
 * (j % row) / blk) and are read as a window of QV_W from each chunk's first entry on. */
static int qd_win_init(qd_src *c, size_t j)
{
    size_t per, len, e, e0, n = 0, eu, last;
    if (c->kdim > 1 || (c->row && !c->erow)) return 0;
    per = qd_lcm(c->row ? c->row : c->blk, QD_U);
    if (per / QD_U > QD_WMAX) return 0;
    c->winc = c->row ? per / c->row * c->erow : per / c->blk;
    c->wp = per / QD_U;
    c->wt = 0;
    last = qk_entry(c->blk, c->jend - 1, c->row, c->erow, 1, 0, 0, &len);
    if (last + 1 < c->ebase + QV_W) return 0;   /* fewer entries than a window: EXP */
    c->wlast = last - c->ebase;
    /* the first position whose chunk's window would pass wlast */
    eu = last + 2 - QV_W;
    c->wsafe = c->row ? eu / c->erow * c->row + eu % c->erow * c->blk : eu * c->blk;
    int32_t *idx = c->u.w.idx;
    e0 = e = qk_entry(c->blk, j, c->row, c->erow, 1, 0, 0, &len);
    size_t send = j + len, rend = c->row ? (j / c->row + 1) * c->row : (size_t)-1;
    size_t enext = c->row ? (j / c->row + 1) * c->erow : 0;   /* the next row's first entry */
    while (n < per) {   /* the entries of the pattern's positions from j on, segment by segment */
        int32_t v = (int32_t)(e - e0);
        /* (by vectors: lanes past the segment are overwritten by the next one, or fall in
         * the QV_W lanes of room after the pattern) */
        for (size_t k = n, end = send - j < per ? send - j : per; k < end; k += QV_W)
            qv_storeu_i(idx + k, qv_set1_i(v));
        n = send - j;
        if (send == rend) { e = enext; enext += c->erow; rend += c->row; }
        else e++;
        send = send + c->blk < rend ? send + c->blk : rend;
    }
    c->wcb = e0 - c->ebase;
    for (size_t t = 0; t < c->wp; t++) {   /* then relative to each chunk's first */
        int32_t *ci = idx + t * QD_U, b = ci[0];
        c->u.w.base[t] = (size_t)b;
        if (ci[QD_U - 1] - b >= QV_W) return 0;   /* a chunk over more entries (they rise) */
        for (size_t l = 0; l < QD_U; l += QV_W)
            qv_storeu_i(ci + l, qv_sub_i(qv_loadu_i(ci + l), qv_set1_i(b)));
    }
    return 1;
}

/* Moves to absolute position j (the mode stays; WIN's pattern was built for the run's start:
 * a later chunk, the body's last, is expanded). */
static void qd_src_seek(qd_src *c, size_t j)
{
    size_t len;
    c->j = j;
    c->xend = j;   /* EXP: nothing expanded yet */
    if (c->mode == QD_KROW) {
        qd_krow_at(c, j / c->kdim * c->kdim);
    } else if (c->mode == QD_PER) {
        c->wt = j % c->wp;
    } else if (c->mode == QD_WIN) {
        c->mode = QD_EXP;
    } else if (c->mode == QD_KPER) {
        qd_kper_at(c, j);
    } else if (c->mode == QD_VWIN) {
        qd_vwin_at(c, j);
    }
    if (c->mode == QD_UNI || c->mode == QD_SEG) {
        c->sg.e = qk_entry(c->blk, j, c->row, c->erow, 1, 0, 0, &len);
        c->sg.segend = j + len;
        c->sg.rowend = c->row ? (j / c->row + 1) * c->row : (size_t)-1;
        c->sega = c->mode == QD_SEG && len % QD_U == 0 && c->blk % QD_U == 0 &&
                  (c->row == 0 || c->row % c->blk % QD_U == 0);
        qd_seg_load(c);
    }
}

/* Starts at absolute position j for a body of m elements: picks the mode. Entries that repeat
 * along short rows take PER; segments that do not fall on chunks and are shorter than a few
 * chunks take WIN, else SEG when every segment fills a vector. */
static void qd_src_init(qd_src *c, size_t blk, size_t row, size_t erow, size_t kdim,
                        size_t ebase, size_t j, size_t m)
{
    size_t len, tail;
    c->sega = 0;   /* (only qd_src_seek sets it, which WIN's start skips; qd_body reads it) */
    c->blk = blk ? blk : 1;
    c->row = row;
    c->erow = erow;
    c->kdim = kdim > 1 ? kdim : 1;
    c->ebase = ebase;
    c->jend = j + m;
    tail = row ? row % c->blk : 0;
    c->segok = kdim <= 1 && c->blk >= QV_W && (tail == 0 || tail >= QV_W);
    if (qk_entry(c->blk, j, row, erow, kdim, 0, 0, &len), kdim <= 1 && len >= m) c->mode = QD_UNI;
    else if (((kdim > 1 && !row) || (kdim <= 1 && row && !erow && c->blk % QD_U)) &&
             qd_per_init(c, j)) c->mode = QD_PER;
    else if (kdim > 1 && kdim < QV_W && row && c->blk >= QV_W && (tail == 0 || tail >= QV_W))
        { c->mode = QD_KPER; qd_kper_init(c); }
    else if (kdim > 1 && row && row < QV_W && c->blk >= row && erow == kdim &&
             (row + QV_W - 2) / row * kdim + kdim <= QV_W) {
        c->mode = QD_VWIN;   /* (rows shorter than a vector, one block each) */
        c->winc = row;
        qd_vwin_init(c, j);
    } else if (kdim > 1) c->mode = kdim >= QV_W ? QD_KROW : QD_EXP;
    else if (c->segok && ((c->blk % QD_U == 0 && tail % QD_U == 0) || c->blk >= 4 * QD_U))
        c->mode = QD_SEG;
    else if (qd_win_init(c, j)) { c->mode = QD_WIN; c->j = j; return; }
    else if (!c->segok && c->blk < QV_W && (!row || row >= QD_U)) {
        c->mode = QD_VWIN;
        c->winc = c->blk;
        qd_vwin_init(c, j);
    } else c->mode = c->segok ? QD_SEG : QD_EXP;
    qd_src_seek(c, j);
}
/* 4 consecutive vectors of entries (per element) from e on. */
QD_INLINE qd_pv qd_run_pv(const float *sp, const float *rp, const float *fp, const int32_t *zp,
                          size_t e, unsigned need)
{
    qd_pv pv;
    QD_UNROLL
    for (int v = 0; v < 4; v++) {
        size_t o = e + (size_t)v * QV_W;
        pv.s[v] = qv_loadu_f(sp + o);
        pv.r[v] = need & QD_R ? qv_loadu_f(rp + o) : qv_set1(1.0f);
        pv.f[v] = need & QD_F && fp ? qv_loadu_f(fp + o) : qv_set1(0.0f);
        pv.z[v] = need & QD_Z && zp ? qv_loadu_i(zp + o) : qv_set1_i(0);
    }
    return pv;
}

/* The same parameters for a chunk's 4 vectors: entry e broadcast, or with ld QV_W entries
 * from e on (a column of a tile's rows). */
QD_INLINE qd_pv qd_ent_pv(const float *sp, const float *rp, const float *fp, const int32_t *zp,
                          size_t e, int ld, unsigned need)
{
    qd_pv pv;
    vf s = ld ? qv_loadu_f(sp + e) : qv_set1(sp[e]);
    vf r = !(need & QD_R) ? qv_set1(1.0f) : ld ? qv_loadu_f(rp + e) : qv_set1(rp[e]);
    vf f = !(need & QD_F) || !fp ? qv_set1(0.0f) : ld ? qv_loadu_f(fp + e) : qv_set1(fp[e]);
    vi z = !(need & QD_Z) || !zp ? qv_set1_i(0) : ld ? qv_loadu_i(zp + e) : qv_set1_i(zp[e]);
    QD_UNROLL
    for (int v = 0; v < 4; v++) {
        pv.s[v] = s; pv.r[v] = r; pv.f[v] = f; pv.z[v] = z;
    }
    return pv;
}

/* The parameters of a stretch of chunks that share one entry: the segment's, broadcast. */
QD_INLINE qd_pv qd_const_pv(const qd_src *c)
{
    qd_pv pv;
    QD_UNROLL
    for (int v = 0; v < 4; v++) {
        pv.s[v] = c->cs; pv.r[v] = c->cr; pv.f[v] = c->cf; pv.z[v] = c->cz;
    }
    return pv;
}

/* WIN: the chunk's parameters, its window (with clamp, moved back to end by the run's last
 * entry: the arrays end there) permuted per vector; then the pattern moves on. */
QD_INLINE qd_pv qd_win_pv(qd_src *c, unsigned need, int clamp)
{
    qd_pv pv;
    const int32_t *ip = c->u.w.idx + c->wt * QD_U;
    size_t b = c->u.w.base[c->wt] + c->wcb;
    vi sh = qv_set1_i(0);
    if (clamp && b + QV_W - 1 > c->wlast) {
        sh = qv_set1_i((int32_t)(b + QV_W - 1 - c->wlast));
        b = c->wlast + 1 - QV_W;
    }
    if (++c->wt == c->wp) { c->wt = 0; c->wcb += c->winc; }
    vf s = qv_loadu_f(c->s + b), r = need & QD_R && c->r ? qv_loadu_f(c->r + b) : qv_set1(1.0f);
    vf f = need & QD_F && c->f ? qv_loadu_f(c->f + b) : qv_set1(0.0f);
    vi z = need & QD_Z && c->z ? qv_loadu_i(c->z + b) : qv_set1_i(0);
    QD_UNROLL
    for (int v = 0; v < 4; v++) {
        vi idx = qv_loadu_i(ip + v * QV_W);
        if (clamp) idx = qv_add_i(idx, sh);
        pv.s[v] = qv_perm_f(s, idx);
        pv.r[v] = need & QD_R ? qv_perm_f(r, idx) : r;
        pv.f[v] = need & QD_F ? qv_perm_f(f, idx) : f;
        pv.z[v] = need & QD_Z ? qv_perm_i(z, idx) : z;
    }
    return pv;
}

/* KPER: QV_W lanes of the segment's entries, by the pattern at ip (phase p's lanes from
 * c->u.w.idx + p QD_U on). */
QD_INLINE void qd_kper_vec(const qd_src *c, qd_pv *pv, int v, const int32_t *ip, unsigned need)
{
    vi idx = qv_loadu_i(ip);
    pv->s[v] = qv_perm_f(c->cs, idx);
    pv->r[v] = need & QD_R ? qv_perm_f(c->cr, idx) : qv_set1(1.0f);
    pv->f[v] = need & QD_F ? qv_perm_f(c->cf, idx) : qv_set1(0.0f);
    pv->z[v] = need & QD_Z ? qv_perm_i(c->cz, idx) : qv_set1_i(0);
}

/* KPER: a chunk inside the segment (its 4 vectors' lanes are row wt of the patterns). */
QD_INLINE qd_pv qd_kper_pv(qd_src *c, unsigned need)
{
    qd_pv pv;
    const int32_t *ip = c->u.w.idx + c->wt * QD_U;
    QD_UNROLL
    for (int v = 0; v < 4; v++) qd_kper_vec(c, &pv, v, ip + v * QV_W, need);
    c->wt = c->wt + c->winc < c->kdim ? c->wt + c->winc : c->wt + c->winc - c->kdim;
    return pv;
}

/* PER: the chunk at offset wt of the period. */
QD_INLINE qd_pv qd_per_pv(qd_src *c, unsigned need)
{
    size_t o = c->wt;
    c->wt = o + c->winc < c->wp ? o + c->winc : o + c->winc - c->wp;
    return qd_run_pv(c->u.x.s, c->u.x.r, c->u.x.f, c->u.x.z, o, need);
}

/* A chunk that crosses a segment or row boundary, PER, WIN, or EXP: out of line, one copy for every
 * table entry of the file. */
QD_NOINLINE void qd_src_slow(qd_src *c, qd_pv *pv)
{
    size_t j = c->j - QD_U;
    if (c->mode == QD_SEG) {
        QD_UNROLL
        for (int v = 0; v < 4; v++, j += QV_W) {
            if (j + QV_W <= c->sg.segend) {
                pv->s[v] = c->cs; pv->r[v] = c->cr; pv->f[v] = c->cf; pv->z[v] = c->cz;
                if (j + QV_W == c->sg.segend) qd_seg_next(c);
            } else {   /* k lanes of this segment, the rest of the next */
                unsigned k = (unsigned)(c->sg.segend - j);
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
    } else if (c->mode == QD_KPER) {
        /* by vector: one that crosses into the next segment blends its lanes (segments are
         * at least QV_W long), whose phase starts at 0 there */
        size_t K = c->kdim, w = QV_W % K;
        for (int v = 0; v < 4; v++, j += QV_W) {
            size_t p = c->wt;
            qd_kper_vec(c, pv, v, c->u.w.idx + p * QD_U, QD_S | QD_R | QD_F | QD_Z);
            if (j + QV_W < c->sg.segend) {
                c->wt = p + w < K ? p + w : p + w - K;
            } else if (j + QV_W == c->sg.segend) {
                qd_kper_next(c);
            } else {
                unsigned k = (unsigned)(c->sg.segend - j);
                qd_pv t;
                qd_kper_next(c);
                p = (K - k % K) % K;
                qd_kper_vec(c, &t, 0, c->u.w.idx + p * QD_U, QD_S | QD_R | QD_F | QD_Z);
                pv->s[v] = qv_blend_f(pv->s[v], t.s[0], k);
                pv->r[v] = qv_blend_f(pv->r[v], t.r[0], k);
                pv->f[v] = qv_blend_f(pv->f[v], t.f[0], k);
                pv->z[v] = qv_blend_i(pv->z[v], t.z[0], k);
                c->wt = (p + w) % K;
            }
        }
    } else if (c->mode == QD_VWIN) {
        for (int v = 0; v < 4; v++, j += QV_W) qd_vwin_vec(c, pv, v, j);
    } else if (c->mode == QD_WIN) {
        *pv = qd_win_pv(c, QD_S | QD_R | QD_F | QD_Z, 1);
    } else if (c->mode == QD_PER) {
        *pv = qd_per_pv(c, QD_S | QD_R | QD_F | QD_Z);
    } else {
        if (j + QD_U > c->xend) {   /* EXP: chunks start on multiples of QD_U from the window */
            c->j = j;
            qd_exp_fill(c);
            c->j = j + QD_U;
        }
        *pv = qd_run_pv(c->u.x.s, c->u.x.r, c->u.x.f, c->u.x.z, QD_EXPN - (c->xend - j),
                        QD_S | QD_R | QD_F | QD_Z);
    }
}

/* The parameters of the chunk at c->j, then c->j moves past it. Inline: one entry for the
 * whole chunk, or a chunk inside one row of entries, and with fast (the table entries and
 * layers that pay for the code, as for block runs) PER and WIN; the rest is qd_src_slow's. Returned by
 * value: a qd_pv whose address reached qd_src_slow would be reloaded from memory after
 * every store to y (a byte pointer may alias it). */
QD_INLINE qd_pv qd_src_next(qd_src *c, unsigned need, int fast)
{
    qd_pv pv;
    size_t j = c->j;
    c->j = j + QD_U;
    if (c->mode == QD_UNI || (c->mode == QD_SEG && j + QD_U < c->sg.segend)) {
        vf s = c->cs, r = c->cr, f = c->cf;
        vi z = c->cz;
        QD_UNROLL
        for (int v = 0; v < 4; v++) {
            pv.s[v] = s; pv.r[v] = r; pv.f[v] = f; pv.z[v] = z;
        }
    } else if (c->mode == QD_KROW && j + QD_U < c->kend) {
        pv = qd_run_pv(c->s, c->r, c->f, c->z, c->prow + (j - (c->kend - c->kdim)), need);
    } else if (fast && c->mode == QD_PER) {
        pv = qd_per_pv(c, need);
    } else if (fast && c->mode == QD_WIN && j < c->wsafe) {
        pv = qd_win_pv(c, need, 0);
    } else if (fast && c->mode == QD_KPER && j + QD_U < c->sg.segend) {
        pv = qd_kper_pv(c, need);
    } else {
        qd_pv t;
        qd_src_slow(c, &t);
        pv = t;
    }
    return pv;
}

#endif
