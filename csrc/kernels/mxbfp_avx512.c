/* MX / BFP quantize-dequantize for the avx512 tier (flags in csrc/sources.txt): the AVX-512
 * (F, DQ) vector layer of kernels/mxbfp_simd.h, 16 lanes, with lane masks in mask registers,
 * and a form of its own for four MX blocks of 32 along a row (MV_ROWS128).
 *
 * Built with -DQSIMD_TEST_SIMDE (C parity test only) it uses SIMDe's emulation, so that it can
 * be checked on a CPU without AVX-512; the entry points are then renamed so that both builds
 * can be linked into one test program. */
#if defined(QSIMD_TEST_SIMDE)
#include "simde_avx512.h"   /* tests/c: SIMDe plus the few intrinsics it lacks */
/* vpshufd, which this SIMDe lacks (gcc's header form needs a real AVX-512 target) */
static inline simde__m512i qsd_mm512_shuffle_epi32(simde__m512i a, int imm)
{
    int32_t v[16], r[16];
    simde_mm512_storeu_si512(v, a);
    for (int i = 0; i < 16; i++) r[i] = v[(i & ~3) + ((imm >> (2 * (i & 3))) & 3)];
    return simde_mm512_loadu_si512(r);
}
#undef _mm512_shuffle_epi32
#define _mm512_shuffle_epi32(a, imm) qsd_mm512_shuffle_epi32(a, (int)(imm))
/* a masked store, lane by lane (only the selected lanes are written) */
static inline void qsd_mm512_mask_storeu_ps(void *p, uint16_t k, simde__m512 a)
{
    float v[16];
    simde_mm512_storeu_ps(v, a);
    for (int i = 0; i < 16; i++)
        if ((k >> i) & 1) ((float *)p)[i] = v[i];
}
#undef _mm512_mask_storeu_ps
#define _mm512_mask_storeu_ps(p, k, a) qsd_mm512_mask_storeu_ps(p, k, a)
static inline uint16_t qsd_mm512_cmpgt_epu32_mask(simde__m512i a, simde__m512i b)
{
    uint32_t u[16], v[16];
    uint16_t k = 0;
    simde_mm512_storeu_si512(u, a);
    simde_mm512_storeu_si512(v, b);
    for (int i = 0; i < 16; i++) k |= (uint16_t)((u[i] > v[i]) << i);
    return k;
}
#undef _mm512_cmpgt_epu32_mask
#define _mm512_cmpgt_epu32_mask(a, b) qsd_mm512_cmpgt_epu32_mask(a, b)
/* rounding to an integer (scale 0) by the native AVX halves: this SIMDe ignores the
 * toward-zero mode */
