/* The forms the kernels read of scale and zero-point entries, converted per call (a call
 * with many entries spends much of its time here): reciprocals of float32 scales with their
 * range / sign flags (the kernel table's recip_f32) and 8- / 16-bit zero points as int32
 * (widen_zp), kernels.h; and the ranges of the columns whose entries dynamic quantization
 * computes (minmax_cols). Included by a kernel file after driver.h. */
#ifndef QSIMD_GENERIC_ENTRIES_H
#define QSIMD_GENERIC_ENTRIES_H

static unsigned QD_N(recip)(const float *s, float *r, size_t n)
{
    /* |s|'s bits as int32 (below 2^31: no difference overflows) are out of range when one of
     * v - lo, hi - v is negative; NaN and inf lie above QK_RECIP_MAX, 0 and subnormals below */
    int32_t lo = (int32_t)qk_f32_bits(QK_RECIP_MIN), hi = (int32_t)qk_f32_bits(QK_RECIP_MAX);
    int32_t bad = 0, sg = 0, lb[QV_W], lg[QV_W];
    vi vlo = qv_set1_i(lo), vhi = qv_set1_i(hi), ab = qv_set1_i(0x7fffffff);
    vi vb = qv_set1_i(0), vg = vb;
    vf one = qv_set1(1.0f);
    size_t i = 0;
    (void)one;
    for (; n - i >= QV_W; i += QV_W) {
        vi u = qv_loadu_i((const int32_t *)(const void *)(s + i)), v = qv_and_i(u, ab);
        vb = qv_or_i(vb, qv_or_i(qv_sub_i(v, vlo), qv_sub_i(vhi, v)));
        vg = qv_or_i(vg, u);
#if defined(QV_RCP)
        if (r) qv_storeu_f(r + i, qv_rcp(qv_loadu_f(s + i)));   /* (in range; else flagged) */
#else
        if (r) qv_storeu_f(r + i, qv_div(one, qv_loadu_f(s + i)));
#endif
    }
    qv_storeu_i(lb, vb);
    qv_storeu_i(lg, vg);
    for (int k = 0; k < QV_W; k++) { bad |= lb[k]; sg |= lg[k]; }
    /* (the last n % QV_W by the scalar table's) */
    return (bad < 0 ? (unsigned)QK_RECIP_OUT : 0u) | (sg < 0 ? (unsigned)QK_RECIP_NEG : 0u) |
           qk_scalar_table.recip_f32(s + i, r ? r + i : NULL, n - i);
}

static void QD_N(widen)(const void *src, int32_t *z, size_t n, int dk, int sgn, unsigned bits)
{
    const unsigned char *b = (const unsigned char *)src;
    size_t i = 0, w = dk == QK_D_B16 ? 2 : 1;
    vi h = qv_set1_i(0), vs = qv_set1_i(sgn && bits < 8 ? 1 << (bits - 1) : 0);
    if (dk == QK_D_B16) {
        for (; n - i >= QV_W; i += QV_W)
            qv_storeu_i(z + i, qv_load_codes(QK_D_B16, 16, sgn, h, b + 2 * i));
    } else if (bits < 8) {   /* the low bits, sign-extended as c - 2 (c & 2^(bits-1)) */
        for (; n - i >= QV_W; i += QV_W) {
            vi c = qv_load_codes(QK_D_B8, bits, 0, h, b + i), t = qv_and_i(c, vs);
            qv_storeu_i(z + i, qv_sub_i(c, qv_add_i(t, t)));
        }
    } else {
        for (; n - i >= QV_W; i += QV_W)
            qv_storeu_i(z + i, qv_load_codes(QK_D_B8, 8, sgn, h, b + i));
    }
    /* (the last n % QV_W by the scalar table's) */
    qk_scalar_table.widen_zp(b + w * i, z + i, n - i, dk, sgn, bits);
}

/* Column ranges, a strip of columns at a time with its accumulators in registers down the
 * rows: lane l keeps `v < acc ? v : acc` (qv_min) of its column in row order, the scalar
 * loop's result, zero signs included. */
