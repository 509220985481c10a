/* AArch64 Advanced SIMD (NEON) kernels: the vector layer of the generic driver
 * (generic/driver.h) over 4 float32 lanes. Baseline ARMv8-A only: half-precision values are
 * converted with FCVTL / FCVTN, never computed in, so the file runs on cores without FP16
 * arithmetic (Cortex-A72). FMA serves only the exact reciprocal form of the quotient
 * (docs/EXACT-DIVISION.md); every other product is rounded on its own, as in scalar.c (the
 * file is built with -ffp-contract=off, as every kernel file).
 *
 * The driver's contract was written against x86's NaN rules; AArch64's differ: FMIN / FMAX
 * return NaN when either operand is NaN, FMINNM / FMAXNM return the number when the other
 * operand is a quiet NaN, FCVTNS converts NaN to 0 and saturates beyond int32. Each operation
 * below says how it returns what the driver asks for. */
#include <arm_neon.h>
#include <math.h>
#include <string.h>

#include "kernels.h"
#include "convert.h"

#define QV_W 4
#define QV_ISA neon
#define QV_FMA 1
#define QV_F16 1       /* float16 rounding by FCVTN / FCVTL */
#define QV_FP 1        /* float8 / float6 / float4 outputs and inputs */
#define QV_QUARK 1     /* AMD Quark's 32-bit and half-precision types */
#define QV_FP8_REC 1   /* float8 by the reciprocal form: FDIV is slow on every ARM core */
#define QV_NT 0        /* no non-temporal stores: p->stream is ignored (driver.h) */
#define QV_CODES4 1    /* qv_codes4: a chunk of integer codes minus zero points at once */
#define QV_PAIR 1      /* integer codes two chunks at a time (driver.h's qd_qpair) */
/* driver.h's long-row and block-run loops left out: the static scalar + NEON library has no
 * room for more loops per entry */
#define QD_LONG_ROWS 0
#define QD_BLOCK_RUN 0
#define QD_ALIGN_STORES 0   /* (16-byte stores: one in four crosses a line; code size) */

typedef float32x4_t vf;
typedef int32x4_t vi;

QK_ALWAYS_INLINE vf qv_set1(float f) { return vdupq_n_f32(f); }
QK_ALWAYS_INLINE vi qv_set1_i(int32_t v) { return vdupq_n_s32(v); }
QK_ALWAYS_INLINE vf qv_loadu_f(const float *p) { return vld1q_f32(p); }
QK_ALWAYS_INLINE vi qv_loadu_i(const int32_t *p) { return vld1q_s32(p); }
QK_ALWAYS_INLINE void qv_storeu_f(float *p, vf v) { vst1q_f32(p, v); }
QK_ALWAYS_INLINE vf qv_add_f(vf a, vf b) { return vaddq_f32(a, b); }
QK_ALWAYS_INLINE vf qv_mul(vf a, vf b) { return vmulq_f32(a, b); }
QK_ALWAYS_INLINE vf qv_div(vf a, vf b) { return vdivq_f32(a, b); }
/* x86's a < b ? a : b and a > b ? a : b (b for NaN and for equal values): a compare and a
 * select */
QK_ALWAYS_INLINE vf qv_min(vf a, vf b) { return vbslq_f32(vcltq_f32(a, b), a, b); }
QK_ALWAYS_INLINE vf qv_max(vf a, vf b) { return vbslq_f32(vcgtq_f32(a, b), a, b); }
QK_ALWAYS_INLINE vf qv_fmadd(vf a, vf b, vf c) { return vfmaq_f32(c, a, b); }    /* a*b+c */
QK_ALWAYS_INLINE vf qv_fnmadd(vf a, vf b, vf c) { return vfmsq_f32(c, a, b); }   /* c-a*b */
QK_ALWAYS_INLINE vi qv_add_i(vi a, vi b) { return vaddq_s32(a, b); }
QK_ALWAYS_INLINE vi qv_sub_i(vi a, vi b) { return vsubq_s32(a, b); }
QK_ALWAYS_INLINE vi qv_or_i(vi a, vi b) { return vorrq_s32(a, b); }
QK_ALWAYS_INLINE vi qv_and_i(vi a, vi b) { return vandq_s32(a, b); }
QK_ALWAYS_INLINE vf qv_cvt_i2f(vi a) { return vcvtq_f32_s32(a); }   /* nearest even */

