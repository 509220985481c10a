/* AMD Quark's extended types on x86 (avx2.c, avx512.c): quantization of float32 x with a
 * float32 quotient to int32 / uint32 (QK_Y_B32), float16 (QK_Y_F16) and bfloat16
 * (QK_Y_BF16), and int32 / uint32 dequantization to float32 (QK_D_B32). Only these natural
 * rows; the other input types and precisions stay with scalar.c.
 *
 * Not a standalone header: the including file defines its vector layer (QV_W 8 or 16,
 * qv_loadu_f, qv_div, qv_mul, qv_set1, qv_add_f, qv_store_out) and includes x86_fp8.h first;
 * this file then names the three quantize entries for x86_fp8.h's float32 row
 * (QT_QUARK_QENTRIES) and sets QT_B32_DROW for x86_template.h's QT_TABLE.
 *
 * The same operations as scalar.c: the correctly rounded float32 quotient (true division:
 * these outputs keep every bit of it), then
 *   B32: widened to double, clamped there to [qmin64 - zp, qmax64 - zp] (NaN: the low
 *        bound), rounded half to even, plus the zero point: every step exact in double. The
 *        code goes out through the int32 conversion: uint32 ranges are shifted down by 2^31
 *        first and the sign bit flipped back, which gives the same low 32 bits.
 *   F16 / BF16: q + zpf in float32 (+0 without a zero point, so -0 becomes +0), converted.
 *   D_B32: x - zp exact in double (|.| < 2^34), one rounding to float32, one product.
 * Partial vectors, blocks shorter than a vector and their tails go to the scalar kernel on a
 * sub-run. */
#ifndef QSIMD_X86_QUARK_H
#define QSIMD_X86_QUARK_H

#if defined(_MSC_VER) && !defined(__clang__)
#define QQ_INLINE static __forceinline
#define QQ_COLD static __declspec(noinline)
#else
#define QQ_INLINE static inline __attribute__((always_inline))
#define QQ_COLD static __attribute__((noinline, cold))
#endif

