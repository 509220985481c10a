/* NaN-ignoring min and max of float32 (the kernel table's minmax_f32), over the vector
 * layer's qv_min / qv_max (a < b ? a : b and a > b ? a : b, per lane). Included by a kernel
 * file after driver.h unless it has its own. */
#ifndef QSIMD_GENERIC_MINMAX_H
#define QSIMD_GENERIC_MINMAX_H

/* Sign of the first element equal to zero (the scalar loop keeps the first of equal values,
 * and +0 / -0 are the only equal values with different bits). */
static int qt_first_zero_negative(const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (x[i] == 0.0f) return (int)(qk_f32_bits(x[i]) >> 31);
    return 0;
}

/* Folds candidate values (lane accumulators, leftover elements) into the scalar result. */
static float qt_reduce(const float *c, size_t nc, int is_max, const float *x, size_t n)
{
    float r = is_max ? -INFINITY : INFINITY;
    int pos = 0, neg = 0;
    for (size_t k = 0; k < nc; k++)
        if (is_max ? c[k] > r : c[k] < r) r = c[k];
    if (r != 0.0f) return r;   /* equal nonzero floats have equal bits */
    for (size_t k = 0; k < nc; k++)
        if (c[k] == 0.0f) { if (qk_f32_bits(c[k]) >> 31) neg = 1; else pos = 1; }
    if (pos && neg) neg = qt_first_zero_negative(x, n);
    return neg ? -0.0f : 0.0f;
}

static void QD_N(minmax)(const float *x, size_t n, float *mn, float *mx)
{
    /* Per lane, min(v, acc) is exactly `v < acc ? v : acc` (x86 returns the second operand
     * for NaN and for equal values), so each lane keeps the first occurrence of its minimum,
     * as the scalar loop does. */
    vf lo0 = qv_set1(INFINITY), lo1 = lo0, lo2 = lo0, lo3 = lo0;
    vf hi0 = qv_set1(-INFINITY), hi1 = hi0, hi2 = hi0, hi3 = hi0;
    size_t i = 0;
    for (; n - i >= QD_U; i += QD_U) {
        vf v0 = qv_loadu_f(x + i), v1 = qv_loadu_f(x + i + QV_W);
        vf v2 = qv_loadu_f(x + i + 2 * QV_W), v3 = qv_loadu_f(x + i + 3 * QV_W);
        lo0 = qv_min(v0, lo0); hi0 = qv_max(v0, hi0);
        lo1 = qv_min(v1, lo1); hi1 = qv_max(v1, hi1);
        lo2 = qv_min(v2, lo2); hi2 = qv_max(v2, hi2);
        lo3 = qv_min(v3, lo3); hi3 = qv_max(v3, hi3);
    }
    for (; n - i >= QV_W; i += QV_W) {
        vf v = qv_loadu_f(x + i);
        lo0 = qv_min(v, lo0);
        hi0 = qv_max(v, hi0);
    }
    /* Fast fold (per-row callers pay for it once per row): the lanes combined, then a tree
     * over the lanes. The accumulators hold no NaN, so a nonzero result is the one value
     * the scalar loop finds; a zero result needs the sign rule below, from the lanes kept
     * apart. */
    float tl[QV_W], th[QV_W], a, b;
    float l0 = INFINITY, l1 = INFINITY, l2 = INFINITY, l3 = INFINITY;
    float h0 = -INFINITY, h1 = -INFINITY, h2 = -INFINITY, h3 = -INFINITY;
    size_t k;
    qv_storeu_f(tl, qv_min(qv_min(lo0, lo1), qv_min(lo2, lo3)));
    qv_storeu_f(th, qv_max(qv_max(hi0, hi1), qv_max(hi2, hi3)));
    for (k = 0; k < QV_W; k += 4) {   /* eight independent chains, in registers */
        l0 = tl[k] < l0 ? tl[k] : l0; l1 = tl[k + 1] < l1 ? tl[k + 1] : l1;
        l2 = tl[k + 2] < l2 ? tl[k + 2] : l2; l3 = tl[k + 3] < l3 ? tl[k + 3] : l3;
        h0 = th[k] > h0 ? th[k] : h0; h1 = th[k + 1] > h1 ? th[k + 1] : h1;
        h2 = th[k + 2] > h2 ? th[k + 2] : h2; h3 = th[k + 3] > h3 ? th[k + 3] : h3;
    }
    for (k = i; k + 4 <= n; k += 4) {   /* comparisons with NaN are false: NaN is skipped */
        l0 = x[k] < l0 ? x[k] : l0; l1 = x[k + 1] < l1 ? x[k + 1] : l1;
        l2 = x[k + 2] < l2 ? x[k + 2] : l2; l3 = x[k + 3] < l3 ? x[k + 3] : l3;
        h0 = x[k] > h0 ? x[k] : h0; h1 = x[k + 1] > h1 ? x[k + 1] : h1;
        h2 = x[k + 2] > h2 ? x[k + 2] : h2; h3 = x[k + 3] > h3 ? x[k + 3] : h3;
    }
    for (; k < n; k++) {
        l0 = x[k] < l0 ? x[k] : l0;
        h0 = x[k] > h0 ? x[k] : h0;
    }
    l0 = l1 < l0 ? l1 : l0; l2 = l3 < l2 ? l3 : l2; a = l2 < l0 ? l2 : l0;
    h0 = h1 > h0 ? h1 : h0; h2 = h3 > h2 ? h3 : h2; b = h2 > h0 ? h2 : h0;
    if (a != 0.0f && b != 0.0f) {
        *mn = a;
        *mx = b;
        return;
    }
    float c[QD_U + QV_W];
    size_t nc = QD_U;
    qv_storeu_f(c, lo0); qv_storeu_f(c + QV_W, lo1);
    qv_storeu_f(c + 2 * QV_W, lo2); qv_storeu_f(c + 3 * QV_W, lo3);
    for (k = i; k < n; k++) c[nc++] = x[k];
    *mn = qt_reduce(c, nc, 0, x, n);
    nc = QD_U;
    qv_storeu_f(c, hi0); qv_storeu_f(c + QV_W, hi1);
    qv_storeu_f(c + 2 * QV_W, hi2); qv_storeu_f(c + 3 * QV_W, hi3);
    for (k = i; k < n; k++) c[nc++] = x[k];
    *mx = qt_reduce(c, nc, 1, x, n);
}

#endif
