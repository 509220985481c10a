/* Preprocessing chains fused into a prepared QuantizeLinear.
 *
 * Two ways to run, with the same results:
 * - tables: for integer inputs of 8 or 16 bits every input value maps to one output code per
 *   channel, so the chain and the quantization are evaluated once on all 256 / 65536 values
 *   (with qsimd_quantize_linear itself: exact by construction) and a run is a lookup fused
 *   with the transpose;
 * - float: the chain computed in float32 (this file is compiled without floating-point
 *   contraction, as the whole tree, so each operation rounds once), one piece of the
 *   permuted tensor at a time into a scratch buffer, then qsimd_quantize_linear on the piece.
 * Chain objects are read-only after qs_chain_make except for the 16-bit tables, which are
 * built on first use under qs_lazy_lock. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "chain.h"
#include "../kernels/kernels.h"
#if defined(QSIMD_HAVE_NEON)
/* the table walk below takes NEON's frame path when NEON is the active instruction set */
#include "chain_neon.h"
#define CHAIN_NEON 1
#define CHAIN_FRAME3(g, jc, f, tab, x, y)                                                   \
    (strcmp(qsimd_get_isa(), "neon") == 0 && qs_chain_frame3_neon(g, jc, f, tab, x, y))
#endif
#include "chain_impl.h"
#if defined(QSIMD_HAVE_X86) && !defined(QSIMD_NO_AVX2)
#include "chain_avx2.h"
#define CHAIN_AVX2 1
#endif

#define PIECE_ELEMS ((size_t)16384)           /* float32 scratch per piece: 64 KB */
#define TABLE_MAX_BYTES ((size_t)16 << 20)    /* per input type */

enum { T_U8, T_I8, T_U16, T_I16, T_N };

struct qs_chain {
    qs_chain_q q;
    int n_ops;
    chain_op ops[64];
    int64_t chans;            /* the per-channel constants' count (0: all scalars) */
    int64_t pre_axis;
    int perm_len;
    int64_t perm[QSIMD_MAX_DIMS];
    size_t ns;                /* scale entries */
    int tables;               /* the output allows tables */
    int64_t tchans;           /* tables' channels */
    size_t esize;             /* bytes per output code in a table */
    unsigned char *table[T_N];
    int table_tried[T_N];
    chain_affine *line[2];    /* the 8-bit tables' lines (T_U8, T_I8), per channel; NULL: none */
    int fused;                /* fq holds the quantization for the fused float frame path */
    chain_fq fq;
    float *values;
};

static int table_kind(int32_t t)
{
    switch (t) {
    case QSIMD_UINT8: return T_U8;
    case QSIMD_INT8: return T_I8;
    case QSIMD_UINT16: return T_U16;
    case QSIMD_INT16: return T_I16;
    default: return -1;
    }
}

/* One prepared entry (scale or zero point) as a 0-d tensor. */
static qsimd_tensor entry_of(const qsimd_tensor *t, size_t e)
{
    qsimd_tensor r = *t;
    r.data = (char *)t->data + e * qs_nbytes(t->dtype, 0, 1);
    r.ndim = 0;
    r.shape = NULL;
    r.packed = 0;
    return r;
}

/* The table of input type k: tchans rows of 2^bits codes, indexed by the input's bits. */
static unsigned char *build_table(const qs_chain *c, int k)
{
    size_t nv = k <= T_I8 ? 256 : 65536;
    if ((size_t)c->tchans * nv * c->esize > TABLE_MAX_BYTES) return NULL;
    unsigned char *tab = (unsigned char *)malloc((size_t)c->tchans * nv * c->esize);
    float *t = (float *)malloc(nv * sizeof(float));
    if (!tab || !t) { free(tab); free(t); return NULL; }
    int64_t shape = (int64_t)nv;
    for (int64_t ch = 0; ch < c->tchans; ch++) {
        for (size_t v = 0; v < nv; v++) {
            switch (k) {
            case T_U8: t[v] = (float)v; break;
            case T_I8: t[v] = (float)(int)(v < 128 ? (int)v : (int)v - 256); break;
            case T_U16: t[v] = (float)v; break;
            default: t[v] = (float)(v < 32768 ? (long)v : (long)v - 65536); break;
            }
        }
        for (int i = 0; i < c->n_ops; i++) {
            const chain_op *op = &c->ops[i];
            apply_scalar(op->kind, t, nv, op->v[op->count == 1 ? 0 : ch]);
        }
        size_t e = c->ns == 1 ? 0 : (size_t)ch;
        qsimd_tensor s = entry_of(c->q.scale, e), z, x, y;
        if (c->q.zp) z = entry_of(c->q.zp, e);
        memset(&x, 0, sizeof x);
        x.data = t; x.dtype = QSIMD_FLOAT; x.ndim = 1; x.shape = &shape;
        y = x;
        y.data = tab + (size_t)ch * nv * c->esize;
        y.dtype = c->q.y_dtype;
        qsimd_quantize_options o = c->q.opt;
        o.block_size = 0;
        o.num_threads = 1;
        if (qsimd_quantize_linear(&x, &s, c->q.zp ? &z : NULL, &o, &y, NULL) != QSIMD_OK) {
            /* the float path reports the same error on the run */
            free(tab); free(t);
            return NULL;
        }
    }
    free(t);
    return tab;
}