static inline simde__m512 qsd_mm512_roundscale_ps(simde__m512 a, int imm)
{
    QSD_SPLIT_PS(a, lo, hi);
    if ((imm & 3) == 3)
        return qsd_join_ps(_mm256_round_ps(lo, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC),
                           _mm256_round_ps(hi, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC));
    return qsd_join_ps(_mm256_round_ps(lo, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC),
                       _mm256_round_ps(hi, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
#undef _mm512_roundscale_ps
#define _mm512_roundscale_ps(a, imm) qsd_mm512_roundscale_ps(a, (int)(imm))
#define MXB_NAME qk_mxbfp_avx512_simde
#define MXB_SCALES qk_mxscales_avx512_simde
#else
#include <immintrin.h>
#define MXB_NAME qk_mxbfp_avx512
#define MXB_SCALES qk_mxscales_avx512
#endif
#include <stdint.h>
#include <string.h>

#include "mxbfp.h"

#if defined(__GNUC__) || defined(__clang__)
#define MV_INLINE static inline __attribute__((always_inline, unused))
#define MV_UNROLL _Pragma("GCC unroll 16")
#else
#define MV_INLINE static __forceinline
#define MV_UNROLL
#endif
#define MV_W 16
typedef __m512 mvf;
typedef __m512i mvi;
typedef __mmask16 mvm;

MV_INLINE uint32_t mv_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
MV_INLINE mvi mv_seti(uint32_t v) { int32_t i; memcpy(&i, &v, 4); return _mm512_set1_epi32(i); }
MV_INLINE mvf mv_setf(float f) { return _mm512_set1_ps(f); }
MV_INLINE mvf mv_ldf(const float *p) { return _mm512_loadu_ps(p); }
MV_INLINE void mv_stf(float *p, mvf v) { _mm512_storeu_ps(p, v); }
MV_INLINE void mv_sti(uint32_t *p, mvi v) { _mm512_storeu_si512((void *)p, v); }
MV_INLINE mvi mv_f2i(mvf v) { return _mm512_castps_si512(v); }
MV_INLINE mvf mv_i2f(mvi v) { return _mm512_castsi512_ps(v); }
MV_INLINE mvi mv_and(mvi a, mvi b) { return _mm512_and_si512(a, b); }
MV_INLINE mvi mv_or(mvi a, mvi b) { return _mm512_or_si512(a, b); }
MV_INLINE mvi mv_xor(mvi a, mvi b) { return _mm512_xor_si512(a, b); }
MV_INLINE mvi mv_add(mvi a, mvi b) { return _mm512_add_epi32(a, b); }
MV_INLINE mvi mv_sub(mvi a, mvi b) { return _mm512_sub_epi32(a, b); }
MV_INLINE mvi mv_maxu(mvi a, mvi b) { return _mm512_max_epu32(a, b); }
MV_INLINE mvi mv_minu(mvi a, mvi b) { return _mm512_min_epu32(a, b); }
#define mv_srli(a, n) _mm512_srli_epi32(a, n)
MV_INLINE mvm mv_eq(mvi a, mvi b) { return _mm512_cmpeq_epi32_mask(a, b); }
MV_INLINE mvm mv_gts(mvi a, mvi b) { return _mm512_cmpgt_epi32_mask(a, b); }
MV_INLINE mvi mv_sel(mvm m, mvi a, mvi b) { return _mm512_mask_blend_epi32(m, b, a); }
MV_INLINE mvf mv_self(mvm m, mvf a, mvf b) { return _mm512_mask_blend_ps(m, b, a); }
MV_INLINE mvm mv_mand(mvm a, mvm b) { return (mvm)(a & b); }
MV_INLINE mvm mv_mor(mvm a, mvm b) { return (mvm)(a | b); }
MV_INLINE mvm mv_mandnot(mvm a, mvm b) { return (mvm)(a & ~b); }
MV_INLINE int mv_all(mvm m) { return m == 0xffff; }
MV_INLINE uint32_t mv_lane0(mvi v) { return (uint32_t)_mm_cvtsi128_si32(_mm512_castsi512_si128(v)); }
MV_INLINE mvm mv_feq(mvf a, mvf b) { return _mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ); }
MV_INLINE mvm mv_fgt(mvf a, mvf b) { return _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ); }
MV_INLINE mvf mv_addf(mvf a, mvf b) { return _mm512_add_ps(a, b); }
MV_INLINE mvf mv_subf(mvf a, mvf b) { return _mm512_sub_ps(a, b); }
MV_INLINE mvf mv_mulf(mvf a, mvf b) { return _mm512_mul_ps(a, b); }
MV_INLINE mvf mv_minf(mvf a, mvf b) { return _mm512_min_ps(a, b); }
MV_INLINE mvf mv_maxf(mvf a, mvf b) { return _mm512_max_ps(a, b); }
MV_INLINE mvf mv_fma(mvf a, mvf b, mvf c) { return _mm512_fmadd_ps(a, b, c); }    /* a b + c */
MV_INLINE mvf mv_fnma(mvf a, mvf b, mvf c) { return _mm512_fnmadd_ps(a, b, c); }  /* c - a b */
MV_INLINE mvf mv_trunc(mvf v) { return _mm512_roundscale_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC); }
MV_INLINE mvf mv_rne(mvf v) { return _mm512_roundscale_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }

/* the max of the lanes, in every lane */
MV_INLINE mvi mv_hmaxu(mvi m)
{
    m = _mm512_max_epu32(m, _mm512_shuffle_i32x4(m, m, 0x4e));
    m = _mm512_max_epu32(m, _mm512_shuffle_i32x4(m, m, 0xb1));
    m = _mm512_max_epu32(m, _mm512_shuffle_epi32(m, (_MM_PERM_ENUM)0x4e));
    return _mm512_max_epu32(m, _mm512_shuffle_epi32(m, (_MM_PERM_ENUM)0xb1));
}

/* lane i exchanged with lane i ^ s */
MV_INLINE mvi MV_SWAP(mvi v, size_t s)
{
    if (s == 1) return _mm512_shuffle_epi32(v, (_MM_PERM_ENUM)0xb1);
    if (s == 2) return _mm512_shuffle_epi32(v, (_MM_PERM_ENUM)0x4e);
    if (s == 4) return _mm512_shuffle_i32x4(v, v, 0xb1);
    return _mm512_shuffle_i32x4(v, v, 0x4e);
}

/* the first k lanes (0 <= k <= 16) */
MV_INLINE mvm mv_firstm(size_t k) { return (mvm)((1u << k) - 1u); }
MV_INLINE mvi mv_first(mvi v, size_t k) { return _mm512_maskz_mov_epi32(mv_firstm(k), v); }
MV_INLINE mvf mv_ldpart(const float *p, size_t k) { return _mm512_maskz_loadu_ps(mv_firstm(k), p); }
MV_INLINE void mv_stpart(float *p, mvf v, size_t k) { _mm512_mask_storeu_ps(p, mv_firstm(k), v); }

/* lane l: lane idx[l] of v; of a (idx[l] < 16) or b (16 <= idx[l] < 32) */
#define MV_PERM(v, idx) _mm512_permutexvar_epi32(idx, v)
#define MV_PERM2(a, b, idx) _mm512_permutex2var_epi32(a, idx, b)

/* mxbfp_simd.h's forms by vpternlogd (k | (x & sign)) and vrangeps (imm 2: the smaller
 * magnitude, 3: the larger, with the first operand's sign) */
#define MV_SIGNOR(x, h)                                                                  \
    _mm512_castsi512_ps(_mm512_ternarylogic_epi32(h, _mm512_castps_si512(x),            \
                                                  mv_seti(0x80000000u), 0xf8))
#define MV_CLAMP(q, m) _mm512_range_ps(q, _mm512_set1_ps(m), 0x02)
#define MV_FLOOR_G(x, e)                                                                 \
    _mm512_range_ps(_mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(x),         \
                                                         mv_seti(0xff800000u))),         \
                    _mm512_castsi512_ps(e), 0x03)
#define MV_MAXMAG(r, f, x) _mm512_range_ps(r, _mm512_castsi512_ps(f), 0x02)

/* The maxima of the halves of f[r] (lanes 0-7: h = 0, 8-15: h = 1), (r, h) at lane
 * MV_HALF_IDX(r, h) of the pair h[0], h[1]: unpacks within 128-bit lanes, then across */
#define MV_HALF_IDX(r, h) ((r) / 4 * 8 + (h) * 4 + (r) % 4)
MV_INLINE void mv_halves(const __m512i *f, __m512i *h)
{
    __m512i a[8], b[4];
    MV_UNROLL
    for (int i = 0; i < 8; i++)
        a[i] = _mm512_max_epu32(_mm512_unpacklo_epi32(f[2 * i], f[2 * i + 1]),
                                _mm512_unpackhi_epi32(f[2 * i], f[2 * i + 1]));
    MV_UNROLL
    for (int i = 0; i < 4; i++)
        b[i] = _mm512_max_epu32(_mm512_unpacklo_epi64(a[2 * i], a[2 * i + 1]),
                                _mm512_unpackhi_epi64(a[2 * i], a[2 * i + 1]));
    MV_UNROLL
    for (int i = 0; i < 2; i++)
        h[i] = _mm512_max_epu32(_mm512_shuffle_i32x4(b[2 * i], b[2 * i + 1], 0x88),
                                _mm512_shuffle_i32x4(b[2 * i], b[2 * i + 1], 0xdd));
}
#define MV_HALVES mv_halves