static const uint8_t qv_iota[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
static const uint32_t qv_lane[4] = {0, 1, 2, 3};

/* qv_blend: lanes [0, k) of a, the rest of b. qv_splice: the last k lanes of a, then the
 * first QV_W - k of b (0 < k < QV_W): bytes 16 - 4k .. 31 - 4k of the pair, one table
 * lookup. qv_perm: lane i = lane idx[i] of v, a lookup of the bytes 4 idx[i] + 0..3. */
QK_ALWAYS_INLINE uint32x4_t qv_below(unsigned k)
{
    return vcltq_u32(vld1q_u32(qv_lane), vdupq_n_u32(k));
}
QK_ALWAYS_INLINE vi qv_blend_i(vi a, vi b, unsigned k) { return vbslq_s32(qv_below(k), a, b); }
QK_ALWAYS_INLINE vf qv_blend_f(vf a, vf b, unsigned k) { return vbslq_f32(qv_below(k), a, b); }
QK_ALWAYS_INLINE uint8x16_t qv_splice_b(uint8x16_t a, uint8x16_t b, unsigned k)
{
    uint8x16x2_t t = {{a, b}};
    return vqtbl2q_u8(t, vaddq_u8(vld1q_u8(qv_iota), vdupq_n_u8((uint8_t)(16 - 4 * k))));
}
QK_ALWAYS_INLINE vi qv_splice_i(vi a, vi b, unsigned k)
{
    return vreinterpretq_s32_u8(qv_splice_b(vreinterpretq_u8_s32(a), vreinterpretq_u8_s32(b), k));
}
QK_ALWAYS_INLINE vf qv_splice_f(vf a, vf b, unsigned k)
{
    return vreinterpretq_f32_u8(qv_splice_b(vreinterpretq_u8_f32(a), vreinterpretq_u8_f32(b), k));
}
QK_ALWAYS_INLINE uint8x16_t qv_perm_b(uint8x16_t v, vi idx)
{
    uint8x16_t i4 = vreinterpretq_u8_u32(vmulq_n_u32(vreinterpretq_u32_s32(idx), 0x04040404u));
    return vqtbl1q_u8(v, vaddq_u8(i4, vandq_u8(vld1q_u8(qv_iota), vdupq_n_u8(3))));
}
QK_ALWAYS_INLINE vf qv_perm_f(vf v, vi idx)
{
    return vreinterpretq_f32_u8(qv_perm_b(vreinterpretq_u8_f32(v), idx));
}
QK_ALWAYS_INLINE vi qv_perm_i(vi v, vi idx)
{
    return vreinterpretq_s32_u8(qv_perm_b(vreinterpretq_u8_s32(v), idx));
}

/* inputs as float32: exact widenings; int32 rounds to nearest even, as the C cast */
QK_ALWAYS_INLINE vf qv_load_x(int xk, const void *x)
{
    switch (xk) {
    case QK_X_F32: return vld1q_f32((const float *)x);
    case QK_X_F16: return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16((const uint16_t *)x)));
    case QK_X_BF16: return vreinterpretq_f32_u32(vshll_n_u16(vld1_u16((const uint16_t *)x), 16));
    default: return vcvtq_f32_s32(vld1q_s32((const int32_t *)x));
    }
}

/* float16 round trip: FCVTN rounds to nearest even (overflow to inf), NaN stays NaN */
QK_ALWAYS_INLINE vf qv_round_f16(vf v) { return vcvt_f32_f16(vcvt_f16_f32(v)); }

/* bfloat16 round to nearest even in integers (the result in the high half); callers keep
 * NaN lanes apart, as the carry could turn a NaN into inf or wrap its sign */
QK_ALWAYS_INLINE uint32x4_t qv_bf16_up(uint32x4_t u)
{
    uint32x4_t odd = vandq_u32(vshrq_n_u32(u, 16), vdupq_n_u32(1));
    return vaddq_u32(u, vaddq_u32(vdupq_n_u32(0x7fffu), odd));
}
QK_ALWAYS_INLINE vf qv_round_bf16(vf v)
{
    uint32x4_t u = vreinterpretq_u32_f32(v);
    uint32x4_t r = vandq_u32(qv_bf16_up(u), vdupq_n_u32(0xffff0000u));
    return vreinterpretq_f32_u32(vbslq_u32(vceqq_f32(v, v), r, u));
}
/* bfloat16 bits of v as qk_f32_to_bf16: NaN -> its sign | 0x7fc0 */
QK_ALWAYS_INLINE uint16x4_t qv_bf16_bits(vf v)
{
    uint32x4_t u = vreinterpretq_u32_f32(v);
    uint16x4_t nan = vorr_u16(vand_u16(vshrn_n_u32(u, 16), vdup_n_u16(0x8000u)),
                              vdup_n_u16(0x7fc0u));
    return vbsl_u16(vmovn_u32(vceqq_f32(v, v)), vshrn_n_u32(qv_bf16_up(u), 16), nan);
}