#if defined(CHAIN_AVX2) || defined(CHAIN_NEON)   /* the vector loops that use lines */
#define CHAIN_LINES 1
/* floor(w / 2^k) */
static int64_t floor_shift(int64_t w, int k)
{
    int64_t d = (int64_t)1 << k, q = w / d;
    return q - (w % d != 0 && w < 0);
}

/* For slope a (codes per 2^k input steps): the largest b a line may start from and the room
 * above it (< 0: no line of this slope). v's codes at the range's ends only bound one way:
 * the packs saturate. */
static int64_t line_room(const int64_t *v, int64_t qmin, int64_t qmax, int k, int64_t a,
                         int64_t *b)
{
    int64_t lo = INT64_MIN, hi = INT64_MAX, one = (int64_t)1 << k;
    for (int64_t u = 0; u < 256; u++) {
        if (v[u] > qmin && v[u] * one - a * u > lo) lo = v[u] * one - a * u;
        if (v[u] < qmax && (v[u] + 1) * one - a * u < hi) hi = (v[u] + 1) * one - a * u;
    }
    if (lo == INT64_MIN) lo = hi == INT64_MAX ? 0 : hi - 1;
    if (hi == INT64_MAX) hi = lo + 1;
    *b = lo;
    return hi - 1 - lo;
}

/* Table row t (256 one-byte codes) as a line f (chain_impl.h's chain_affine), if it is one:
 * the room is concave in the slope, so a ternary search finds the best slope for each
 * precision k, and every entry is then checked against what the vector loop computes. */
static void fit_line(const unsigned char *t, int x_signed, int y_signed, chain_affine *f)
{
    int64_t v[256], qmin = y_signed ? -128 : 0, qmax = y_signed ? 127 : 255, b;
    for (int u = 0; u < 256; u++) {
        int c = t[x_signed ? u ^ 0x80 : u];
        v[u] = y_signed && c > 127 ? c - 256 : c;
    }
    f->k = -1;
    f->x_signed = x_signed;
    f->y_signed = y_signed;
    /* the first and last unsaturated entries bound the slope: a in ((dv - 1) 2^k / du,
     * (dv + 1) 2^k / du) */
    int u1 = -1, u2 = -1;
    int64_t jmax = 0, jmin = 0;   /* the largest steps up and down between neighbours */
    for (int u = 1; u < 256; u++) {
        if (v[u] - v[u - 1] > jmax) jmax = v[u] - v[u - 1];
        if (v[u] - v[u - 1] < jmin) jmin = v[u] - v[u - 1];
    }
    if (jmax > 0 && jmin < 0) return;   /* not monotonic (NaN codes, say): no line */
    for (int u = 0; u < 256; u++)
        if (v[u] > qmin && v[u] < qmax) {
            if (u1 < 0) u1 = u;
            u2 = u;
        }
    for (int k = 15; k >= 0; k--) {
        int64_t lo = -32767, hi = 32767, one = (int64_t)1 << k;   /* a 16-bit multiplier */
        /* a step of j between neighbours needs a > (j - 1) 2^k (a < for steps down) */
        if (jmax > 1 && (jmax - 1) * one + 1 > lo) lo = (jmax - 1) * one + 1;
        if (jmin < -1 && (jmin + 1) * one - 1 < hi) hi = (jmin + 1) * one - 1;
        if (u2 > u1) {
            int64_t dv = v[u2] - v[u1], du = u2 - u1;
            int64_t l = ((dv - 1) * one) / du - 1, h = ((dv + 1) * one) / du + 1;
            if (l > lo) lo = l;
            if (h < hi) hi = h;
        }
        if (lo > hi) continue;   /* steeper than a 16-bit slope at this precision */
        while (hi - lo > 2) {
            int64_t m1 = lo + (hi - lo) / 3, m2 = hi - (hi - lo) / 3;
            if (line_room(v, qmin, qmax, k, m1, &b) < line_room(v, qmin, qmax, k, m2, &b))
                lo = m1 + 1;
            else
                hi = m2;
        }
        for (int64_t a = lo; a <= hi; a++) {
            if (line_room(v, qmin, qmax, k, a, &b) < 0) continue;
            int ok = 1;
            for (int64_t u = 0; ok && u < 256; u++) {
                int64_t w = a * u + b, q = floor_shift(w, k);
                ok = w >= INT32_MIN && w <= INT32_MAX &&
                     (q < qmin ? qmin : q > qmax ? qmax : q) == v[u];
            }
            if (ok) {
                f->a = (int32_t)a;
                f->b = (int32_t)b;
                f->k = k;
                return;
            }
        }
    }
}