/* lane r: the max of the lanes of f[r], r < 16: mv_halves, then across the halves */
MV_INLINE mvi mv_reduce(const mvi *f)
{
    mvi c[2];
    mv_halves(f, c);
    return _mm512_max_epu32(_mm512_shuffle_i32x4(c[0], c[1], 0x88),
                            _mm512_shuffle_i32x4(c[0], c[1], 0xdd));
}

/* Four MX blocks of 32 along a row, the float kinds and int8 with rounding mode 0 (Quark's
 * default), in registers: the same results as the fast kinds of mxbfp_simd.h (the block's
 * constants from its largest exponent field M, in the same fast ranges), with the larger and
 * smaller magnitudes by vrangeps:
 *   float: g = +-max(2^e, F) with x's sign and e x's exponent (x & 0xff800000 keeps the sign
 *          and 2^e; vrangeps takes the larger magnitude with the first operand's sign), then
 *          r = (x + g K) - g K in two fused operations, clamped to +-maxs by a second vrangeps;
 *   int8:  trunc(x a64 + copysign(0.5 - 2^-25, x)) with a64 = 64 / scale, at most 127, times
 *          s64 = scale / 64.
 * M comes from 2^e of the elements, the larger magnitude lane-wise by vrangeps (sign cleared;
 * the mask makes a NaN an inf, which vrangeps keeps where it would drop a quiet NaN), then
 * integer maxima; a NaN or inf gives field 255, outside both ranges: 0, nothing written. */
typedef struct {
    __m512i lo, span, fl, mx;
    __m512 k;
} mv_k128;

MV_INLINE mv_k128 mv_k128_consts(int is_int8, const qk_mxbfp *c)
{
    mv_k128 k;
    int32_t lo = is_int8 ? 7 : 27 + c->emax, hi = is_int8 ? 253 : 227;
    k.lo = _mm512_set1_epi32(lo * (1 << 23));
    k.span = _mm512_set1_epi32((hi - lo) * (1 << 23));
    if (is_int8) {   /* fl: a64 = fl - M, mx: s64 = M + mx */
        k.fl = mv_seti(260u << 23);
        k.mx = _mm512_set1_epi32(-(6 << 23));
        k.k = _mm512_set1_ps(0.49999997f);   /* 0.5 - 2^-25 */
    } else {
        k.fl = _mm512_set1_epi32((c->emin - c->emax) * (1 << 23));
        k.mx = _mm512_set1_epi32((int32_t)mv_bits(c->max_norm) - (127 + c->emax) * (1 << 23));
        k.k = _mm512_castsi512_ps(mv_seti((uint32_t)(150 - c->mbits) << 23));   /* 2^(23 - mbits) */
    }
    return k;
}

/* x's sign and 2^(its exponent) (NaN: +-inf; zero and subnormals: +-0) */
MV_INLINE __m512 mv_k128_e(__m512 x)
{
    return _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(x), mv_seti(0xff800000u)));
}

