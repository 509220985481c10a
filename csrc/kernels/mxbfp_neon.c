/* MX / BFP quantize-dequantize for the neon tier (flags in csrc/sources.txt): the AArch64
 * Advanced SIMD vector layer of kernels/mxbfp_simd.h, 4 lanes. Baseline ARMv8-A: FRINTZ /
 * FRINTN round, FMLA / FMLS fuse, USHL shifts by lane; float operations on denormals are
 * IEEE under the default FPCR (no flush to zero). */
#include <arm_neon.h>
#include <stdint.h>
#include <string.h>

#include "mxbfp.h"

#if defined(_MSC_VER) && !defined(__clang__)
#define MV_INLINE static __forceinline
#define MV_UNROLL
#else
#define MV_INLINE static inline __attribute__((always_inline, unused))
#define MV_UNROLL _Pragma("GCC unroll 16")
#endif
#define MV_W 4
typedef float32x4_t mvf;
typedef uint32x4_t mvi;
typedef uint32x4_t mvm;   /* all ones / zero per lane */

MV_INLINE uint32_t mv_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
MV_INLINE mvi mv_seti(uint32_t v) { return vdupq_n_u32(v); }
MV_INLINE mvf mv_setf(float f) { return vdupq_n_f32(f); }
MV_INLINE mvf mv_ldf(const float *p) { return vld1q_f32(p); }
MV_INLINE void mv_stf(float *p, mvf v) { vst1q_f32(p, v); }
MV_INLINE void mv_sti(uint32_t *p, mvi v) { vst1q_u32(p, v); }
MV_INLINE mvi mv_f2i(mvf v) { return vreinterpretq_u32_f32(v); }
MV_INLINE mvf mv_i2f(mvi v) { return vreinterpretq_f32_u32(v); }
MV_INLINE mvi mv_and(mvi a, mvi b) { return vandq_u32(a, b); }
MV_INLINE mvi mv_or(mvi a, mvi b) { return vorrq_u32(a, b); }
MV_INLINE mvi mv_xor(mvi a, mvi b) { return veorq_u32(a, b); }
MV_INLINE mvi mv_add(mvi a, mvi b) { return vaddq_u32(a, b); }
MV_INLINE mvi mv_sub(mvi a, mvi b) { return vsubq_u32(a, b); }
MV_INLINE mvi mv_maxu(mvi a, mvi b) { return vmaxq_u32(a, b); }
MV_INLINE mvi mv_minu(mvi a, mvi b) { return vminq_u32(a, b); }
#define mv_srli(a, n) vshrq_n_u32(a, n)
MV_INLINE mvm mv_eq(mvi a, mvi b) { return vceqq_u32(a, b); }
MV_INLINE mvm mv_gts(mvi a, mvi b) { return vcgtq_s32(vreinterpretq_s32_u32(a), vreinterpretq_s32_u32(b)); }
MV_INLINE mvi mv_sel(mvm m, mvi a, mvi b) { return vbslq_u32(m, a, b); }
MV_INLINE mvf mv_self(mvm m, mvf a, mvf b) { return vbslq_f32(m, a, b); }
MV_INLINE mvm mv_mand(mvm a, mvm b) { return vandq_u32(a, b); }
MV_INLINE mvm mv_mor(mvm a, mvm b) { return vorrq_u32(a, b); }
MV_INLINE mvm mv_mandnot(mvm a, mvm b) { return vbicq_u32(a, b); }   /* a & ~b */
MV_INLINE int mv_all(mvm m) { return vminvq_u32(m) == 0xffffffffu; }
MV_INLINE uint32_t mv_lane0(mvi v) { return vgetq_lane_u32(v, 0); }
MV_INLINE mvm mv_feq(mvf a, mvf b) { return vceqq_f32(a, b); }
MV_INLINE mvm mv_fgt(mvf a, mvf b) { return vcgtq_f32(a, b); }
MV_INLINE mvf mv_addf(mvf a, mvf b) { return vaddq_f32(a, b); }
MV_INLINE mvf mv_subf(mvf a, mvf b) { return vsubq_f32(a, b); }
MV_INLINE mvf mv_mulf(mvf a, mvf b) { return vmulq_f32(a, b); }
/* min / max of values that are never NaN where the result is used */
MV_INLINE mvf mv_minf(mvf a, mvf b) { return vminq_f32(a, b); }
MV_INLINE mvf mv_maxf(mvf a, mvf b) { return vmaxq_f32(a, b); }
MV_INLINE mvf mv_fma(mvf a, mvf b, mvf c) { return vfmaq_f32(c, a, b); }    /* a b + c */
MV_INLINE mvf mv_fnma(mvf a, mvf b, mvf c) { return vfmsq_f32(c, a, b); }   /* c - a b */
MV_INLINE mvf mv_trunc(mvf v) { return vrndq_f32(v); }
MV_INLINE mvf mv_rne(mvf v) { return vrndnq_f32(v); }
MV_INLINE mvi mv_hmaxu(mvi m) { return vdupq_n_u32(vmaxvq_u32(m)); }

/* lane i exchanged with lane i ^ s */
MV_INLINE mvi MV_SWAP(mvi v, size_t s)
{
    if (s == 1) return vrev64q_u32(v);
    return vextq_u32(v, v, 2);
}

/* the first k lanes (0 <= k <= 4) */
static const uint32_t mv_ones[8] = {~0u, ~0u, ~0u, ~0u};
MV_INLINE mvm mv_firstm(size_t k) { return vld1q_u32(mv_ones + 4 - k); }
MV_INLINE mvi mv_first(mvi v, size_t k) { return vandq_u32(v, mv_firstm(k)); }
MV_INLINE mvf mv_ldpart(const float *p, size_t k)
{
    float b[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    memcpy(b, p, k * sizeof(float));
    return vld1q_f32(b);
}
MV_INLINE void mv_stpart(float *p, mvf v, size_t k)
{
    if (k >= 2) {
        vst1_f32(p, vget_low_f32(v));
        if (k == 3) vst1q_lane_f32(p + 2, v, 2);
    } else if (k) {
        vst1q_lane_f32(p, v, 0);
    }
}

/* lane r: the max of the lanes of f[r], r < 4 (pairwise maxima) */
MV_INLINE mvi mv_reduce(const mvi *f)
{
    return vpmaxq_u32(vpmaxq_u32(f[0], f[1]), vpmaxq_u32(f[2], f[3]));
}

/* the wheel's size: blocks along rows of one vector at most in groups, tiles of one vector
 * of columns (a line is four vectors here) */
#define MV_GMAX 1
#define MV_TILE1 1
#define MXB_NAME qk_mxbfp_neon
#define MXB_SCALES qk_mxscales_neon
#include "mxbfp_simd.h"