/* The lines of the 8-bit tables of one-byte integer codes, where every channel has one. */
static chain_affine *fit_lines(const qs_chain *c, int k)
{
    int32_t yt = c->q.y_dtype;
    if (!c->table[k] || c->esize != 1 || (yt != QSIMD_INT8 && yt != QSIMD_UINT8)) return NULL;
    chain_affine *f = (chain_affine *)malloc((size_t)c->tchans * sizeof *f);
    if (!f) return NULL;   /* the tables do the work */
    for (int64_t ch = 0; ch < c->tchans; ch++)
        fit_line(c->table[k] + (size_t)ch * 256, k == T_I8, yt == QSIMD_INT8, &f[ch]);
    return f;
}
#endif

/* The quantization as the fused float path takes it (chain_fq), when it can: int8 / uint8
 * codes of float32 scales (quotient in float32), per tensor or three per-axis entries, each
 * positive and inside the exact reciprocal form's range. 0 otherwise. */
static int fuse_params(const qs_chain_q *q, size_t ns, int n_ops, chain_fq *f)
{
    int32_t yt = q->y_dtype;
    if ((yt != QSIMD_INT8 && yt != QSIMD_UINT8) || q->scale->dtype != QSIMD_FLOAT ||
        (q->opt.precision != 0 && q->opt.precision != QSIMD_FLOAT) || n_ops > CHAIN_FQ_OPS ||
        !(ns == 1 || (ns == 3 && q->scale->ndim == 1 && q->opt.block_size == 0)) ||
        (q->zp && q->zp->dtype != yt))
        return 0;
    for (int e = 0; e < 3; e++) {
        size_t k = ns == 1 ? 0 : (size_t)e;
        float s = ((const float *)q->scale->data)[k];
        if (!(s > 0.0f) || qk_recip(s) == 0.0f) return 0;
        f->s[e] = s;
        f->r[e] = qk_recip(s);
        f->z[e] = !q->zp ? 0 : yt == QSIMD_INT8 ? ((const int8_t *)q->zp->data)[k]
                                                : ((const uint8_t *)q->zp->data)[k];
    }
    f->y_signed = yt == QSIMD_INT8;
    return 1;
}

/* The fast form of the fused float path: channel e's chain and quotient as one line,
 * F = RN(x a + b), a = RN(alpha), b = RN(beta + zp), alpha x + beta the chain's and the
 * quotient's value in exact arithmetic. The defined code is clamp(rint(V)), V = q + zp with q
 * the float32 quotient of the float32 chain (the exact reciprocal form rounds to the same
 * integer). With u = 2^-24 and RN(z) = z (1 + d) + h, |d| <= u, |h| <= 2^-150:
 * - the n + 1 operations t_k = RN(t_{k-1} op c_k) against T_k = alpha_k x + beta_k:
 *   |t_k - T_k| <= E_k = g_k (1 + u) E_{k-1} + u |T_k| + 2^-150, g_k = 1 (add, sub), |c|
 *   (mul), 1 / |c| (div);
 * - |F - alpha x - beta - zp| <= u (|alpha x| + |b| + |F|) + 2^-150, a and b rounded.
 * Over every x (|T_k| <= |alpha_k x| + |beta_k|) the sum is some K1 |x| + K0; where F lies in
 * [qmin - 1, qmax + 1], x lies in an interval and the sum is at most D (|T_k| at its ends).
 * A lane within 1/2 - D of its integer there rounds as V does, with no tie. A lane clamped at
 * qmax, or rounded below qmin, is saturated on both sides: its distance to the range grows
 * with |alpha x| while the error grows at K1 / |alpha|, which the 2^-9 bound keeps far below 1.
 * No operation may overflow in that interval; beyond it, a chain that overflows to +-inf
 * keeps that sign (mul / div constants nonzero, every constant finite and within 2^64) when
 * later constants cannot pull the value back, G_k 2^127 >= 2 S_k + 2^20 (G_k the product of
 * the later factors, S_k the reach of the later added constants): V and F then saturate
 * alike. NaN x gives qmin on both sides. Returns 0 (the exact form only) when a condition
 * fails. */
