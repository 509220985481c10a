/* The MX / BFP quantize-dequantize rules element by element (kernels/mxbfp.h): the scalar
 * kernel (kernels/mxbfp_scalar.c defines MXB_NAME and MXB_SCALES to get the entry points),
 * and the reference the vector kernels (mxbfp_simd.h) follow operation for operation; they
 * also fall back on these functions for the rare layouts they leave out.
 *
 * Plain C on float bits and IEEE float operations; every operation is exactly rounded, so
 * all instruction sets give the same bits. */
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

#if defined(MXB_NAME)
/* Contiguous blocks, each kind with its constants folded in. */
static void mxb_rows(const float *x, float *y, size_t len, const qk_mxbfp *c)
{
    size_t bs = c->block;
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

#if defined(MXB_COLS)
void MXB_COLS(const float *x, float *y, size_t n, size_t inner, size_t col, size_t count,
              const qk_mxbfp *c)
{
    for (size_t end = col + count; col < end; col++) {
        if (c->method == QK_BFP_PRIME) mxb_prime_block(x + col, y + col, n, inner, c);
        else mxb_block(x + col, y + col, n, inner, c->method, c->rounding, c->to_bfloat, c);
    }
}
#endif

void MXB_NAME(const float *x, float *y, size_t outer, size_t len, size_t inner,
              const qk_mxbfp *c)
{
    for (size_t o = 0; o < outer; o++, x += len * inner, y += len * inner) {
        if (inner == 1) mxb_rows(x, y, len, c);
        else mxb_columns(x, y, len, inner, c);
    }
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
#endif