/* The quotient's bounds and conversions (driver.h's qd_qraw). Form A bounds x at xl = 2^17 s
 * (s > 0): FMIN first (it keeps NaN, quieting a signalling one), then FMAXNM at -xl takes
 * NaN, -inf and everything below to -xl, whose quotient -2^17 lies below every range; the
 * conversion then never sees NaN. FCVTNS rounds to nearest even and saturates +-inf (a float16
 * quotient may round to inf) to the int32 ends. Any other quotient: NaN to -2^17 by FMAXNM
 * (quotients are never signalling) before the conversion. */
QK_ALWAYS_INLINE vf qv_bound_x(vf n, vf xl) { return vmaxnmq_f32(vminq_f32(n, xl), vnegq_f32(xl)); }
QK_ALWAYS_INLINE vi qv_cvt_a(vf q, int mayinf) { (void)mayinf; return vcvtnq_s32_f32(q); }
QK_ALWAYS_INLINE vi qv_cvt_raw(vf q)
{
    return vcvtnq_s32_f32(vmaxnmq_f32(q, vdupq_n_f32(-131072.0f)));
}

/* Integer stores of 4 QV_W raw codes c (int32, any value) with zero points z: c + (z - qmin)
 * with saturation (byte kinds: SQXTN to int16 first, exact as |z - qmin| <= 255), to unsigned
 * with saturation (SQXTUN), at most cap = qmax - qmin (UMIN), and xor with flip turns the
 * biased value into the two's complement code's low bits. flip = -qmin (& mask, which keeps
 * every byte kind's -qmin whole), so z - qmin is z + flip: no other constant stays live
 * beside the loop's. */
typedef struct qv_qc {
    uint8x16_t cap, flip;
    uint16x8_t cap16, flip16;
} qv_qc;

QK_ALWAYS_INLINE qv_qc qv_qc_init(int32_t qmin, int32_t qmax, uint32_t mask)
{
    qv_qc c;
    uint32_t span = (uint32_t)(qmax - qmin), neg = (uint32_t)-qmin;
    c.cap = vdupq_n_u8((uint8_t)span);
    c.flip = vdupq_n_u8((uint8_t)(neg & mask));
    c.cap16 = vdupq_n_u16((uint16_t)span);
    c.flip16 = vdupq_n_u16((uint16_t)neg);
    return c;
}

/* 16 byte codes (< 2^bits for the packed kinds) to y: bytes, nibbles, or 2-bit fields,
 * element 0 lowest (a 16-bit lane e0 | e1 << 8 folded to e0 | e1 << 4, and so on) */
QK_ALWAYS_INLINE void qv_store_bytes(int yk, void *y, uint8x16_t b)
{
    if (yk == QK_Y_B8) {
        vst1q_u8((uint8_t *)y, b);
        return;
    }
    uint16x8_t w = vreinterpretq_u16_u8(b);
    if (yk == QK_Y_P4) {
        vst1_u8((uint8_t *)y, vmovn_u16(vorrq_u16(w, vshrq_n_u16(w, 4))));
        return;
    }
    uint16x4_t p = vreinterpret_u16_u8(vmovn_u16(vorrq_u16(w, vshrq_n_u16(w, 6))));   /* pairs */
    uint8x8_t q = vmovn_u16(vcombine_u16(vorr_u16(p, vshr_n_u16(p, 4)), p));          /* quads */
    uint32_t word = vget_lane_u32(vreinterpret_u32_u8(q), 0);
    memcpy(y, &word, 4);
}

