/* MX / BFP quantize-dequantize for the avx2 tier (flags in csrc/sources.txt): the AVX2 + FMA
 * vector layer of kernels/mxbfp_simd.h, 8 lanes. */
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "mxbfp.h"

#define MV_INLINE static inline __attribute__((always_inline, unused))
#define MV_UNROLL _Pragma("GCC unroll 16")
#define MV_W 8
typedef __m256 mvf;
typedef __m256i mvi;
typedef __m256i mvm;   /* all ones / zero per lane */

MV_INLINE uint32_t mv_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
MV_INLINE mvi mv_seti(uint32_t v) { int32_t i; memcpy(&i, &v, 4); return _mm256_set1_epi32(i); }
MV_INLINE mvf mv_setf(float f) { return _mm256_set1_ps(f); }
MV_INLINE mvf mv_ldf(const float *p) { return _mm256_loadu_ps(p); }
MV_INLINE void mv_stf(float *p, mvf v) { _mm256_storeu_ps(p, v); }
MV_INLINE void mv_sti(uint32_t *p, mvi v) { _mm256_storeu_si256((__m256i *)p, v); }
MV_INLINE mvi mv_f2i(mvf v) { return _mm256_castps_si256(v); }
MV_INLINE mvf mv_i2f(mvi v) { return _mm256_castsi256_ps(v); }
MV_INLINE mvi mv_and(mvi a, mvi b) { return _mm256_and_si256(a, b); }
MV_INLINE mvi mv_or(mvi a, mvi b) { return _mm256_or_si256(a, b); }
MV_INLINE mvi mv_xor(mvi a, mvi b) { return _mm256_xor_si256(a, b); }
MV_INLINE mvi mv_add(mvi a, mvi b) { return _mm256_add_epi32(a, b); }
MV_INLINE mvi mv_sub(mvi a, mvi b) { return _mm256_sub_epi32(a, b); }
MV_INLINE mvi mv_maxu(mvi a, mvi b) { return _mm256_max_epu32(a, b); }
MV_INLINE mvi mv_minu(mvi a, mvi b) { return _mm256_min_epu32(a, b); }
#define mv_srli(a, n) _mm256_srli_epi32(a, n)
MV_INLINE mvm mv_eq(mvi a, mvi b) { return _mm256_cmpeq_epi32(a, b); }
MV_INLINE mvm mv_gts(mvi a, mvi b) { return _mm256_cmpgt_epi32(a, b); }
MV_INLINE mvi mv_sel(mvm m, mvi a, mvi b) { return _mm256_blendv_epi8(b, a, m); }
MV_INLINE mvf mv_self(mvm m, mvf a, mvf b) { return _mm256_blendv_ps(b, a, _mm256_castsi256_ps(m)); }
MV_INLINE mvm mv_mand(mvm a, mvm b) { return _mm256_and_si256(a, b); }
MV_INLINE mvm mv_mor(mvm a, mvm b) { return _mm256_or_si256(a, b); }
MV_INLINE mvm mv_mandnot(mvm a, mvm b) { return _mm256_andnot_si256(b, a); }   /* a & ~b */
MV_INLINE int mv_all(mvm m) { return _mm256_movemask_epi8(m) == -1; }
MV_INLINE uint32_t mv_lane0(mvi v) { return (uint32_t)_mm256_cvtsi256_si32(v); }
MV_INLINE mvm mv_feq(mvf a, mvf b) { return _mm256_castps_si256(_mm256_cmp_ps(a, b, _CMP_EQ_OQ)); }
MV_INLINE mvm mv_fgt(mvf a, mvf b) { return _mm256_castps_si256(_mm256_cmp_ps(a, b, _CMP_GT_OQ)); }
MV_INLINE mvf mv_addf(mvf a, mvf b) { return _mm256_add_ps(a, b); }
MV_INLINE mvf mv_subf(mvf a, mvf b) { return _mm256_sub_ps(a, b); }
MV_INLINE mvf mv_mulf(mvf a, mvf b) { return _mm256_mul_ps(a, b); }
MV_INLINE mvf mv_minf(mvf a, mvf b) { return _mm256_min_ps(a, b); }
MV_INLINE mvf mv_maxf(mvf a, mvf b) { return _mm256_max_ps(a, b); }
MV_INLINE mvf mv_fma(mvf a, mvf b, mvf c) { return _mm256_fmadd_ps(a, b, c); }    /* a b + c */
MV_INLINE mvf mv_fnma(mvf a, mvf b, mvf c) { return _mm256_fnmadd_ps(a, b, c); }  /* c - a b */
MV_INLINE mvf mv_trunc(mvf v) { return _mm256_round_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC); }
MV_INLINE mvf mv_rne(mvf v) { return _mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }

/* the max of the lanes, in every lane */
MV_INLINE mvi mv_hmaxu(mvi m)
{
    m = _mm256_max_epu32(m, _mm256_permute2x128_si256(m, m, 1));
    m = _mm256_max_epu32(m, _mm256_shuffle_epi32(m, 0x4e));
    return _mm256_max_epu32(m, _mm256_shuffle_epi32(m, 0xb1));
}

/* lane i exchanged with lane i ^ s */
MV_INLINE mvi MV_SWAP(mvi v, size_t s)
{
    if (s == 1) return _mm256_shuffle_epi32(v, 0xb1);
    if (s == 2) return _mm256_shuffle_epi32(v, 0x4e);
    return _mm256_permute2x128_si256(v, v, 1);
}

/* the first k lanes (0 <= k <= 8) */
static const uint32_t mv_ones[16] = {~0u, ~0u, ~0u, ~0u, ~0u, ~0u, ~0u, ~0u};
MV_INLINE mvm mv_firstm(size_t k) { return _mm256_loadu_si256((const __m256i *)(mv_ones + 8 - k)); }

/* lane r: the max of the lanes of f[r], r < 8 (unpacks within 128-bit halves, then across) */
MV_INLINE mvi mv_reduce(const mvi *f)
{
    mvi a[4];
    MV_UNROLL
    for (int i = 0; i < 4; i++)
        a[i] = _mm256_max_epu32(_mm256_unpacklo_epi32(f[2 * i], f[2 * i + 1]),
                                _mm256_unpackhi_epi32(f[2 * i], f[2 * i + 1]));
    mvi b0 = _mm256_max_epu32(_mm256_unpacklo_epi64(a[0], a[1]), _mm256_unpackhi_epi64(a[0], a[1]));
    mvi b1 = _mm256_max_epu32(_mm256_unpacklo_epi64(a[2], a[3]), _mm256_unpackhi_epi64(a[2], a[3]));
    return _mm256_max_epu32(_mm256_permute2x128_si256(b0, b1, 0x20),
                            _mm256_permute2x128_si256(b0, b1, 0x31));
}
/* lane l: lane idx[l] of v (the exponents of a group's blocks to each vector's lanes) */
#define MV_PERM(v, idx) _mm256_permutevar8x32_epi32(v, idx)
/* lane l: lane idx[l] & 7 of a (idx[l] < 8) or of b (8 <= idx[l] < 16): bit 3 to the sign */
#define MV_PERM2(a, b, idx)                                                              \
    _mm256_castps_si256(_mm256_blendv_ps(                                                \
        _mm256_castsi256_ps(_mm256_permutevar8x32_epi32(a, idx)),                        \
        _mm256_castsi256_ps(_mm256_permutevar8x32_epi32(b, idx)),                        \
        _mm256_castsi256_ps(_mm256_slli_epi32(idx, 28))))
MV_INLINE mvi mv_first(mvi v, size_t k) { return _mm256_and_si256(v, mv_firstm(k)); }
MV_INLINE mvf mv_ldpart(const float *p, size_t k) { return _mm256_maskload_ps(p, mv_firstm(k)); }
/* the first k < 8 lanes, in pieces of 4, 2 and 1 (a masked store is slow on AMD cores) */
MV_INLINE void mv_stpart(float *p, mvf v, size_t k)
{
    __m128 h = _mm256_castps256_ps128(v);
    if (k >= 4) {
        _mm_storeu_ps(p, h);
        h = _mm256_extractf128_ps(v, 1);
        p += 4, k -= 4;
    }
    if (k >= 2) {
        _mm_storel_pi((__m64 *)(void *)p, h);
        h = _mm_movehl_ps(h, h);
        p += 2, k -= 2;
    }
    if (k) _mm_store_ss(p, h);
}

/* the last columns of a middle-axis block in the row's last vector, blended (mxbfp_simd.h) */
#define MV_TAILMASK 1
/* tiles of two vectors at most: with 16 registers, tiles of four measured slower
 * (1x64x56x56 MX int8 along axis 1: 1.4x -> 1.6x a copy) */
#define MV_TW 2
#define MXB_NAME qk_mxbfp_avx2
#define MXB_SCALES qk_mxscales_avx2
#include "mxbfp_simd.h"