static int fuse_line(const chain_op *ops, int n_ops, chain_fq *f)
{
    const double u = 0x1p-24, eta = 0x1p-150;
    double qmin = f->y_signed ? -128.0 : 0.0, qmax = f->y_signed ? 127.0 : 255.0;
    double fm = (qmax > -qmin ? qmax : -qmin) + 2, dmax = 0;
    for (int e = 0; e < 3; e++) {
        /* alpha_k, beta_k after each operation, its factor g_k and added constant k_k */
        double al = 1, be = 0, g[CHAIN_FQ_OPS + 1], k[CHAIN_FQ_OPS + 1];
        double ak[CHAIN_FQ_OPS + 1], bk[CHAIN_FQ_OPS + 1];
        for (int i = 0; i <= n_ops; i++) {
            int32_t kind = i < n_ops ? ops[i].kind : QSIMD_PRE_DIV;
            double c = i < n_ops ? ops[i].v[ops[i].count > 1 ? e : 0] : f->s[e], a = fabs(c);
            int scaling = kind == QSIMD_PRE_MUL || kind == QSIMD_PRE_DIV;
            if (scaling ? !(a >= 0x1p-64 && a <= 0x1p64) : !(a <= 0x1p64)) return 0;
            g[i] = kind == QSIMD_PRE_MUL ? a : kind == QSIMD_PRE_DIV ? 1 / a : 1;
            k[i] = scaling ? 0 : a;
            switch (kind) {
            case QSIMD_PRE_ADD: be += c; break;
            case QSIMD_PRE_SUB: be -= c; break;
            case QSIMD_PRE_MUL: al *= c; be *= c; break;
            default: al /= c; be /= c; break;
            }
            ak[i] = al;
            bk[i] = be;
        }
        double bz = be + f->z[e];
        if (!(fabs(al) >= 0x1p-100 && fabs(al) <= 0x1p100 && fabs(bz) <= 0x1p64)) return 0;
        /* x where F is in [qmin - 1, qmax + 1] (F within 1 of alpha x + beta + zp) */
        double x0 = (qmin - 2 - bz) / al, x1 = (qmax + 2 - bz) / al;
        double xlo = x0 < x1 ? x0 : x1, xhi = x0 < x1 ? x1 : x0, xb = fabs(xlo) > fabs(xhi) ?
                     fabs(xlo) : fabs(xhi);
        double P = 0, R = 0, E = 0;
        for (int i = 0; i <= n_ops; i++) {
            double lo = fabs(ak[i] * xlo + bk[i]), hi = fabs(ak[i] * xhi + bk[i]);
            if (!(fabs(ak[i]) * xb + fabs(bk[i]) <= 0x1p126)) return 0;   /* no overflow there */
            P = g[i] * (1 + u) * P + u * fabs(ak[i]);
            R = g[i] * (1 + u) * R + u * fabs(bk[i]) + eta;
            E = g[i] * (1 + u) * E + u * (lo > hi ? lo : hi) + eta;
        }
        double G = 1, S = 0;
        for (int i = n_ops; i >= 0; i--) {
            if (!(G * 0x1p127 >= 2 * S + 0x1p20)) return 0;
            S += k[i] * G;
            G *= g[i];
        }
        /* a and b from double values within 2^-50 of alpha and beta + zp: 1.01 u covers both */
        double ef = 1.01 * u * (fabs(al) * xb + fabs(bz)) + u * (fm + 1) + eta;
        double tri = (P + 2.02 * u * fabs(al)) * xb + R + 2.02 * u * fabs(bz) + 2 * eta;
        if (!(tri <= 0x1p-9)) return 0;
        double d = 1.01 * (E + ef);
        if (d > dmax) dmax = d;
        f->a[e] = (float)al;
        f->b[e] = (float)bz;
    }
    /* (F - rint F)^2 <= lim2 implies |F - rint F| <= 1/2 - D (the square rounds up by at most
     * one ulp, which 2^-20 covers) */
    double l = 0.5 - dmax;
    float l2 = (float)(l * l * (1 - 0x1p-20));
    if ((double)l2 > l * l * (1 - 0x1p-20)) l2 = nextafterf(l2, 0.0f);
    f->lim2 = l2;
    return 1;
}