QK_ALWAYS_INLINE void qv_qstore4(int yk, void *y, const vi c[4], const vi z[4], const qv_qc *k)
{
    if (yk == QK_Y_B16) {
        uint16x4_t h[4];
        QD_UNROLL
        for (int v = 0; v < 4; v++) {
            uint32x4_t zw = vaddw_u16(vreinterpretq_u32_s32(z[v]), vget_low_u16(k->flip16));
            h[v] = vqmovun_s32(vqaddq_s32(c[v], vreinterpretq_s32_u32(zw)));
        }
        QD_UNROLL
        for (int j = 0; j < 2; j++) {
            uint16x8_t b = vminq_u16(vcombine_u16(h[2 * j], h[2 * j + 1]), k->cap16);
            vst1q_u16((uint16_t *)y + 8 * j, veorq_u16(b, k->flip16));
        }
        return;
    }
    int16x8_t h[2];
    QD_UNROLL
    for (int j = 0; j < 2; j++) {
        uint16x8_t z16 = vcombine_u16(vmovn_u32(vreinterpretq_u32_s32(z[2 * j])),
                                      vmovn_u32(vreinterpretq_u32_s32(z[2 * j + 1])));
        int16x8_t zw = vreinterpretq_s16_u16(vaddw_u8(z16, vget_low_u8(k->flip)));
        h[j] = vqaddq_s16(vcombine_s16(vqmovn_s32(c[2 * j]), vqmovn_s32(c[2 * j + 1])), zw);
    }
    uint8x16_t b = vcombine_u8(vqmovun_s16(h[0]), vqmovun_s16(h[1]));
    qv_store_bytes(yk, y, veorq_u8(vminq_u8(b, k->cap), k->flip));
}

/* QV_W codes as int32 (row tiles and the float inputs' path): the fields of a 32-bit word
 * moved to the lanes by one variable shift, masked to `bits`; signed 8- and 16-bit codes when
 * sgn is 1, sign-extended from bit `bits - 1` by h (that bit) when sgn is 2. */
QK_ALWAYS_INLINE vi qv_load_codes(int dk, unsigned bits, int sgn, vi h, const void *x)
{
    static const int32_t sh[3][4] = {{0, -8, -16, -24}, {0, -4, -8, -12}, {0, -2, -4, -6}};
    uint32x4_t c;
    if (dk == QK_D_B16) {
        c = vmovl_u16(vld1_u16((const uint16_t *)x));
    } else {
        int g = dk == QK_D_B8 ? 0 : dk == QK_D_P4 ? 1 : 2;
        uint32_t w = 0;
        memcpy(&w, x, g == 0 ? 4 : g == 1 ? 2 : 1);
        c = vandq_u32(vshlq_u32(vdupq_n_u32(w), vld1q_s32(sh[g])),
                      vdupq_n_u32(g == 0 ? (1u << bits) - 1u : g == 1 ? 15u : 3u));
    }
    vi f = sgn == 1 ? vdupq_n_s32(1 << (bits - 1)) : h;
    return sgn ? vsubq_s32(veorq_s32(vreinterpretq_s32_u32(c), f), f) : vreinterpretq_s32_u32(c);
}

/* 16 codes of a byte-sized or packed kind as bytes (low bits; p->bits < 8: masked) */
QK_ALWAYS_INLINE uint8x16_t qv_bytes16(int dk, unsigned bits, const uint8_t *x)
{
    if (dk == QK_D_B8) {
        uint8x16_t b = vld1q_u8(x);
        return bits < 8 ? vandq_u8(b, vdupq_n_u8((uint8_t)((1u << bits) - 1u))) : b;
    }
    if (dk == QK_D_P4) {   /* element 2k from the low nibble of byte k */
        uint8x8_t r = vld1_u8(x);
        uint8x8x2_t z = vzip_u8(vand_u8(r, vdup_n_u8(0x0f)), vshr_n_u8(r, 4));
        return vcombine_u8(z.val[0], z.val[1]);
    }
    /* P2: each byte four times, each copy's field moved to the top and shifted down */
    static const uint8_t rep[16] = {0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3};
    static const int8_t up[16] = {6, 4, 2, 0, 6, 4, 2, 0, 6, 4, 2, 0, 6, 4, 2, 0};
    uint32_t word;
    memcpy(&word, x, 4);
    uint8x16_t t = vqtbl1q_u8(vreinterpretq_u8_u32(vdupq_n_u32(word)), vld1q_u8(rep));
    return vshrq_n_u8(vshlq_u8(t, vld1q_s8(up)), 6);
}

/* The integer codes of a chunk minus their zero points, as float32 without an integer
 * conversion (driver.h's QV_CODES4): a code c made non-negative by f (c ^ f, offset binary:
 * f = 2^(bits-1) for signed codes, sgn as in qv_load_codes) and written into the significand
 * of 2^23 is the float 2^23 + c + f; subtracting the float 2^23 + zp + f leaves c - zp
 * exactly (both integers below 2^24), +0 when equal, as scalar.c's float(c - zp). */
