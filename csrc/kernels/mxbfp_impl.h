/* The MX / BFP quantize-dequantize kernel body (kernels/mxbfp.h), compiled once per
 * instruction set by kernels/mxbfp_<isa>.c with MXB_NAME set to the function's name.
 *
 * Written as plain C on float bits and IEEE float operations, without branches in the
 * element loops, so that the compiler vectorises the contiguous case (one block at a time,
 * two passes over it while it is in L1: the largest exponent, then the elements). Every
 * operation is exactly rounded, so all instruction sets give the same bits. */
#include <string.h>

#include "mxbfp.h"

#if defined(__GNUC__) || defined(__clang__)
#define MXB_INLINE static inline __attribute__((always_inline))
#elif defined(_MSC_VER)
#define MXB_INLINE static __forceinline
#else
#define MXB_INLINE static inline
#endif

/* The SIMD blocks' loops over vectors fully unrolled (their arrays stay in registers): the
 * file is built at -O2, which does not unroll them itself. */
#if defined(__GNUC__) || defined(__clang__)
#define MXB_UNROLL _Pragma("GCC unroll 8")
#else
#define MXB_UNROLL
#endif

MXB_INLINE uint32_t mxb_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
MXB_INLINE float mxb_float(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

/* The biased float32 exponent field. */
MXB_INLINE uint32_t mxb_exp(float f) { return (mxb_bits(f) >> 23) & 0xffu; }

/* 2^k for -149 <= k <= 127 (a subnormal below -126). */
MXB_INLINE float mxb_pow2(int k)
{
    return k >= -126 ? mxb_float((uint32_t)(k + 127) << 23) : mxb_float(1u << (k + 149));
}

/* x / 2^v as Quark divides (one rounding), by multiplications: 2^-v is a float for v >= -127
 * (x * 2^-v is then the correctly rounded quotient); below, the quotient scales up and is
 * exact, done in two exact steps. */
typedef struct { float a, b; } mxb_div;

MXB_INLINE mxb_div mxb_divisor(int v)
{
    mxb_div d;
    if (v >= -127) {
        d.a = mxb_pow2(-v);
        d.b = 1.0f;
    } else {
        d.a = mxb_pow2(127);
        d.b = mxb_pow2(-v - 127);
    }
    return d;
}

/* Bring x to bfloat16 precision (round half to even, as Quark's conversion); NaN is kept
 * (Quark's bit trick can turn a NaN into inf or -0). */
MXB_INLINE float mxb_bfloat(float v)
{
    uint32_t u = mxb_bits(v);
    uint32_t r = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
    return (u & 0x7fffffffu) > 0x7f800000u ? v : mxb_float(r);
}

/* t rounded to an integer, Quark's three modes, with the sign of zero its functions give:
 * 0 std::round (half away from zero), 1 "DPU" (half up: ceil for negative halves),
 * 2 "py3" (half to even through floor, so a negative value rounding to 0 gives +0, -0 stays).
 * Finite |t| < 2^23; other values give a result that callers do not use. */
MXB_INLINE float mxb_round(float t, int mode)
{
    /* written so that gcc vectorises it: masks instead of selects ahead of the float->int
     * conversion, one conversion, the parity from float bits, no short-circuit logic */
    uint32_t tb = mxb_bits(t), sgn = tb & 0x80000000u, ab = tb & 0x7fffffffu;
    ab &= 0u - (uint32_t)(ab < 0x4b000000u);   /* NaN / inf / >= 2^23: 0, no UB */
    float a = mxb_float(ab);
    float tr = (float)(int32_t)a;              /* trunc(|t|) */
    float fr = a - tr;                         /* exact */
    int up;
    if (mode == 0) {
        up = fr >= 0.5f;
    } else if (mode == 1) {
        up = (fr > 0.5f) | ((fr == 0.5f) & (sgn == 0u));
    } else {
        int odd = (int)(mxb_bits(tr + 8388608.0f) & 1u);   /* tr < 2^23: its last bit */
        up = (fr > 0.5f) | ((fr == 0.5f) & odd);
    }
    float mag = tr + (up ? 1.0f : 0.0f);       /* tr >= +0: adding +0 changes nothing */
    if (mode == 2) sgn &= 0u - (uint32_t)!((mag == 0.0f) & (fr != 0.0f));   /* floor + 1 = +0 */
    return mxb_float(mxb_bits(mag) | sgn);
}

/* MX element, float types: e = x / scale rounded half to even to the element type
 * (mbits mantissa bits, smallest normal exponent emin, no upper exponent limit), saturated
 * at max_norm, a zero result +0; then times the scale. */
MXB_INLINE float mxb_mx_float(float x, mxb_div d, float s, int mbits, int emin, float maxn)
{
    float e = (x * d.a) * d.b;
    uint32_t u = mxb_bits(e), sgn = u & 0x80000000u, au = u & 0x7fffffffu;
    int ex = (int)(au >> 23) - 127;
    ex = ex < emin ? emin : ex;
    /* adding 2^23 quanta rounds |e| to a multiple of the quantum 2^(ex - mbits) */
    float magic = mxb_float((uint32_t)(ex - mbits + 23 + 127) << 23);
    float r = (mxb_float(au) + magic) - magic;
    r = r > maxn ? maxn : r;
    uint32_t rb = mxb_bits(r);
    float out = s * mxb_float(rb ? rb | sgn : 0u);
    return mxb_exp(x) == 255u ? x : out;
}

/* The same in x's own scale, for blocks whose scale 2^v and largest exponent B lie within
 * [-100, 100]: e = x / 2^v is exact there (or, when subnormal, far below half the quantum:
 * zero either way), so rounding x to multiples of the quantum times 2^v and saturating at
 * max_norm * 2^v gives the same bits as Quark's divide, round, multiply, with no
 * multiplication. `floor` is the exponent field of the type's smallest normal in x's scale,
 * `add` the field offset from a value's exponent to the rounding constant's (23 - mbits). */
MXB_INLINE float mxb_mx_float_fast(float x, uint32_t floor, uint32_t add, float maxs)
{
    uint32_t u = mxb_bits(x), sgn = u & 0x80000000u, f = u & 0x7f800000u;
    uint32_t g = f > floor ? f : floor;
    /* the constant carries x's sign: rounding is symmetric, and a zero result comes out as
     * (-M) + M = +0, as Quark's */
    float magic = mxb_float((g + add) | sgn);
    float r = (x + magic) - magic;
    r = r > maxs ? maxs : r;
    r = r < -maxs ? -maxs : r;
    return f == 0x7f800000u ? x : r;
}

/* MX element, int8: e / 2^-6 rounded by `mode`, clamped to [-128, 127], times 2^-6 and
 * the scale. The int8 scale 2^v has v >= -127, so e = x * 2^-v is one multiplication (a),
 * and q * (s / 64) is Quark's s * (q * 2^-6): s / 64 >= 2^-133 is exact, one rounding of
 * the same product either way. e * 64 stays a step of its own (an e that underflowed to
 * -0 must stay -0 for half-to-even's sign of zero). */
MXB_INLINE float mxb_mx_int8(float x, float a, float s64, int mode)
{
    float t = (x * a) * 64.0f;
    float q = mxb_round(t, mode);
    q = q > 127.0f ? 127.0f : q;
    q = q < -128.0f ? -128.0f : q;
    float out = q * s64;
    return (mxb_bits(x) & 0x7f800000u) == 0x7f800000u ? x : out;
}

/* BFP element (to_bfp): round(x / scale) * scale clamped to +-max_v. */
MXB_INLINE float mxb_bfp(float x, mxb_div d, float s, float maxv, int mode)
{
    float q = mxb_round((x * d.a) * d.b, mode) * s;
    q = q > maxv ? maxv : q;
    q = q < -maxv ? -maxv : q;
    return mxb_exp(x) == 255u ? x : q;
}

MXB_INLINE float mxb_load(const float *x, size_t i, int tb)
{
    return tb ? mxb_bfloat(x[i]) : x[i];
}

/* The largest exponent field of a block; NaN / inf count as 0 unless `keep_special`.
 * Without them, field + 1 is taken (exponent 255 wraps to 0 in the field: two integer
 * operations per element, which the compiler vectorises) and 1 taken off at the end. */
MXB_INLINE uint32_t mxb_max_exp(const float *x, size_t n, size_t st, int tb, int keep_special)
{
    uint32_t m = 0;
    if (keep_special) {
        for (size_t i = 0; i < n; i++) {
            uint32_t f = mxb_bits(mxb_load(x, i * st, tb)) & 0x7f800000u;
            m = m < f ? f : m;
        }
        return m >> 23;
    }
    for (size_t i = 0; i < n; i++) {
        uint32_t f = (mxb_bits(mxb_load(x, i * st, tb)) + 0x00800000u) & 0x7f800000u;
        m = m < f ? f : m;
    }
    return m ? (m >> 23) - 1u : 0u;
}

/* One MX or to_bfp block of n elements at stride st. */
MXB_INLINE void mxb_block(const float *x, float *y, size_t n, size_t st, int method, int mode,
                          int tb, const qk_mxbfp *c)
{
    int m = (int)mxb_max_exp(x, n, st, tb, 0);
    if (method == QK_MX_FLOAT || method == QK_MX_INT8) {
        int v = m - 127 - c->emax;
        float s = mxb_pow2(v);
        mxb_div d = mxb_divisor(v);
        if (method == QK_MX_FLOAT && v >= -100 && m - 127 <= 100) {
            uint32_t floor = (uint32_t)(c->emin + v + 127) << 23;
            uint32_t add = (uint32_t)(23 - c->mbits) << 23;
            float maxs = c->max_norm * s;   /* exact */
            for (size_t i = 0; i < n; i++)
                y[i * st] = mxb_mx_float_fast(x[i * st], floor, add, maxs);
        } else if (method == QK_MX_FLOAT) {
            int mbits = c->mbits, emin = c->emin;
            float maxn = c->max_norm;
            for (size_t i = 0; i < n; i++)
                y[i * st] = mxb_mx_float(x[i * st], d, s, mbits, emin, maxn);
        } else {
            float s64 = s * 0.015625f;   /* exact: v >= -127 */
            for (size_t i = 0; i < n; i++) y[i * st] = mxb_mx_int8(x[i * st], d.a, s64, mode);
        }
    } else {
        int v = m - 127 - (c->mbits - 1);
        float s = mxb_pow2(v);
        float maxv = s * (float)((1u << c->mbits) - 1u);   /* 2^(e+1) - s, exact */
        mxb_div d = mxb_divisor(v);
        for (size_t i = 0; i < n; i++)
            y[i * st] = mxb_bfp(mxb_load(x, i * st, tb), d, s, maxv, mode);
    }
}

/* One to_bfp_prime block: integer rounding of the mantissas against the shared exponent
 * less each sub-block's shift; subnormals flush to zero; a block holding NaN or inf becomes
 * 0x7FFFFFFF throughout. A short last block's missing elements would be +0 (no effect). */
static void mxb_prime_block(const float *x, float *y, size_t n, size_t st, const qk_mxbfp *c)
{
    int tb = c->to_bfloat, mode = c->rounding, mbits = c->mbits;
    uint32_t m = mxb_max_exp(x, n, st, tb, 1), upper = (1u << mbits) - 1u;
    if (m == 255u) {
        for (size_t i = 0; i < n; i++) y[i * st] = mxb_float(0x7fffffffu);
        return;
    }
    for (size_t b0 = 0; b0 < n; b0 += c->sub_block) {
        size_t k = n - b0 < c->sub_block ? n - b0 : c->sub_block;
        const float *xs = x + b0 * st;
        uint32_t ms = mxb_max_exp(xs, k, st, tb, 1);
        uint32_t shift = m - ms > c->shift_max ? c->shift_max : m - ms;
        /* a nonzero mantissa needs ms >= 1, which keeps kexp >= -148 */
        int kexp = (int)m - 127 - (int)shift + 1 - mbits;
        float p = kexp >= -149 ? mxb_pow2(kexp) : 0.0f;
        for (size_t j = 0; j < k; j++) {
            uint32_t u = mxb_bits(mxb_load(xs, j * st, tb)), e = (u >> 23) & 0xffu;
            uint32_t sgn = u & 0x80000000u;
            uint32_t man = e ? (u & 0x7fffffu) | 0x800000u : 0u;
            uint32_t nb = m - shift - e + 24u - (uint32_t)mbits;   /* >= 1 */
            nb = nb > 31u ? 31u : nb;       /* beyond 25 the result is 0 either way */
            uint32_t ret = man >> nb, tail = man & ((1u << nb) - 1u), half = 1u << (nb - 1u);
            int tie_up = mode == 0 ? 1 : mode == 1 ? !sgn : (int)(ret & 1u);
            int up = ret != upper && (tail > half || (tail == half && tie_up));
            float v = (float)(ret + (uint32_t)up) * p;
            y[(b0 + j) * st] = sgn ? -v : v;
        }
    }
}

#if defined(__AVX512F__) || defined(__AVX2__)
/* a 32-bit pattern as the int the set1 intrinsics take */
MXB_INLINE int32_t mxb_i32(uint32_t u) { int32_t v; memcpy(&v, &u, 4); return v; }
#endif

#if defined(__AVX512F__) && defined(__AVX512DQ__)
#include <immintrin.h>
#define MXB_V32 1
/* Whole MX blocks of 32 along rows on AVX-512: the float kinds and int8 with rounding mode 0
 * (Quark's default), in registers, four blocks at a time. The same results as the scalar
 * forms above (mxb_mx_float_fast; mxb_mx_int8 with mxb_round's mode 0), with the block's
 * constants built as bit patterns from its largest exponent field M:
 *   float: F = 2^(emin - emax) * 2^(M - 127), the type's smallest normal in x's scale, and
 *          maxs = max_norm * 2^v (exact), when 27 + emax <= m <= 227 (mxb_block's fast range);
 *          each element: g = +-max(2^e, F) with x's sign and e x's exponent (x & 0xff800000
 *          keeps the sign and 2^e; vrangeps takes the larger magnitude with the first
 *          operand's sign), then r = (x + g K) - g K with K = 2^(23 - mbits) in two fused
 *          operations (g K exact: the adding constant of mxb_mx_float_fast), clamped to
 *          +-maxs by a second vrangeps (the smaller magnitude, r's sign);
 *   int8:  a64 = 64 * 2^-v = (260 << 23) - M, s64 = 2^(v - 6) = M - (6 << 23), both normal
 *          when 7 <= m <= 253 (|t| < 128 there). t = x * a64 equals mxb_mx_int8's
 *          (x * 2^-v) * 64 (both exact while x * 2^-v is normal; otherwise |t| < 2^-120
 *          either way, which rounds to a zero of x's sign); half away from zero is
 *          trunc(t + copysign(0.5 - 2^-25, t)), exact for |t| < 2^22 (the sum rounds up to
 *          the next integer only when t's fraction is at least 0.5), and the fused
 *          x * a64 + c rounds once the exact t + c.
 * M comes from 2^e of the elements (mxb_v_e), the larger magnitude lane-wise by vrangeps
 * (sign cleared; the mask makes a NaN an inf, which vrangeps keeps where it would drop a quiet
 * NaN), then integer maxima; a NaN or inf gives field 255, outside both ranges, so the block
 * takes mxb_block, which keeps them. */
typedef struct {
    __m512i lo, span, fl, mx;
    __m512 k;
} mxb_vk;

MXB_INLINE mxb_vk mxb_v_consts(int is_int8, const qk_mxbfp *c)
{
    mxb_vk k;
    int32_t lo = is_int8 ? 7 : 27 + c->emax, hi = is_int8 ? 253 : 227;
    k.lo = _mm512_set1_epi32(lo * (1 << 23));
    k.span = _mm512_set1_epi32((hi - lo) * (1 << 23));
    if (is_int8) {   /* fl: a64 = fl - M, mx: s64 = M + mx */
        k.fl = _mm512_set1_epi32(mxb_i32(260u << 23));
        k.mx = _mm512_set1_epi32(-(6 << 23));
        k.k = _mm512_set1_ps(0.49999997f);   /* 0.5 - 2^-25 */
    } else {
        k.fl = _mm512_set1_epi32((c->emin - c->emax) * (1 << 23));
        k.mx = _mm512_set1_epi32((int32_t)mxb_bits(c->max_norm) - (127 + c->emax) * (1 << 23));
        k.k = _mm512_set1_ps(mxb_float((uint32_t)(150 - c->mbits) << 23));   /* 2^(23 - mbits) */
    }
    return k;
}

/* x's sign and 2^(its exponent) (NaN: +-inf; zero and subnormals: +-0) */
MXB_INLINE __m512 mxb_v_e(__m512 x)
{
    return _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(x),
                                                _mm512_set1_epi32((int)0xff800000u)));
}