int qs_chain_make(const qs_chain_q *q, const qsimd_pre_op *ops, int32_t n_ops,
                  int64_t pre_axis, const int64_t *perm, int32_t perm_len, qs_chain **out,
                  qsimd_error *err)
{
    *out = NULL;
    if (n_ops < 0 || n_ops > 64)
        return qs_fail(err, QSIMD_ERR_VALUE, "pre must have 0 to 64 operations, got %d",
                       (int)n_ops);
    if (n_ops > 0 && !ops) return qs_fail(err, QSIMD_ERR_VALUE, "pre is NULL");
    if (perm_len < 0 || perm_len > QSIMD_MAX_DIMS || (perm_len > 0 && !perm))
        return qs_fail(err, QSIMD_ERR_VALUE, "perm must have 0 to %d entries",
                       QSIMD_MAX_DIMS);
    int64_t chans = 0;
    size_t nvals = 0;
    for (int i = 0; i < n_ops; i++) {
        if (ops[i].kind < QSIMD_PRE_ADD || ops[i].kind > QSIMD_PRE_DIV)
            return qs_fail(err, QSIMD_ERR_VALUE, "pre[%d]: unknown operation %d (expected "
                           "add, sub, mul or div)", i, (int)ops[i].kind);
        if (ops[i].count < 1 || !ops[i].values)
            return qs_fail(err, QSIMD_ERR_VALUE, "pre[%d]: the constant must have at least "
                           "one value", i);
        if (ops[i].count > 1) {
            if (chans && ops[i].count != chans)
                return qs_fail(err, QSIMD_ERR_VALUE, "pre[%d]: a constant of %lld values, "
                               "but an earlier one has %lld (every per-channel constant runs "
                               "along pre_axis)", i, (long long)ops[i].count,
                               (long long)chans);
            chans = ops[i].count;
        }
        nvals += (size_t)ops[i].count;
    }
    unsigned seen = 0;
    for (int i = 0; i < perm_len; i++) {
        if (perm[i] < 0 || perm[i] >= perm_len || (seen >> perm[i] & 1u))
            return qs_fail(err, QSIMD_ERR_VALUE, "perm must be a permutation of 0..%d, got "
                           "%lld at position %d", perm_len - 1, (long long)perm[i], i);
        seen |= 1u << perm[i];
    }
    size_t ns;
    int rc = qs_count(q->scale, "scale", &ns, err);
    if (rc != QSIMD_OK) return rc;
    qs_chain *c = (qs_chain *)calloc(1, sizeof *c);
    if (!c) return qs_fail(err, QSIMD_ERR_NOMEM, "cannot allocate the chain");
    c->values = (float *)malloc((nvals ? nvals : 1) * sizeof(float));
    if (!c->values) {
        free(c);
        return qs_fail(err, QSIMD_ERR_NOMEM, "cannot allocate the chain's constants");
    }
    c->q = *q;
    c->n_ops = n_ops;
    size_t at = 0;
    for (int i = 0; i < n_ops; i++) {
        memcpy(c->values + at, ops[i].values, (size_t)ops[i].count * sizeof(float));
        c->ops[i].kind = ops[i].kind;
        c->ops[i].count = ops[i].count;
        c->ops[i].v = c->values + at;
        at += (size_t)ops[i].count;
    }
    c->chans = chans;
    c->pre_axis = pre_axis;
    c->perm_len = perm_len;
    for (int i = 0; i < perm_len; i++) c->perm[i] = perm[i];
    c->ns = ns;
    /* tables: one code per input value, so the output must be unpacked, and its parameters
     * per-tensor or per-axis (the channel axis must then be the constants' axis, checked on
     * each run against x's rank) */
    unsigned bits = qs_bits(q->y_dtype);
    int packed = bits < 8 && q->y_packed;
    c->esize = bits <= 8 ? 1 : bits / 8;
    c->tables = !packed && (ns == 1 || (q->opt.block_size == 0 && q->scale->ndim == 1)) &&
                (ns == 1 || !chans || (int64_t)ns == chans);
    c->tchans = ns > 1 ? (int64_t)ns : chans ? chans : 1;
    if (c->tables) {
        c->table[T_U8] = build_table(c, T_U8);
        c->table[T_I8] = build_table(c, T_I8);
        c->table_tried[T_U8] = c->table_tried[T_I8] = 1;
#ifdef CHAIN_LINES
        c->line[T_U8] = fit_lines(c, T_U8);
        c->line[T_I8] = fit_lines(c, T_I8);
#endif
    }
    /* (three channels: the constants are read for channels 0..2) */
    c->fused = (chans == 0 || chans == 3) && fuse_params(q, ns, n_ops, &c->fq);
    if (c->fused) c->fq.fast = fuse_line(c->ops, n_ops, &c->fq);
    *out = c;
    return QSIMD_OK;
}