QK_ALWAYS_INLINE void qv_codes4(int dk, unsigned bits, int sgn, vi h, const unsigned char *x,
                                const vi z[4], vf d[4])
{
    uint16x8_t w[2], mg = vdupq_n_u16(0x4b00);
    vi f = sgn == 1 ? vdupq_n_s32(1 << (bits - 1)) : sgn == 2 ? h : vdupq_n_s32(0);
    if (dk == QK_D_B16) {
        w[0] = vld1q_u16((const uint16_t *)x);
        w[1] = vld1q_u16((const uint16_t *)x + 8);
        if (sgn) {
            w[0] = veorq_u16(w[0], vdupq_laneq_u16(vreinterpretq_u16_s32(f), 0));
            w[1] = veorq_u16(w[1], vdupq_laneq_u16(vreinterpretq_u16_s32(f), 0));
        }
    } else {
        uint8x16_t b = qv_bytes16(dk, bits, x);
        if (sgn) b = veorq_u8(b, vdupq_laneq_u8(vreinterpretq_u8_s32(f), 0));
        w[0] = vmovl_u8(vget_low_u8(b));
        w[1] = vmovl_high_u8(b);
    }
    QD_UNROLL
    for (int v = 0; v < 4; v++) {
        uint16x8_t u = v & 1 ? vzip2q_u16(w[v >> 1], mg) : vzip1q_u16(w[v >> 1], mg);
        vi fz = vaddq_s32(z[v], vaddq_s32(f, vdupq_n_s32(0x4b000000)));
        d[v] = vsubq_f32(vreinterpretq_f32_u16(u), vreinterpretq_f32_s32(fz));
    }
}

QK_ALWAYS_INLINE void qv_store_out(int ok, void *y, vf v)
{
    if (ok == QK_O_F32)
        vst1q_f32((float *)y, v);
    else   /* FCVTN keeps a NaN's sign and top payload bits, quiet: convert.h's rule */
        vst1_u16((uint16_t *)y,
                 ok == QK_O_F16 ? vreinterpret_u16_f16(vcvt_f16_f32(v)) : qv_bf16_bits(v));
}

/* (unused: QV_NT is 0) */
QK_ALWAYS_INLINE void qv_stream64(void *y, const void *src) { memcpy(y, src, 64); }

/* ---- float8 / float4 / float6 ---- */

/* float32 -> float8 / float6 / float4 codes, one per lane (qk_f32_to_fp). Normal results:
 * rebias and round the dropped bits to even in integers. Subnormal results: adding
 * 2^(24 - bias - m), whose last place is the smallest subnormal, lets the FPU round |q| to
 * that unit; the sum's low bits are the code. */
QK_ALWAYS_INLINE vi qv_to_fp(vf q, int fmt, int sat)
{
    const int m = (int)qk_fp_man(fmt), bias = qk_fp_bias(fmt);
    const uint32_t maxc = qk_fp_maxcode(fmt);
    uint32x4_t u = vreinterpretq_u32_f32(q);
    uint32x4_t a = vandq_u32(u, vdupq_n_u32(0x7fffffffu));
    uint32x4_t sign = vandq_u32(u, vdupq_n_u32(0x80000000u));
    int32x4_t down = vdupq_n_s32(-(23 - m));
    uint32x4_t r = vsubq_u32(a, vdupq_n_u32((uint32_t)(127 - bias) << 23));
    uint32x4_t odd = vandq_u32(vshlq_u32(r, down), vdupq_n_u32(1));
    r = vaddq_u32(r, vaddq_u32(vdupq_n_u32((1u << (22 - m)) - 1u), odd));
    uint32x4_t cn = vshlq_u32(r, down);
    float32x4_t magic = vreinterpretq_f32_u32(vdupq_n_u32((uint32_t)(127 + 24 - bias - m) << 23));
    uint32x4_t cs = vsubq_u32(vreinterpretq_u32_f32(vaddq_f32(vreinterpretq_f32_u32(a), magic)),
                              vreinterpretq_u32_f32(magic));
    uint32x4_t c = vbslq_u32(vcltq_u32(a, vdupq_n_u32((uint32_t)(128 - bias) << 23)), cs, cn);
    uint32x4_t nan = vcgtq_u32(a, vdupq_n_u32(0x7f800000u));   /* inf overflows via cn */
    if (sat || qk_fp_finite(fmt))
        c = vminq_u32(c, vdupq_n_u32(maxc));
    else
        c = vbslq_u32(vcgtq_u32(c, vdupq_n_u32(maxc)),
                      vdupq_n_u32(fmt == QK_FP_E5M2 ? 0x7cu : 0x7fu), c);
    if (qk_fp_finite(fmt)) {   /* float4 / float6, no NaN: the zero of the opposite sign */
        c = vbicq_u32(c, nan);
        sign = veorq_u32(sign, vandq_u32(nan, vdupq_n_u32(0x80000000u)));
        c = vorrq_u32(c, fmt == QK_FP_E2M1 ? vshrq_n_u32(sign, 28) : vshrq_n_u32(sign, 26));
    } else {
        c = vbslq_u32(nan, vdupq_n_u32(fmt == QK_FP_E5M2 ? 0x7eu : 0x7fu), c);
        c = vorrq_u32(c, vshrq_n_u32(sign, 24));
    }
    return vreinterpretq_s32_u32(c);
}