MV_INLINE void mv_k128_vec(float *y, __m512 xv, __m512 e, __m512 f, __m512 s, int is_int8,
                           const mv_k128 *k)
{
    if (!is_int8) {
        __m512 g = _mm512_range_ps(e, f, 0x03);   /* larger magnitude, e's sign */
        __m512 t = _mm512_fmadd_ps(g, k->k, xv);
        __m512 r = _mm512_fnmadd_ps(g, k->k, t);   /* t - g K, exact */
        _mm512_storeu_ps(y, _mm512_range_ps(r, s, 0x02));
        return;
    }
    __m512 c = _mm512_castsi512_ps(_mm512_ternarylogic_epi32(
        _mm512_castps_si512(k->k), _mm512_castps_si512(xv), mv_seti(0x80000000u),
        0xf8));   /* k | (x & sign) */
    __m512 q = _mm512_roundscale_ps(_mm512_fmadd_ps(xv, f, c),
                                    _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    q = _mm512_min_ps(q, _mm512_set1_ps(127.0f));   /* |q| <= 128 */
    _mm512_storeu_ps(y, _mm512_mul_ps(q, s));
}

/* Four blocks, their maxima reduced together (128-bit quarter b: block b); 0 when any is
 * outside the fast range (nothing written). */
static int mv_rows128(const float *x, float *y, int is_int8, const qk_mxbfp *c)
{
    mv_k128 kk = mv_k128_consts(is_int8, c);
    const mv_k128 *k = &kk;
    __m512 xv[8], e[8];
    __m512i a[4];
    MV_UNROLL
    for (int j = 0; j < 8; j++) {
        xv[j] = _mm512_loadu_ps(x + 16 * j);
        e[j] = mv_k128_e(xv[j]);
    }
    MV_UNROLL
    for (int j = 0; j < 4; j++)
        a[j] = _mm512_castps_si512(_mm512_range_ps(e[2 * j], e[2 * j + 1], 0x0b));
    __m512i ab = _mm512_max_epu32(_mm512_shuffle_i32x4(a[0], a[1], 0x44),
                                  _mm512_shuffle_i32x4(a[0], a[1], 0xee));
    __m512i cd = _mm512_max_epu32(_mm512_shuffle_i32x4(a[2], a[3], 0x44),
                                  _mm512_shuffle_i32x4(a[2], a[3], 0xee));
    __m512i m = _mm512_max_epu32(_mm512_shuffle_i32x4(ab, cd, 0x88),
                                 _mm512_shuffle_i32x4(ab, cd, 0xdd));
    m = _mm512_max_epu32(m, _mm512_shuffle_epi32(m, (_MM_PERM_ENUM)0x4e));
    m = _mm512_max_epu32(m, _mm512_shuffle_epi32(m, (_MM_PERM_ENUM)0xb1));
    if (_mm512_cmpgt_epu32_mask(_mm512_sub_epi32(m, k->lo), k->span)) return 0;
    __m512i f = is_int8 ? _mm512_sub_epi32(k->fl, m) : _mm512_add_epi32(m, k->fl);
    __m512i s = _mm512_add_epi32(m, k->mx);
#define MV_K128_B(b, imm)                                                                  \
    do {                                                                                   \
        __m512 fb = _mm512_castsi512_ps(_mm512_shuffle_i32x4(f, f, imm));                  \
        __m512 sb = _mm512_castsi512_ps(_mm512_shuffle_i32x4(s, s, imm));                  \
        mv_k128_vec(y + 32 * (b), xv[2 * (b)], e[2 * (b)], fb, sb, is_int8, k);            \
        mv_k128_vec(y + 32 * (b) + 16, xv[2 * (b) + 1], e[2 * (b) + 1], fb, sb, is_int8, k); \
    } while (0)
    MV_K128_B(0, 0x00);
    MV_K128_B(1, 0x55);
    MV_K128_B(2, 0xaa);
    MV_K128_B(3, 0xff);
#undef MV_K128_B
    return 1;
}
#define MV_ROWS128 mv_rows128

/* The settings other than the default ones (int8 rounding modes 0 and 2, float elements,
 * to_bfp mode 0) take the AVX2 kernel, which every AVX-512 CPU runs: its 8 lanes are enough
 * for them, and the library stays small. */
/* the last columns of a middle-axis block in the row's last vector, blended (mxbfp_simd.h) */
#define MV_TAILMASK 1
#define MV_FALLBACK qk_mxbfp_avx2
#define MV_PRIME_TOO 1
#include "mxbfp_simd.h"