void qs_chain_free(qs_chain *c)
{
    if (!c) return;
    for (int k = 0; k < T_N; k++) free(c->table[k]);
    free(c->line[T_U8]);
    free(c->line[T_I8]);
    free(c->values);
    free(c);
}

/* The AVX2 build of the loops when the active instruction set has AVX2 (qsimd_set_isa and
 * QSIMD_ISA choose it as they choose the kernels). */
static int use_avx2(void)
{
#ifdef CHAIN_AVX2
    const char *isa = qsimd_get_isa();
    return strcmp(isa, "avx2") == 0 || strcmp(isa, "avx512") == 0;
#else
    return 0;
#endif
}

static void run_gather(int avx2, const chain_op *ops, int n_ops, const geom *g, int jc,
                       const char *x, int32_t xt, size_t o0, size_t o1, float *t)
{
#ifdef CHAIN_AVX2
    if (avx2) { qs_chain_gather_avx2(ops, n_ops, g, jc, x, xt, o0, o1, t); return; }
#endif
    (void)avx2;
    gather_chain(ops, n_ops, g, jc, x, xt, o0, o1, t);
}

static void run_lookup(int avx2, size_t esize, const geom *g, int jc, const unsigned char *tab,
                       size_t nv, int xbytes, const chain_affine *aff, const char *x, char *y)
{
#ifdef CHAIN_AVX2
    if (avx2) { qs_chain_lookup_avx2(esize, g, jc, tab, nv, xbytes, aff, x, y); return; }
#endif
    (void)avx2;
    lookup_all(esize, g, jc, tab, nv, xbytes, aff, x, y);
}

static const unsigned char *get_table(qs_chain *c, int k)
{
    const unsigned char *t;
    qs_lazy_lock();
    if (!c->table_tried[k]) {
        c->table[k] = build_table(c, k);
        c->table_tried[k] = 1;
    }
    t = c->table[k];
    qs_lazy_unlock();
    return t;
}

/* The float path over one tensor of geometry g (written in g's order to y): pieces of whole
 * rows of the trailing axes from the quantization axis a on (a < 0, per-tensor: any range),
 * so each piece is a tensor the operator takes as it is; the chain into a float32 scratch,
 * then qsimd_quantize_linear on the piece. */