/* codes (low bits of each lane) -> float32, exactly (qk_fp_to_f32): normal ones rebiased,
 * subnormal ones (and zero) the mantissa times the smallest subnormal */
QK_ALWAYS_INLINE vf qv_from_fp(vi ci, int fmt)
{
    const int m = (int)qk_fp_man(fmt), bias = qk_fp_bias(fmt);
    const uint32_t sbit = qk_fp_sbit(fmt);
    uint32x4_t c = vreinterpretq_u32_s32(ci);
    if (qk_fp_finite(fmt)) c = vandq_u32(c, vdupq_n_u32(2u * sbit - 1u));   /* high bits ignored */
    uint32x4_t mag = vandq_u32(c, vdupq_n_u32(sbit - 1u));
    uint32x4_t sign = vandq_u32(c, vdupq_n_u32(sbit));   /* shifts take literal counts */
    sign = fmt == QK_FP_E2M1 ? vshlq_n_u32(sign, 28) : qk_fp_finite(fmt) ? vshlq_n_u32(sign, 26)
           : vshlq_n_u32(sign, 24);
    uint32x4_t normal = vaddq_u32(vshlq_u32(mag, vdupq_n_s32(23 - m)),
                                  vdupq_n_u32((uint32_t)(127 - bias) << 23));
    float32x4_t unit = vreinterpretq_f32_u32(vdupq_n_u32((uint32_t)(127 + 1 - bias - m) << 23));
    float32x4_t sub = vmulq_f32(vcvtq_f32_u32(vandq_u32(mag, vdupq_n_u32((1u << m) - 1u))), unit);
    uint32x4_t r = vbslq_u32(vcltq_u32(mag, vdupq_n_u32(1u << m)), vreinterpretq_u32_f32(sub),
                             normal);
    if (fmt == QK_FP_E4M3FN)
        r = vbslq_u32(vceqq_u32(mag, vdupq_n_u32(0x7f)), vdupq_n_u32(0x7fc00000u), r);
    else if (fmt == QK_FP_E5M2)
        r = vbslq_u32(vcgeq_u32(mag, vdupq_n_u32(0x7c)),
                      vbslq_u32(vceqq_u32(mag, vdupq_n_u32(0x7c)), vdupq_n_u32(0x7f800000u),
                                vdupq_n_u32(0x7fc00000u)), r);
    return vreinterpretq_f32_u32(vorrq_u32(r, sign));
}

/* q1 of the reciprocal form, or q0 = x r where q1 is +-0 or NaN: FACGT |q1| > 0 is false for
 * exactly those */
QK_ALWAYS_INLINE vf qv_fix_recip(vf q1, vf q0)
{
    return vbslq_f32(vcagtq_f32(q1, vdupq_n_f32(0.0f)), q1, q0);
}

/* the product p, or d itself where d is NaN */
QK_ALWAYS_INLINE vf qv_keep_nan(vf d, vf p) { return vbslq_f32(vceqq_f32(d, d), p, d); }

/* Packed float6: 4 QV_W codes (< 64), each with 0x20 added where s is not negative (s all
 * ones: the codes have their signs), to 12 bytes: the codes narrowed to bytes, c0 | c1 << 6
 * per 16-bit lane, then pairs of those | << 12 per 32-bit lane: each dword holds a group's
 * 24 bits, whose three low bytes a table lookup gathers. */