/* ---- double-precision halves of a vector ---- */
#if QV_W == 16
typedef __m512d qq_vd;
QQ_INLINE qq_vd qq_set1_d(double d) { return _mm512_set1_pd(d); }
QQ_INLINE qq_vd qq_lo_d(vf v) { return _mm512_cvtps_pd(_mm512_castps512_ps256(v)); }
QQ_INLINE qq_vd qq_hi_d(vf v)
{
    return _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
}
/* min(max(d, lo), hi) in scalar.c's order (max: NaN gives lo), rounded half to even */
QQ_INLINE qq_vd qq_clamp_rint(qq_vd d, qq_vd lo, qq_vd hi)
{
    d = _mm512_min_pd(_mm512_max_pd(d, lo), hi);
    return _mm512_roundscale_pd(d, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
/* exact integers within int32 -> int32 lanes */
QQ_INLINE vi qq_join_i(qq_vd a, qq_vd b)
{
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtpd_epi32(a)),
                              _mm512_cvtpd_epi32(b), 1);
}
QQ_INLINE vi qq_loadu_i(const void *p) { return _mm512_loadu_si512(p); }
QQ_INLINE void qq_storeu_i(void *p, vi v) { _mm512_storeu_si512(p, v); }
QQ_INLINE vi qq_xor_i(vi a, vi b) { return _mm512_xor_si512(a, b); }
QQ_INLINE vi qq_set1_i(uint32_t u) { return _mm512_set1_epi32(qv_bits_i32(u)); }
QQ_INLINE qq_vd qq_lo_i2d(vi v) { return _mm512_cvtepi32_pd(_mm512_castsi512_si256(v)); }
QQ_INLINE qq_vd qq_hi_i2d(vi v) { return _mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(v, 1)); }
QQ_INLINE qq_vd qq_add_d(qq_vd a, qq_vd b) { return _mm512_add_pd(a, b); }
/* two double halves rounded once each to float32 */
QQ_INLINE vf qq_join_f(qq_vd a, qq_vd b)
{
    return _mm512_castpd_ps(_mm512_insertf64x4(
        _mm512_castps_pd(_mm512_castps256_ps512(_mm512_cvtpd_ps(a))),
        _mm256_castps_pd(_mm512_cvtpd_ps(b)), 1));
}
#else
typedef __m256d qq_vd;
QQ_INLINE qq_vd qq_set1_d(double d) { return _mm256_set1_pd(d); }
QQ_INLINE qq_vd qq_lo_d(vf v) { return _mm256_cvtps_pd(_mm256_castps256_ps128(v)); }
QQ_INLINE qq_vd qq_hi_d(vf v) { return _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)); }
QQ_INLINE qq_vd qq_clamp_rint(qq_vd d, qq_vd lo, qq_vd hi)
{
    d = _mm256_min_pd(_mm256_max_pd(d, lo), hi);
    return _mm256_round_pd(d, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
QQ_INLINE vi qq_join_i(qq_vd a, qq_vd b)
{
    return _mm256_inserti128_si256(_mm256_castsi128_si256(_mm256_cvtpd_epi32(a)),
                                   _mm256_cvtpd_epi32(b), 1);
}
QQ_INLINE vi qq_loadu_i(const void *p) { return _mm256_loadu_si256((const __m256i *)p); }
QQ_INLINE void qq_storeu_i(void *p, vi v) { _mm256_storeu_si256((__m256i *)p, v); }
QQ_INLINE vi qq_xor_i(vi a, vi b) { return _mm256_xor_si256(a, b); }
QQ_INLINE vi qq_set1_i(uint32_t u) { return _mm256_set1_epi32(qv_bits_i32(u)); }
QQ_INLINE qq_vd qq_lo_i2d(vi v) { return _mm256_cvtepi32_pd(_mm256_castsi256_si128(v)); }
QQ_INLINE qq_vd qq_hi_i2d(vi v) { return _mm256_cvtepi32_pd(_mm256_extracti128_si256(v, 1)); }
QQ_INLINE qq_vd qq_add_d(qq_vd a, qq_vd b) { return _mm256_add_pd(a, b); }
QQ_INLINE vf qq_join_f(qq_vd a, qq_vd b)
{
    return _mm256_insertf128_ps(_mm256_castps128_ps256(_mm256_cvtpd_ps(a)), _mm256_cvtpd_ps(b),
                                1);
}
#endif

/* Per-entry constants. B32: the clamp bounds, zero point less the bias (2^31 for uint32
 * ranges, whose codes the int32 conversion cannot hold, else 0) and the sign flip that
 * undoes it. F16 / BF16: the float zero point. D_B32: the input's flip and bias - zp. */
typedef struct qq_k {
    vf s, zf;
    qq_vd lo, hi, zb;
    vi flip;
} qq_k;

QQ_INLINE qq_k qq_qconst(int yk, const qk_qparams *p, size_t e)
{
    qq_k k;
    k.s = qv_set1(p->scale[e]);
    if (yk == QK_Y_B32) {
        int64_t zp = p->zp64 ? p->zp64[e] : 0;
        int u = p->qmin64 >= 0;
        k.lo = qq_set1_d((double)(p->qmin64 - zp));
        k.hi = qq_set1_d((double)(p->qmax64 - zp));
        k.zb = qq_set1_d((double)zp - (u ? 2147483648.0 : 0.0));   /* exact: |zp| <= 2^32 */
        k.flip = qq_set1_i(u ? 0x80000000u : 0u);
        k.zf = k.s;
    } else {
        k.zf = qv_set1(p->zpf ? p->zpf[e] : 0.0f);
        k.lo = k.hi = k.zb = qq_set1_d(0.0);
        k.flip = qq_set1_i(0u);
    }
    return k;
}

/* QV_W elements: x[0..QV_W) to y (element 0 of the vector) */
QQ_INLINE void qq_qvec(int yk, const float *x, unsigned char *y, const qq_k *k)
{
    vf q = qv_div(qv_loadu_f(x), k->s);
    if (yk == QK_Y_B32) {
        qq_vd a = qq_add_d(qq_clamp_rint(qq_lo_d(q), k->lo, k->hi), k->zb);
        qq_vd b = qq_add_d(qq_clamp_rint(qq_hi_d(q), k->lo, k->hi), k->zb);
        qq_storeu_i(y, qq_xor_i(qq_join_i(a, b), k->flip));
    } else {
        qv_store_out(yk == QK_Y_F16 ? QK_O_F16 : QK_O_BF16, y, qv_add_f(q, k->zf));
    }
}

QQ_INLINE size_t qq_ysize(int yk) { return yk == QK_Y_B32 ? 4u : 2u; }

/* The scalar kernel on elements [a, b) of the run; with blk > 1 they share one entry. */
QQ_COLD void qq_quant_part(int yk, const float *x, unsigned char *y, size_t a, size_t b,
                           size_t blk, const qk_qparams *p)
{
    if (a >= b) return;
    qk_qparams q = qk_qparams_at(p, a / blk);
    q.blk = b - a;   /* one entry */
    qk_quant_scalar(QK_X_F32, QK_Q_F32, yk, x + a, y + a * qq_ysize(yk), b - a, &q);
}

QQ_INLINE void qq_quant_run(int yk, const void *xv, void *yv, size_t n, const qk_qparams *p)
{
    const float *x = (const float *)xv;
    unsigned char *y = (unsigned char *)yv;
    size_t blk = p->blk ? p->blk : 1, ys = qq_ysize(yk);
    if (blk < QV_W && blk < n) {   /* small blocks: the scalar kernel reads the arrays */
        qk_quant_scalar(QK_X_F32, QK_Q_F32, yk, xv, yv, n, p);
        return;
    }
    for (size_t a = 0, e = 0; a < n; a += blk, e++) {
        size_t b = n - a <= blk ? n : a + blk, i = a;
        qq_k k = qq_qconst(yk, p, e);
        for (; b - i >= 2 * QV_W; i += 2 * QV_W) {
            qq_qvec(yk, x + i, y + i * ys, &k);
            qq_qvec(yk, x + i + QV_W, y + (i + QV_W) * ys, &k);
        }
        for (; b - i >= QV_W; i += QV_W) qq_qvec(yk, x + i, y + i * ys, &k);
        if (i < b) qq_quant_part(yk, x, y, i, b, blk, p);
    }
}

/* ---- dequantize int32 / uint32 -> float32 ---- */

QQ_INLINE qq_k qq_dconst(const qk_dparams *p, size_t e)
{
    qq_k k;
    int64_t zp = p->zp64 ? p->zp64[e] : 0;
    k.s = qv_set1(p->scale[e]);
    /* uint32: x ^ 2^31 read as int32 is x - 2^31 */
    k.flip = qq_set1_i(p->is_signed ? 0u : 0x80000000u);
    k.zb = qq_set1_d((p->is_signed ? 0.0 : 2147483648.0) - (double)zp);   /* exact */
    k.lo = k.hi = k.zb;
    k.zf = k.s;
    return k;
}

QQ_INLINE void qq_dvec(const unsigned char *x, float *y, const qq_k *k)
{
    vi c = qq_xor_i(qq_loadu_i(x), k->flip);
    vf v = qq_join_f(qq_add_d(qq_lo_i2d(c), k->zb), qq_add_d(qq_hi_i2d(c), k->zb));
    qv_storeu_f(y, qv_mul(v, k->s));
}

QQ_COLD void qq_deq_part(const unsigned char *x, float *y, size_t a, size_t b, size_t blk,
                         const qk_dparams *p)
{
    if (a >= b) return;
    qk_dparams q = qk_dparams_at(p, a / blk);
    q.blk = b - a;
    qk_dequant_scalar(QK_D_B32, QK_O_F32, x + 4 * a, y + a, b - a, &q);
}

QQ_INLINE void qq_deq_run(const void *xv, void *yv, size_t n, const qk_dparams *p)
{
    const unsigned char *x = (const unsigned char *)xv;
    float *y = (float *)yv;
    size_t blk = p->blk ? p->blk : 1;
    if (blk < QV_W && blk < n) {
        qk_dequant_scalar(QK_D_B32, QK_O_F32, xv, yv, n, p);
        return;
    }
    for (size_t a = 0, e = 0; a < n; a += blk, e++) {
        size_t b = n - a <= blk ? n : a + blk, i = a;
        qq_k k = qq_dconst(p, e);
        for (; b - i >= 2 * QV_W; i += 2 * QV_W) {
            qq_dvec(x + 4 * i, y + i, &k);
            qq_dvec(x + 4 * (i + QV_W), y + i + QV_W, &k);
        }
        for (; b - i >= QV_W; i += QV_W) qq_dvec(x + 4 * i, y + i, &k);
        if (i < b) qq_deq_part(x, y, i, b, blk, p);
    }
}

/* ---- table entries ---- */

#define QQ_QFN(yk)                                                                           \
    static void QT_N(k_q_##yk)(const void *x, void *y, size_t n, const qk_qparams *p)       \
    { qq_quant_run(yk, x, y, n, p); }
QQ_QFN(QK_Y_B32)
QQ_QFN(QK_Y_F16)
QQ_QFN(QK_Y_BF16)
static void QT_N(k_d_b32)(const void *x, void *y, size_t n, const qk_dparams *p)
{
    qq_deq_run(x, y, n, p);
}

/* x86_fp8.h's float32 row with the three Quark outputs filled in */
#define QT_QUARK_QENTRIES QT_N(k_q_QK_Y_B32), QT_N(k_q_QK_Y_F16), QT_N(k_q_QK_Y_BF16)
#define QT_B32_DROW { QT_N(k_d_b32), NULL, NULL }

#endif