static int float_pieces(const qs_chain *c, int avx2, const geom *g, int jc, int a,
                        const char *x, int32_t xt, char *y, qsimd_error *err)
{
    int r = g->nd, rc;
    size_t nx = g->n;
    unsigned bits = qs_bits(c->q.y_dtype);
    int packed = bits < 8 && c->q.y_packed;
    unsigned per_byte = packed ? (bits == 6 ? 4u : 8u / bits) : 1u;
    unsigned gbytes = bits == 6 ? 3u : 1u;
    size_t ysize = packed ? 0 : bits < 8 ? 1 : bits / 8;
    size_t inner = 1, rows, rp;
    if (a >= 0) {
        for (int j = a; j < r; j++) inner *= (size_t)g->d[j];
        rows = nx / inner;
        rp = PIECE_ELEMS / inner;
        if (rp < 1) rp = 1;
        if (packed && inner % per_byte) rp = (rp + per_byte - 1) / per_byte * per_byte;
    } else {
        rows = nx;
        rp = PIECE_ELEMS;
    }
    size_t maxp = rp * inner < nx ? rp * inner : nx;
    float *t = (float *)malloc(maxp * sizeof(float));
    if (!t) return qs_fail(err, QSIMD_ERR_NOMEM, "cannot allocate the chain's scratch");
    size_t sinner = 1, selem = qs_nbytes(c->q.scale->dtype, 0, 1);
    size_t zelem = c->q.zp ? qs_nbytes(c->q.zp->dtype, 0, 1) : 0;
    int blocked = a >= 0 && c->q.opt.block_size != 0;
    if (blocked)
        for (int j = a; j < r; j++) sinner *= (size_t)c->q.scale->shape[j];
    rc = QSIMD_OK;
    for (size_t r0 = 0; r0 < rows && rc == QSIMD_OK; r0 += rp) {
        size_t r1 = r0 + rp < rows ? r0 + rp : rows;
        size_t o0 = r0 * inner, o1 = r1 * inner;
        run_gather(avx2, c->ops, c->n_ops, g, jc, x, xt, o0, o1, t);
        int64_t pshape[QSIMD_MAX_DIMS + 1], sshape[QSIMD_MAX_DIMS + 1];
        qsimd_tensor px, py, ps = *c->q.scale, pz;
        const qsimd_tensor *pzp = c->q.zp;
        qsimd_quantize_options o = c->q.opt;
        memset(&px, 0, sizeof px);
        px.data = t;
        px.dtype = QSIMD_FLOAT;
        px.shape = pshape;
        if (a >= 0) {
            px.ndim = r - a + 1;
            pshape[0] = (int64_t)(r1 - r0);
            for (int j = a; j < r; j++) pshape[j - a + 1] = g->d[j];
            o.axis = 1;
            if (blocked) {
                ps.ndim = r - a + 1;
                sshape[0] = (int64_t)(r1 - r0);
                for (int j = a; j < r; j++) sshape[j - a + 1] = c->q.scale->shape[j];
                ps.shape = sshape;
                ps.data = (char *)c->q.scale->data + r0 * sinner * selem;
                if (c->q.zp) {
                    pz = ps;
                    pz.dtype = c->q.zp->dtype;
                    pz.data = (char *)c->q.zp->data + r0 * sinner * zelem;
                    pzp = &pz;
                }
            }
        } else {
            px.ndim = 1;
            pshape[0] = (int64_t)(o1 - o0);
        }
        py = px;
        py.dtype = c->q.y_dtype;
        py.packed = packed;
        py.data = y + (packed ? o0 / per_byte * gbytes : o0 * ysize);
        rc = qsimd_quantize_linear(&px, &ps, pzp, &o, &py, err);
    }
    free(t);
    return rc;
}
int qs_chain_run(qs_chain *c, const qsimd_tensor *x, const qsimd_tensor *y, qsimd_error *err)
{
    size_t nx;
    int rc;
    int32_t xt = x->dtype;
    if (xt != QSIMD_UINT8 && xt != QSIMD_INT8 && xt != QSIMD_UINT16 && xt != QSIMD_INT16 &&
        xt != QSIMD_FLOAT16 && xt != QSIMD_BFLOAT16 && xt != QSIMD_FLOAT)
        return qs_fail(err, QSIMD_ERR_TYPE, "x must be uint8, int8, uint16, int16, float16, "
                       "bfloat16 or float32 in front of a chain, got %s", qs_dtype_name(xt));
    if ((rc = qs_count(x, "x", &nx, err)) != QSIMD_OK) return rc;
    int r = x->ndim;
    if (c->perm_len && c->perm_len != r)
        return qs_fail(err, QSIMD_ERR_VALUE, "perm has %d entries but x has rank %d",
                       c->perm_len, r);
    int pa = -1;
    if (c->chans) {
        if (c->pre_axis < -r || c->pre_axis >= r)
            return qs_fail(err, QSIMD_ERR_VALUE, "pre_axis %lld is out of range for x of "
                           "rank %d", (long long)c->pre_axis, r);
        pa = (int)(c->pre_axis < 0 ? c->pre_axis + r : c->pre_axis);
        if (x->shape[pa] != c->chans)
            return qs_fail(err, QSIMD_ERR_VALUE, "pre: per-channel constants have %lld "
                           "values but x.shape[%d] (pre_axis) is %lld",
                           (long long)c->chans, pa, (long long)x->shape[pa]);
    }
    geom g;
    int64_t xst[QSIMD_MAX_DIMS];
    g.nd = r;
    g.n = nx;
    {
        int64_t st = 1;
        for (int j = r - 1; j >= 0; j--) { xst[j] = st; st *= x->shape[j]; }
    }
    int jc = -1;
    for (int j = 0; j < r; j++) {
        int a = c->perm_len ? (int)c->perm[j] : j;
        g.d[j] = x->shape[a];
        g.sst[j] = xst[a];
        if (a == pa) jc = j;
    }
    /* y: the permuted shape; then the parameters against it, as the operator checks them */
    size_t ny;
    if ((rc = qs_count(y, "y", &ny, err)) != QSIMD_OK) return rc;
    int same = y->ndim == r;
    for (int j = 0; same && j < r; j++) same = y->shape[j] == g.d[j];
    if (!same) return qs_fail(err, QSIMD_ERR_VALUE, "y must have x's shape permuted by perm");
    qsimd_tensor tf;
    memset(&tf, 0, sizeof tf);
    tf.dtype = QSIMD_FLOAT;
    tf.ndim = r;
    tf.shape = g.d;
    qs_plan plan;
    rc = qs_make_plan(&tf, c->q.scale, c->q.zp, c->q.opt.axis, c->q.opt.block_size, &plan, err);
    if (rc != QSIMD_OK) return rc;
    if (nx == 0) return QSIMD_OK;
    if (!x->data || !y->data) return qs_fail(err, QSIMD_ERR_VALUE, "a tensor's data pointer is NULL");

    int a = -1;   /* the quantization axis of y (per-axis / blocked) */
    if (c->ns > 1) a = (int)(c->q.opt.axis < 0 ? c->q.opt.axis + r : c->q.opt.axis);

    int avx2 = use_avx2();
    int k = table_kind(xt);
    if (k >= 0 && c->tables) {
        /* the tables' channel axis of y: the quantization axis, or the constants' */
        int tj = c->ns > 1 ? a : jc;
        if (!(c->ns > 1 && c->chans && a != jc)) {
            const unsigned char *tab = get_table(c, k);
            if (tab) {
                run_lookup(avx2, c->esize, &g, tj, tab, k <= T_I8 ? 256 : 65536, k <= T_I8 ? 1 : 2,
                           k <= T_I8 ? c->line[k] : NULL, (const char *)x->data,
                           (char *)y->data);
                return QSIMD_OK;
            }
        }
    }

    /* float32 frames to 8-bit codes, HWC -> CHW: one fused pass */
    if (c->fused && xt == QSIMD_FLOAT && (c->ns == 1 || a == r - 3)) {
#ifdef CHAIN_AVX2
        if (avx2 && qs_chain_float3_avx2(c->ops, c->n_ops, &g, jc, &c->fq,
                                         (const float *)x->data, (uint8_t *)y->data))
            return QSIMD_OK;
#endif
#ifdef CHAIN_NEON
        if (strcmp(qsimd_get_isa(), "neon") == 0 &&
            qs_chain_float3_neon(c->ops, c->n_ops, &g, jc, &c->fq, (const float *)x->data,
                                 (uint8_t *)y->data))
            return QSIMD_OK;
#endif
    }

    /* float path. With a transpose, and outputs of whole bytes per element quantized per
     * tensor or per axis, the chain and the quantization run in x's order (contiguous reads,
     * the operator's own kernels) and only the codes are transposed: the scale entry of an
     * element depends on its index along one axis, which the transpose keeps. The axes the
     * transpose leaves in front (a batch) split the work into sub-tensors. */
    unsigned bits = qs_bits(c->q.y_dtype);
    int packed = bits < 8 && c->q.y_packed;
    int kfix = 0;
    while (kfix < r && (c->perm_len == 0 || c->perm[kfix] == kfix)) kfix++;
    int identity = kfix == r;
    if (a >= 0 && kfix > a) kfix = a;
    if (pa >= 0 && kfix > pa) kfix = pa;
    if (identity || packed || (a >= 0 && c->q.opt.block_size != 0))
        return float_pieces(c, avx2, &g, jc, a, (const char *)x->data, xt, (char *)y->data,
                            err);
    size_t ysize = bits < 8 ? 1 : bits / 8, xsize = qs_bits(xt) / 8, outer = 1;
    for (int j = 0; j < kfix; j++) outer *= (size_t)x->shape[j];
    geom gx, gy;
    gx.nd = gy.nd = r - kfix;
    gx.n = gy.n = nx / outer;
    for (int j = kfix; j < r; j++) {
        gx.d[j - kfix] = x->shape[j];
        gx.sst[j - kfix] = xst[j];
        gy.d[j - kfix] = g.d[j];
        gy.sst[j - kfix] = g.sst[j];
    }
    int ax = a >= 0 ? (int)c->perm[a] - kfix : -1;
    unsigned char *codes = (unsigned char *)malloc(gx.n * ysize);
    if (!codes) return qs_fail(err, QSIMD_ERR_NOMEM, "cannot allocate the chain's scratch");
    rc = QSIMD_OK;
    for (size_t o = 0; o < outer && rc == QSIMD_OK; o++) {
        rc = float_pieces(c, avx2, &gx, pa >= 0 ? pa - kfix : -1, ax,
                          (const char *)x->data + o * gx.n * xsize, xt, (char *)codes, err);
        if (rc == QSIMD_OK)
            run_lookup(avx2, ysize, &gy, -1, NULL, 0, (int)ysize, NULL, (const char *)codes,
                       (char *)y->data + o * gx.n * ysize);
    }
    free(codes);
    return rc;
}