QK_ALWAYS_INLINE void qv_store6_4(unsigned char *y, const vi r[4], const vi s[4])
{
    static const uint8_t g3[16] = {0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, 16, 16, 16, 16};
    uint16x8_t p[2];
    QD_UNROLL
    for (int j = 0; j < 2; j++) {
        uint32x4_t c[2];
        QD_UNROLL
        for (int v = 0; v < 2; v++) {
            uint32x4_t neg = vreinterpretq_u32_s32(vshrq_n_s32(s[2 * j + v], 31));
            c[v] = vorrq_u32(vreinterpretq_u32_s32(r[2 * j + v]), vbicq_u32(vdupq_n_u32(0x20), neg));
        }
        p[j] = vuzp1q_u16(vreinterpretq_u16_u32(c[0]), vreinterpretq_u16_u32(c[1]));
    }
    uint8x16_t b = vuzp1q_u8(vreinterpretq_u8_u16(p[0]), vreinterpretq_u8_u16(p[1]));
    uint16x8_t h = vreinterpretq_u16_u8(b);
    h = vsliq_n_u16(h, vshrq_n_u16(h, 8), 6);
    uint32x4_t w = vreinterpretq_u32_u16(h);
    w = vsliq_n_u32(w, vshrq_n_u32(w, 16), 12);
    uint8x16_t o = vqtbl1q_u8(vreinterpretq_u8_u32(w), vld1q_u8(g3));
    uint32_t tail = vgetq_lane_u32(vreinterpretq_u32_u8(o), 2);
    vst1_u8(y, vget_low_u8(o));
    memcpy(y + 8, &tail, 4);
}

/* 3 bytes (one group) -> QV_W codes: lane i gets bits 6i .. 6i+5 */
QK_ALWAYS_INLINE vi qv_load6(const unsigned char *x)
{
    static const int32_t sh[4] = {0, -6, -12, -18};
    uint32_t w = (uint32_t)x[0] | (uint32_t)x[1] << 8 | (uint32_t)x[2] << 16;
    uint32x4_t c = vshlq_u32(vdupq_n_u32(w), vld1q_s32(sh));
    return vreinterpretq_s32_u32(vandq_u32(c, vdupq_n_u32(0x3f)));
}

/* AMD Quark's 32-bit types (driver.h): vd holds 2 doubles (half a vector); qv_f2d / qv_i2d
 * widen half h, qv_d2f / qv_d2i narrow two halves back (qv_d2i: whole numbers inside int32,
 * through int64); qv_clamp_rint_d: FMAXNM first, so a NaN d gives lo, then FRINTN. */
typedef float64x2_t vd;
QK_ALWAYS_INLINE vd qv_set1_d(double v) { return vdupq_n_f64(v); }
QK_ALWAYS_INLINE vd qv_add_d(vd a, vd b) { return vaddq_f64(a, b); }
QK_ALWAYS_INLINE vd qv_clamp_rint_d(vd d, vd lo, vd hi)
{
    return vrndnq_f64(vminnmq_f64(vmaxnmq_f64(d, lo), hi));
}
QK_ALWAYS_INLINE vd qv_f2d(vf v, int h)
{
    return h ? vcvt_high_f64_f32(v) : vcvt_f64_f32(vget_low_f32(v));
}
QK_ALWAYS_INLINE vd qv_i2d(vi v, int h)
{
    return vcvtq_f64_s64(h ? vmovl_high_s32(v) : vmovl_s32(vget_low_s32(v)));
}
QK_ALWAYS_INLINE vf qv_d2f(vd a, vd b) { return vcvt_high_f32_f64(vcvt_f32_f64(a), b); }
QK_ALWAYS_INLINE vi qv_d2i(vd a, vd b)
{
    return vcombine_s32(vmovn_s64(vcvtq_s64_f64(a)), vmovn_s64(vcvtq_s64_f64(b)));
}
QK_ALWAYS_INLINE vi qv_xor_i(vi a, vi b) { return veorq_s32(a, b); }
QK_ALWAYS_INLINE void qv_storeu_i(void *p, vi v) { vst1q_s32((int32_t *)p, v); }

#include "generic/driver.h"
#include "generic/entries.h"