/* One vector of 16 elements (e: mxb_v_e) of a block with constants f (F or a64) and s (maxs or s64) */
MXB_INLINE void mxb_v_vec(float *y, __m512 xv, __m512 e, __m512 f, __m512 s, int is_int8,
                          const mxb_vk *k)
{
    if (!is_int8) {
        __m512 g = _mm512_range_ps(e, f, 0x03);   /* larger magnitude, e's sign */
        __m512 t = _mm512_fmadd_ps(g, k->k, xv);
        __m512 r = _mm512_fnmadd_ps(g, k->k, t);   /* t - g K, exact */
        _mm512_storeu_ps(y, _mm512_range_ps(r, s, 0x02));
        return;
    }
    __m512 c = _mm512_castsi512_ps(_mm512_ternarylogic_epi32(
        _mm512_castps_si512(k->k), _mm512_castps_si512(xv), _mm512_set1_epi32((int)0x80000000u),
        0xf8));   /* k | (x & sign) */
    __m512 q = _mm512_roundscale_ps(_mm512_fmadd_ps(xv, f, c),
                                    _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    q = _mm512_min_ps(q, _mm512_set1_ps(127.0f));   /* |q| <= 128 */
    _mm512_storeu_ps(y, _mm512_mul_ps(q, s));
}

/* 1 when the block at x was done; 0: it is outside the fast range */
MXB_INLINE int mxb_v_block32(const float *x, float *y, int is_int8, const mxb_vk *k)
{
    __m512 x0 = _mm512_loadu_ps(x), x1 = _mm512_loadu_ps(x + 16);
    __m512 e0 = mxb_v_e(x0), e1 = mxb_v_e(x1);
    __m512i m = _mm512_castps_si512(_mm512_range_ps(e0, e1, 0x0b));
    m = _mm512_max_epu32(m, _mm512_shuffle_i32x4(m, m, 0x4e));
    m = _mm512_max_epu32(m, _mm512_shuffle_i32x4(m, m, 0xb1));
    m = _mm512_max_epu32(m, _mm512_shuffle_epi32(m, (_MM_PERM_ENUM)0x4e));
    m = _mm512_max_epu32(m, _mm512_shuffle_epi32(m, (_MM_PERM_ENUM)0xb1));
    if (_mm512_cmpgt_epu32_mask(_mm512_sub_epi32(m, k->lo), k->span)) return 0;
    __m512 f = _mm512_castsi512_ps(is_int8 ? _mm512_sub_epi32(k->fl, m)
                                           : _mm512_add_epi32(m, k->fl));
    __m512 s = _mm512_castsi512_ps(_mm512_add_epi32(m, k->mx));
    mxb_v_vec(y, x0, e0, f, s, is_int8, k);
    mxb_v_vec(y + 16, x1, e1, f, s, is_int8, k);
    return 1;
}

/* Four blocks, their maxima reduced together (128-bit quarter b: block b); 0 when any is
 * outside the fast range (nothing written). */
MXB_INLINE int mxb_v_block128(const float *x, float *y, int is_int8, const mxb_vk *k)
{
    __m512 xv[8], e[8];
    __m512i a[4];
    MXB_UNROLL
    for (int j = 0; j < 8; j++) {
        xv[j] = _mm512_loadu_ps(x + 16 * j);
        e[j] = mxb_v_e(xv[j]);
    }
    MXB_UNROLL
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
#define MXB_V_B(b, imm)                                                                    \
    do {                                                                                   \
        __m512 fb = _mm512_castsi512_ps(_mm512_shuffle_i32x4(f, f, imm));                  \
        __m512 sb = _mm512_castsi512_ps(_mm512_shuffle_i32x4(s, s, imm));                  \
        mxb_v_vec(y + 32 * (b), xv[2 * (b)], e[2 * (b)], fb, sb, is_int8, k);              \
        mxb_v_vec(y + 32 * (b) + 16, xv[2 * (b) + 1], e[2 * (b) + 1], fb, sb, is_int8, k); \
    } while (0)
    MXB_V_B(0, 0x00);
    MXB_V_B(1, 0x55);
    MXB_V_B(2, 0xaa);
    MXB_V_B(3, 0xff);
#undef MXB_V_B
    return 1;
}
#define MXB_V128 1
#elif defined(__AVX2__)
#include <immintrin.h>
#define MXB_V32 1
/* The same on AVX2 (with FMA), one block of four vectors of 8 at a time: M from the
 * exponent fields x & 0x7f800000 (NaN / inf: 255, outside the fast range), g = max(field, F)
 * with x's sign put back, the clamp as min / max with +-maxs. */
typedef struct {
    int32_t lo, span;
    __m256i fl, mx;
    __m256 k;
} mxb_vk;

MXB_INLINE mxb_vk mxb_v_consts(int is_int8, const qk_mxbfp *c)
{
    mxb_vk k;
    int32_t lo = is_int8 ? 7 : 27 + c->emax, hi = is_int8 ? 253 : 227;
    k.lo = lo * (1 << 23);
    k.span = (hi - lo) * (1 << 23);
    if (is_int8) {
        k.fl = _mm256_set1_epi32(mxb_i32(260u << 23));
        k.mx = _mm256_set1_epi32(-(6 << 23));
        k.k = _mm256_set1_ps(0.49999997f);
    } else {
        k.fl = _mm256_set1_epi32((c->emin - c->emax) * (1 << 23));
        k.mx = _mm256_set1_epi32((int32_t)mxb_bits(c->max_norm) - (127 + c->emax) * (1 << 23));
        k.k = _mm256_set1_ps(mxb_float((uint32_t)(150 - c->mbits) << 23));
    }
    return k;
}

MXB_INLINE int mxb_v_block32(const float *x, float *y, int is_int8, const mxb_vk *k)
{
    const __m256i fexp = _mm256_set1_epi32(0x7f800000), smask = _mm256_set1_epi32((int)0x80000000u);
    __m256 xv[4];
    __m256i f[4], m = _mm256_setzero_si256();
    MXB_UNROLL
    for (int j = 0; j < 4; j++) {
        xv[j] = _mm256_loadu_ps(x + 8 * j);
        f[j] = _mm256_and_si256(_mm256_castps_si256(xv[j]), fexp);
        m = _mm256_max_epu32(m, f[j]);
    }
    m = _mm256_max_epu32(m, _mm256_permute2x128_si256(m, m, 1));
    m = _mm256_max_epu32(m, _mm256_shuffle_epi32(m, 0x4e));
    m = _mm256_max_epu32(m, _mm256_shuffle_epi32(m, 0xb1));
    /* every lane holds M: the range test on lane 0, in integers */
    if ((uint32_t)(_mm256_cvtsi256_si32(m) - k->lo) > (uint32_t)k->span) return 0;
    if (!is_int8) {
        __m256i floor = _mm256_add_epi32(m, k->fl);
        __m256i maxs = _mm256_add_epi32(m, k->mx);
        MXB_UNROLL
        for (int j = 0; j < 4; j++) {
            __m256i sg = _mm256_and_si256(_mm256_castps_si256(xv[j]), smask);
            __m256 g = _mm256_castsi256_ps(_mm256_or_si256(_mm256_max_epu32(f[j], floor), sg));
            __m256 t = _mm256_fmadd_ps(g, k->k, xv[j]);
            __m256 r = _mm256_fnmadd_ps(g, k->k, t);   /* t - g K, exact */
            /* r has x's sign or is +0: the smaller of r and +-maxs (x's sign) as unsigned
             * bits is the smaller magnitude */
            _mm256_storeu_si256((__m256i *)(y + 8 * j),
                                _mm256_min_epu32(_mm256_castps_si256(r), _mm256_or_si256(maxs, sg)));
        }
        return 1;
    }
    __m256 a = _mm256_castsi256_ps(_mm256_sub_epi32(k->fl, m));
    __m256 s64 = _mm256_castsi256_ps(_mm256_add_epi32(m, k->mx));
    MXB_UNROLL
    for (int j = 0; j < 4; j++) {
        __m256 c = _mm256_or_ps(_mm256_and_ps(xv[j], _mm256_castsi256_ps(smask)), k->k);
        __m256 q = _mm256_round_ps(_mm256_fmadd_ps(xv[j], a, c),
                                   _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
        q = _mm256_min_ps(q, _mm256_set1_ps(127.0f));   /* |q| <= 128 */
        _mm256_storeu_ps(y + 8 * j, _mm256_mul_ps(q, s64));
    }
    return 1;
}
#endif

/* Contiguous blocks, each kind with its constants folded in. */
static void mxb_rows(const float *x, float *y, size_t len, const qk_mxbfp *c)
{
    size_t bs = c->block;
#if defined(MXB_V32)
    if (bs == 32 && (c->method == QK_MX_FLOAT || (c->method == QK_MX_INT8 && c->rounding == 0))) {
        int i8 = c->method == QK_MX_INT8;
        mxb_vk k = mxb_v_consts(i8, c);
        size_t r = 0;
        for (; len - r >= 32; r += 32) {
#if defined(MXB_V128)
            /* four blocks at a time; a group holding a slow block goes one block at a time */
            if (len - r >= 128 &&
                (i8 ? mxb_v_block128(x + r, y + r, 1, &k) : mxb_v_block128(x + r, y + r, 0, &k))) {
                r += 96;
                continue;
            }
#endif
            if (i8 ? mxb_v_block32(x + r, y + r, 1, &k) : mxb_v_block32(x + r, y + r, 0, &k))
                continue;
            if (i8) mxb_block(x + r, y + r, 32, 1, QK_MX_INT8, 0, 0, c);
            else mxb_block(x + r, y + r, 32, 1, QK_MX_FLOAT, 0, 0, c);
        }
        x += r;
        y += r;
        len -= r;
    }
#endif
    for (size_t r = 0; r < len; r += bs) {
        size_t n = len - r < bs ? len - r : bs;
        const float *xb = x + r;
        float *yb = y + r;
        if (n == 32 && c->method == QK_MX_FLOAT) {   /* the usual MX block: a fixed count */
            mxb_block(xb, yb, 32, 1, QK_MX_FLOAT, 0, 0, c);
            continue;
        }
        switch (c->method) {
        case QK_MX_FLOAT: mxb_block(xb, yb, n, 1, QK_MX_FLOAT, 0, 0, c); break;
        case QK_MX_INT8:
            if (c->rounding == 1) mxb_block(xb, yb, n, 1, QK_MX_INT8, 1, 0, c);
            else if (c->rounding == 2) mxb_block(xb, yb, n, 1, QK_MX_INT8, 2, 0, c);
            else mxb_block(xb, yb, n, 1, QK_MX_INT8, 0, 0, c);
            break;
        case QK_BFP:
            if (c->to_bfloat) mxb_block(xb, yb, n, 1, QK_BFP, c->rounding, 1, c);
            else if (c->rounding == 1) mxb_block(xb, yb, n, 1, QK_BFP, 1, 0, c);
            else if (c->rounding == 2) mxb_block(xb, yb, n, 1, QK_BFP, 2, 0, c);
            else mxb_block(xb, yb, n, 1, QK_BFP, 0, 0, c);
            break;
        default: mxb_prime_block(xb, yb, n, 1, c); break;
        }
    }
}

/* Blocks down the rows of each column (the axis is not the last one): one generic form. */
static void mxb_columns(const float *x, float *y, size_t len, size_t inner, const qk_mxbfp *c)
{
    size_t bs = c->block;
    for (size_t r = 0; r < len; r += bs) {
        size_t n = len - r < bs ? len - r : bs;
        for (size_t col = 0; col < inner; col++) {
            const float *xb = x + r * inner + col;
            float *yb = y + r * inner + col;
            if (c->method == QK_BFP_PRIME) mxb_prime_block(xb, yb, n, inner, c);
            else mxb_block(xb, yb, n, inner, c->method, c->rounding, c->to_bfloat, c);
        }
    }
}

void MXB_NAME(const float *x, float *y, size_t len, size_t inner, const qk_mxbfp *c)
{
    if (inner == 1) mxb_rows(x, y, len, c);
    else mxb_columns(x, y, len, inner, c);
}

/* OCP MX scales: the e8m0 code of each block, its largest exponent field (NaN / inf not
 * counting) less `shift` (the element type's emax, plus 6 for int8's fixed point), at least
 * 0 (2^-127, e8m0's smallest). Codes of slab blocks are stored (blocks, inner). */
void MXB_SCALES(const float *x, uint8_t *s, size_t len, size_t inner, size_t block, int shift)
{
    for (size_t r = 0, k = 0; r < len; r += block, k++) {
        size_t n = len - r < block ? len - r : block;
        for (size_t col = 0; col < inner; col++) {
            int code = (int)mxb_max_exp(x + r * inner + col, n, inner, 0, 0) - shift;
            s[k * inner + col] = (uint8_t)(code < 0 ? 0 : code);
        }
    }
}