static void QD_N(minmax_cols)(const float *x, size_t rows, size_t stride, size_t m, float *lo,
                              float *hi)
{
    size_t i = 0;
    for (; m - i >= 2 * QV_W; i += 2 * QV_W) {
        vf l0 = qv_set1(INFINITY), l1 = l0, h0 = qv_set1(-INFINITY), h1 = h0;
        for (size_t r = 0; r < rows; r++) {
            vf v0 = qv_loadu_f(x + r * stride + i), v1 = qv_loadu_f(x + r * stride + i + QV_W);
            l0 = qv_min(v0, l0); h0 = qv_max(v0, h0);
            l1 = qv_min(v1, l1); h1 = qv_max(v1, h1);
        }
        qv_storeu_f(lo + i, l0); qv_storeu_f(lo + i + QV_W, l1);
        qv_storeu_f(hi + i, h0); qv_storeu_f(hi + i + QV_W, h1);
    }
    for (; m - i >= QV_W; i += QV_W) {
        vf l = qv_set1(INFINITY), h = qv_set1(-INFINITY);
        for (size_t r = 0; r < rows; r++) {
            vf v = qv_loadu_f(x + r * stride + i);
            l = qv_min(v, l);
            h = qv_max(v, h);
        }
        qv_storeu_f(lo + i, l);
        qv_storeu_f(hi + i, h);
    }
    /* (the last m % QV_W by the scalar table's) */
    if (i < m) qk_scalar_table.minmax_cols(x + i, rows, stride, m - i, lo + i, hi + i);
}

/* Group ranges: each group's vectors accumulated (its last vector ending on its end, over
 * elements already seen: min and max do not mind), or for a group shorter than a vector the
 * vector ending on its end with the lanes before it set aside, then folded across the lanes
 * by permutations, log2 QV_W steps (no NaN is left to fold). A call of the minmax_f32 entry
 * per group had cost more than the group's quantization. */
static void QD_N(minmax_groups)(const float *x, size_t g, size_t b, float *lo, float *hi)
{
    vi sw[8];
    int32_t t[QV_W];
    float tl[QV_W], th[QV_W];
    int ns = 0;
    vf pinf = qv_set1(INFINITY), ninf = qv_set1(-INFINITY);
    for (int s = QV_W / 2; s >= 1; s /= 2, ns++) {   /* lane l <- lane l ^ s */
        for (int l = 0; l < QV_W; l++) t[l] = l ^ s;
        sw[ns] = qv_loadu_i(t);
    }
    for (size_t k = 0; k < g; k++) {
        const float *p = x + k * b;
        vf l = pinf, h = ninf, v;
        if (b < QV_W) {
            if ((k + 1) * b < QV_W) {   /* (nothing of x before it to fill a vector) */
                qk_scalar_table.minmax_groups(p, 1, b, lo + k, hi + k);
                continue;
            }
            v = qv_loadu_f(p + b - QV_W);   /* (NaN lanes to the infinities) */
            l = qv_min(qv_blend_f(pinf, v, (unsigned)(QV_W - b)), pinf);
            h = qv_max(qv_blend_f(ninf, v, (unsigned)(QV_W - b)), ninf);
        } else {
            size_t e = 0;
            for (; b - e >= QV_W; e += QV_W) {
                v = qv_loadu_f(p + e);
                l = qv_min(v, l);
                h = qv_max(v, h);
            }
            if (e < b) {
                v = qv_loadu_f(p + b - QV_W);
                l = qv_min(v, l);
                h = qv_max(v, h);
            }
        }
        for (int s = 0; s < ns; s++) {
            l = qv_min(qv_perm_f(l, sw[s]), l);
            h = qv_max(qv_perm_f(h, sw[s]), h);
        }
        qv_storeu_f(tl, l);
        qv_storeu_f(th, h);
        lo[k] = tl[0];
        hi[k] = th[0];
    }
}

#endif