/* ---- min / max ----
 * NaN-ignoring min and max. Runs of QN_MM_BLOCK elements go through FMIN / FMAX, two
 * instructions per vector, into copies of the accumulators; FMIN and FMAX return NaN when
 * either operand is one, so a NaN anywhere in the run leaves NaN in the copy, and one check
 * per run finds it. A run without NaN keeps the copies; a run with one is done again by
 * compare-and-select, which skips NaN (quiet and signalling alike, where FMINNM would return
 * NaN for a signalling one). Signed zeros compare equal, so the lanes may hold either; when
 * a result is zero, its sign is that of the first zero in x, because the scalar loop keeps
 * the first of equal values. */
#define QN_MM_BLOCK 1024

static void QD_N(minmax)(const float *x, size_t n, float *mn, float *mx)
{
    float32x4_t lo[4], hi[4];
    QD_UNROLL
    for (int k = 0; k < 4; k++) {
        lo[k] = vdupq_n_f32(INFINITY);
        hi[k] = vdupq_n_f32(-INFINITY);
    }
    size_t i = 0;
    while (n - i >= QD_U) {
        size_t end = i + (n - i < QN_MM_BLOCK ? (n - i) / QD_U * QD_U : QN_MM_BLOCK);
        float32x4_t bl[4], bh[4];
        QD_UNROLL
        for (int k = 0; k < 4; k++) { bl[k] = lo[k]; bh[k] = hi[k]; }
        for (size_t j = i; j < end; j += QD_U) {
            float32x4x4_t v = vld1q_f32_x4(x + j);   /* one instruction: fewer micro-ops */
            QD_UNROLL
            for (int k = 0; k < 4; k++) {
                bl[k] = vminq_f32(bl[k], v.val[k]);
                bh[k] = vmaxq_f32(bh[k], v.val[k]);
            }
        }
        uint32x4_t ok = vandq_u32(vandq_u32(vceqq_f32(bl[0], bl[0]), vceqq_f32(bl[1], bl[1])),
                                  vandq_u32(vceqq_f32(bl[2], bl[2]), vceqq_f32(bl[3], bl[3])));
        if (vminvq_u32(ok) != 0) {
            QD_UNROLL
            for (int k = 0; k < 4; k++) { lo[k] = bl[k]; hi[k] = bh[k]; }
        } else {
            for (size_t j = i; j < end; j += QD_U) {
                QD_UNROLL
                for (int k = 0; k < 4; k++) {
                    float32x4_t v = vld1q_f32(x + j + 4 * k);
                    lo[k] = vbslq_f32(vcltq_f32(v, lo[k]), v, lo[k]);
                    hi[k] = vbslq_f32(vcgtq_f32(v, hi[k]), v, hi[k]);
                }
            }
        }
        i = end;
    }
    QD_UNROLL
    for (int k = 1; k < 4; k++) {
        lo[0] = vbslq_f32(vcltq_f32(lo[k], lo[0]), lo[k], lo[0]);
        hi[0] = vbslq_f32(vcgtq_f32(hi[k], hi[0]), hi[k], hi[0]);
    }
    float l[4], h[4], a = INFINITY, b = -INFINITY;
    vst1q_f32(l, lo[0]);
    vst1q_f32(h, hi[0]);
    QD_UNROLL
    for (int k = 0; k < 4; k++) {
        if (l[k] < a) a = l[k];
        if (h[k] > b) b = h[k];
    }
    for (; i < n; i++) {
        if (x[i] < a) a = x[i];
        if (x[i] > b) b = x[i];
    }
    if (a == 0.0f || b == 0.0f) {
        size_t j = 0;
        for (; j + 4 <= n; j += 4)
            if (vmaxvq_u32(vceqzq_f32(vld1q_f32(x + j))) != 0) break;
        while (x[j] != 0.0f) j++;   /* a zero exists at or after j */
        if (a == 0.0f) a = x[j];
        if (b == 0.0f) b = x[j];
    }
    *mn = a;
    *mx = b;
}

#define QK_ENTRY_neon(kind, ...) QD_##kind##FN(__VA_ARGS__)
#include "generic/registry.def"
#undef QK_ENTRY_neon
#define QK_ENTRY_neon(kind, ...) QD_##kind##SET(__VA_ARGS__)
const qk_table qk_neon_table = {
    .name = "neon",
#include "generic/registry.def"
    .minmax_f32 = QD_N(minmax),
    .recip_f32 = QD_N(recip),
    .widen_zp = QD_N(widen),
    .minmax_cols = QD_N(minmax_cols),
    .minmax_groups = QD_N(minmax_groups),
};
