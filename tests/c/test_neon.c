/* Parity test: every non-NULL entry of qk_neon_table against qk_scalar_table, bit for bit.
 *
 * Build (aarch64, static) and run under qemu, e.g.
 *   aarch64-linux-gnu-gcc -std=c99 -O2 -ffp-contract=off -Wall -Wextra -DQSIMD_HAVE_NEON \
 *       -Icsrc/kernels tests/c/test_neon.c csrc/kernels/neon.c csrc/kernels/scalar.c -lm \
 *       -static -o test_neon && QEMU_CPU=cortex-a72 arm64-run ./test_neon [rounds] [seed]
 *
 * Every buffer a kernel reads (x, scale, zero point) ends, or starts, on a PROT_NONE page, so a
 * read past either end crashes; the output does too, and the bytes around it must equal what
 * the scalar kernel left there. Cases sweep lengths 0..300 and some large ones, start
 * alignments, every entry mode (blk >= n, 1, small, large, non-dividing), every packed phase,
 * and adversarial values (ties with odd and even zero points, +-0, NaN payloads, +-inf,
 * denormals, quotients near 2^31, range edges, random bit patterns). Exit status 0 = all equal.
 */
#define _DEFAULT_SOURCE 1
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kernels.h"
#include "convert.h"

/* ------------------------------------------------------------------ utilities */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)   /* splitmix64 */
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static uint32_t rnd32(void) { return (uint32_t)(rnd() >> 32); }
static size_t rndn(size_t n) { return n ? (size_t)(rnd() % n) : 0; }   /* [0, n) */
static int32_t rnd_range(int32_t lo, int32_t hi) { return lo + (int32_t)rndn((size_t)(hi - lo) + 1); }

static long failures = 0, cases = 0;
#define MAX_REPORTS 20

/* A buffer with an inaccessible page on each side. */
typedef struct gbuf {
    uint8_t *data;   /* first accessible byte */
    size_t cap;      /* accessible bytes (a whole number of pages) */
} gbuf;

static size_t page_size(void) { return (size_t)sysconf(_SC_PAGESIZE); }

static gbuf gb_new(size_t bytes)
{
    size_t pg = page_size(), cap = (bytes + pg - 1) / pg * pg;
    uint8_t *m = mmap(NULL, cap + 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                      -1, 0);
    if (m == MAP_FAILED) { perror("mmap"); exit(2); }
    if (mprotect(m, pg, PROT_NONE) || mprotect(m + pg + cap, pg, PROT_NONE)) {
        perror("mprotect");
        exit(2);
    }
    gbuf g = {m + pg, cap};
    return g;
}

/* Where a buffer of `bytes` goes: against the trailing guard page (where = 0), or `skew`
 * elements after the leading one (where = 1). */
static uint8_t *gb_place(const gbuf *g, size_t bytes, int where, size_t skew, size_t esize)
{
    if (bytes + skew * esize + 64 > g->cap) { fprintf(stderr, "buffer too small\n"); exit(2); }
    return where == 0 ? g->data + g->cap - bytes : g->data + skew * esize;
}

/* ------------------------------------------------------------------ value generators */

static float f32_of(uint32_t u) { return qk_bits_f32(u); }

static const uint32_t special_f32[] = {
    0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u,    /* +-0, +-inf */
    0x7fc00000u, 0xffc00000u, 0x7fc00001u, 0x7fffffffu,    /* quiet NaNs, payloads */
    0x7f800001u, 0xff800001u, 0x7fa00000u, 0xffbfffffu,    /* signalling NaNs */
    0x00000001u, 0x80000001u, 0x007fffffu, 0x807fffffu,    /* denormals */
    0x00800000u, 0x80800000u, 0x7f7fffffu, 0xff7fffffu,    /* smallest normal, max */
    0x4f000000u, 0xcf000000u, 0x4effffffu, 0xcf000001u,    /* 2^31 region */
    0x4b400000u, 0x4b000000u, 0x3f000000u, 0xbf000000u,    /* 1.5*2^23, 2^23, +-0.5 */
    0x3fc00000u, 0x40200000u, 0x477fe000u, 0x477ff000u,    /* 1.5, 2.5, f16 max, 65520 */
    0x33800000u, 0x33000000u, 0x387fc000u, 0x38800000u,    /* f16 subnormal edges */
};
#define N_SPECIAL (sizeof special_f32 / sizeof special_f32[0])

/* A float32 aimed at interesting quotients for scale s and code bounds [lo, hi]. */
static float gen_quant_value(float s, int32_t lo, int32_t hi)
{
    float a = isfinite(s) && s != 0.0f ? s : 1.0f;
    switch (rndn(10)) {
    case 0: case 1: {   /* uniform over the range and a little beyond */
        double u = (double)(lo - 3) + (double)(rnd() >> 11) * 0x1p-53 * (double)(hi - lo + 6);
        return (float)(u * a);
    }
    case 2: case 3:     /* ties: exact when s is a power of two */
        return (float)(((double)rnd_range(lo - 2, hi + 2) + 0.5) * a);
    case 4: {           /* one ulp around a tie or an integer */
        float t = (float)(((double)rnd_range(lo - 2, hi + 2) + (rnd() & 1 ? 0.5 : 0.0)) * a);
        return nextafterf(t, rnd() & 1 ? INFINITY : -INFINITY);
    }
    case 5:             /* exact multiples */
        return (float)((double)rnd_range(lo - 2, hi + 2) * a);
    case 6:             /* specials */
        return f32_of(special_f32[rndn(N_SPECIAL)]);
    case 7: {           /* quotient near +-2^31, 2^24, or huge */
        static const double big[] = {2147483648.0, 2147483520.0, 2147483904.0, 16777216.0,
                                     16777217.0, 4294967296.0, 1e30};
        double v = big[rndn(sizeof big / sizeof big[0])] * (rnd() & 1 ? 1 : -1);
        return (float)(v * a);
    }
    case 8: {           /* small: zeros, denormals, tiny */
        uint32_t u = rnd32() & (rnd() & 1 ? 0x807fffffu : 0x80ffffffu);
        return f32_of(u);
    }
    default:            /* any bit pattern */
        return f32_of(rnd32());
    }
}

static float gen_scale(int qk)
{
    float s;
    switch (rndn(12)) {
    case 0: case 1: case 2: case 3:   /* powers of two: ties are exact */
        s = ldexpf(1.0f, rnd_range(-12, 12));
        break;
    case 4: case 5: case 6:           /* random mantissa */
        s = ldexpf(1.0f + (float)(rnd32() >> 9) * 0x1p-23f, rnd_range(-14, 10));
        break;
    case 7:
        s = (float)rnd_range(1, 1000) / (float)rnd_range(1, 1000);
        break;
    case 8:                           /* tiny, huge, denormal */
        s = f32_of((rnd() & 1 ? 0x00000000u : 0x7e000000u) | (rnd32() & 0x00ffffffu));
        break;
    case 9: {                         /* zero, negative, inf, NaN */
        static const uint32_t sp[] = {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u,
                                      0x7fc00000u, 0xbf800000u, 0xc0200000u, 0xbd800000u};
        s = f32_of(sp[rndn(sizeof sp / sizeof sp[0])]);
        break;
    }
    case 10:                          /* the reciprocal form's range edges and neighbours */
        switch (rndn(6)) {
        case 0: s = QK_RECIP_MIN; break;
        case 1: s = nextafterf(QK_RECIP_MIN, rnd() & 1 ? 0.0f : 1.0f); break;
        case 2: s = QK_RECIP_MAX; break;
        case 3: s = nextafterf(QK_RECIP_MAX, rnd() & 1 ? 0.0f : INFINITY); break;
        case 4: s = ldexpf(rnd() & 1 ? 1.0f : 2.0f - 0x1p-23f, rnd_range(-101, 120)); break;
        default: s = ldexpf(1.0f + (float)(rnd32() >> 9) * 0x1p-23f, rnd_range(-90, 110)); break;
        }
        if (rnd() & 1) s = -s;
        break;
    default:
        s = 0.1f * (float)rnd_range(1, 20) * (rnd() % 4 ? 1.0f : -1.0f);
    }
    /* the operator layer hands the kernels scales already rounded to the quotient type */
    if (qk == QK_Q_F16) s = qk_round_f16(s);
    if (qk == QK_Q_BF16) s = qk_round_bf16(s);
    return s;
}

static float gen_dq_scale(void)
{
    switch (rndn(12)) {
    case 0: case 1:                   /* f16 ties: products land halfway between halves */
        return ldexpf(1.0f + (float)(2 * rnd_range(0, 1023) + 1) * 0x1p-11f, rnd_range(-24, 12));
    case 2:                           /* bf16 ties */
        return ldexpf(1.0f + (float)(2 * rnd_range(0, 127) + 1) * 0x1p-8f, rnd_range(-130, 120));
    case 3:                           /* f16 subnormal results */
        return ldexpf(1.0f + (float)(rnd32() >> 9) * 0x1p-23f, rnd_range(-32, -18));
    case 4:                           /* overflow to inf in f16 / bf16 / f32 */
        return ldexpf(1.0f + (float)(rnd32() >> 9) * 0x1p-23f, rnd() & 1 ? rnd_range(8, 16)
                                                                        : rnd_range(110, 127));
    case 5:
        return f32_of(special_f32[rndn(N_SPECIAL)]);
    case 6:
        return f32_of(rnd32());
    case 7:
        return ldexpf(1.0f, rnd_range(-20, 10));
    default:
        return ldexpf(1.0f + (float)(rnd32() >> 9) * 0x1p-23f, rnd_range(-12, 4)) *
               (rnd() % 8 ? 1.0f : -1.0f);
    }
}

/* ------------------------------------------------------------------ names */

static const char *xk_name[] = {"f32", "f16", "bf16", "i32"};
static const char *qk_name[] = {"q_f32", "q_f16", "q_bf16", "q_f64"};
static const char *yk_name[] = {"b8", "b16", "p4", "p2", "e4m3fn", "e4m3fnuz", "e5m2",
                                "e5m2fnuz", "e2m1", "pe2m1", "b32", "f16", "bf16",
                                "e2m3", "pe2m3", "e3m2", "pe3m2"};
static const char *dk_name[] = {"b8", "b16", "p4", "p2", "b32", "e4m3fn", "e4m3fnuz", "e5m2",
                                "e5m2fnuz", "e2m1", "pe2m1", "f16", "bf16",
                                "e2m3", "pe2m3", "e3m2", "pe3m2"};
static const char *ok_name[] = {"f32", "f16", "bf16", "e8m0"};

/* float8 / float4 / float6 output kinds (the saturate flag matters, the range fields do not) */
static int is_fp_y(int yk)
{
    return (yk >= QK_Y_E4M3FN && yk <= QK_Y_PE2M1) || yk >= QK_Y_E2M3;
}

/* packed float6: 4 codes in 3 bytes, phase the slot in the group */
static int is_p6_y(int yk) { return yk == QK_Y_PE2M3 || yk == QK_Y_PE3M2; }
static int is_p6_d(int dk) { return dk == QK_D_PE2M3 || dk == QK_D_PE3M2; }

static int fp_fmt_y(int yk)
{
    switch (yk) {
    case QK_Y_E4M3FN: return QK_FP_E4M3FN;
    case QK_Y_E4M3FNUZ: return QK_FP_E4M3FNUZ;
    case QK_Y_E5M2: return QK_FP_E5M2;
    case QK_Y_E5M2FNUZ: return QK_FP_E5M2FNUZ;
    case QK_Y_E2M3: case QK_Y_PE2M3: return QK_FP_E2M3;
    case QK_Y_E3M2: case QK_Y_PE3M2: return QK_FP_E3M2;
    default: return QK_FP_E2M1;
    }
}

typedef struct otype { const char *name; int32_t qmin, qmax; uint32_t mask; int sat; } otype;
static const otype fp_types[] = {{"sat", 0, 0, 0xff, 1}, {"nosat", 0, 0, 0xff, 0}};
static const otype b8_types[] = {{"u8", 0, 255, 0xff, 1}, {"i8", -128, 127, 0xff, 1},
                                 {"u4", 0, 15, 0x0f, 1},  {"i4", -8, 7, 0x0f, 1},
                                 {"u2", 0, 3, 0x03, 1},   {"i2", -2, 1, 0x03, 1}};
static const otype b16_types[] = {{"u16", 0, 65535, 0xff, 1}, {"i16", -32768, 32767, 0xff, 1}};
static const otype p4_types[] = {{"u4", 0, 15, 0x0f, 1}, {"i4", -8, 7, 0x0f, 1}};
static const otype p2_types[] = {{"u2", 0, 3, 0x03, 1}, {"i2", -2, 1, 0x03, 1}};
/* AMD Quark's outputs: the 32-bit ranges are qmin64 / qmax64 (chosen by name), float16 and
 * bfloat16 have none */
static const otype b32_types[] = {{"i32", 0, 0, 0xff, 1}, {"u32", 0, 0, 0xff, 1}};
static const otype hq_types[] = {{"h", 0, 0, 0xff, 1}};

/* Entry sizes to try; the first two mean one entry (blk >= n). */
static size_t pick_blk(size_t n, size_t c)
{
    static const size_t fixed[] = {0, 0, 1, 2, 3, 5, 15, 16, 17, 32, 33, 128, 7, 64};
    size_t k = c % (sizeof fixed / sizeof fixed[0] + 1);
    if (k == 0) return n ? n : 1;
    if (k == 1) return n + 1 + rndn(100) + (rnd() & 1 ? (size_t)-1 / 4 : 0);
    if (k == sizeof fixed / sizeof fixed[0]) return 1 + rndn(n ? n : 1);
    return fixed[k];
}

static size_t entries_for(size_t n, size_t blk)
{
    if (n == 0) return 0;
    return blk >= n ? 1 : (n + blk - 1) / blk;
}

/* A quotient aimed at a float8 / float4 format: its values, the ties between them, one
 * float32 ulp around both, the overflow region, specials, anything. */
static float gen_fp_quotient(int fmt)
{
    uint8_t cm = fmt == QK_FP_E2M1 ? 0xf : qk_fp_finite(fmt) ? 0x3f : 0xff;
    uint8_t code = (uint8_t)(rnd() & cm);
    float v = qk_fp_to_f32(code, fmt);
    if (!isfinite(v)) v = qk_fp_to_f32((uint8_t)(code & 0x3f), fmt);
    uint8_t up = (uint8_t)(code + 1);
    float w = qk_fp_to_f32((uint8_t)(up & cm), fmt);
    switch (rndn(8)) {
    case 0: case 1: return v;
    case 2: case 3:   /* halfway to the next code (a tie) */
        if (isfinite(w) && (w > 0) == (v > 0)) return v + (w - v) / 2;
        return v * 1.0625f;
    case 4: return nextafterf(v, rnd() & 1 ? INFINITY : -INFINITY);
    case 5: return f32_of(special_f32[rndn(N_SPECIAL)]);
    case 6: return v * ldexpf(1.0f, rnd_range(-8, 8));
    default: return f32_of(rnd32());
    }
}

static float gen_f4_zero_point(void)
{
    static const float z[] = {0.0f, -0.0f, 0.5f, -0.5f, 1.0f, -1.5f, 3.0f, -6.0f, 6.0f};
    return z[rndn(sizeof z / sizeof z[0])];
}

/* ------------------------------------------------------------------ quantize */

static gbuf gx, gy, gs, gz, gs64, gr, gz64;
static uint8_t *yref;          /* scalar output window */
#define WIN 48                 /* bytes compared on each side of the output */

static void encode_x(int xk, void *x, size_t i, float v, int32_t iv)
{
    switch (xk) {
    case QK_X_F32: ((float *)x)[i] = v; break;
    case QK_X_F16: ((uint16_t *)x)[i] = rnd() % 16 ? qk_f32_to_f16(v) : (uint16_t)rnd32(); break;
    case QK_X_BF16: {
        uint16_t b = qk_f32_to_bf16(v);
        if (rnd() % 16 == 0) b = (uint16_t)rnd32();
        else if (rnd() % 8 == 0) b = (uint16_t)(qk_f32_bits(v) >> 16);   /* truncation, NaN payloads */
        ((uint16_t *)x)[i] = b;
        break;
    }
    default: ((int32_t *)x)[i] = iv; break;
    }
}

static void quant_case(int xk, int qk, int yk, const otype *t, size_t n, size_t c)
{
    static const size_t xsz[] = {4, 2, 2, 4};
    qk_quant_fn fn = qk_neon_table.quant[xk][qk][yk];
    unsigned per = yk == QK_Y_P4 || yk == QK_Y_PE2M1 ? 2 : yk == QK_Y_P2 || is_p6_y(yk) ? 4 : 1;
    int fp = is_fp_y(yk), f4 = yk == QK_Y_E2M1 || yk == QK_Y_PE2M1 || yk >= QK_Y_E2M3;
    int b32 = yk == QK_Y_B32, hq = yk == QK_Y_F16 || yk == QK_Y_BF16;
    size_t ysz = b32 ? 4 : yk == QK_Y_B16 || hq ? 2 : 1;
    int64_t qmin64 = b32 && t->name[0] == 'u' ? 0 : INT32_MIN;
    int64_t qmax64 = b32 && t->name[0] == 'u' ? (int64_t)UINT32_MAX : INT32_MAX;
    size_t blk = pick_blk(n, c);
    unsigned phase = per > 1 ? (unsigned)(c / 3 % per) : 0;
    size_t ne = entries_for(n, blk);
    int where = (int)(c & 1);
    int use_zp = (c / 2) % 4 != 0;
    size_t skew = rndn(4);

    /* parameters */
    float *scale = (float *)gb_place(&gs, ne * 4, where, skew, 4);
    double *scale64 = (double *)gb_place(&gs64, ne * 8, where, 0, 8);
    int32_t *zp = use_zp && !fp && !b32 && !hq ? (int32_t *)gb_place(&gz, ne * 4, !where, skew, 4)
                                                : NULL;
    float *zpf = use_zp && (f4 || hq) ? (float *)gb_place(&gz, ne * 4, !where, skew, 4) : NULL;
    int64_t *zp64 = use_zp && b32 ? (int64_t *)gb_place(&gz64, ne * 8, !where, 0, 8) : NULL;
    int tie_scales = rnd() & 1;   /* one scale for the whole run keeps ties exact */
    float s0 = gen_scale(qk);
    for (size_t e = 0; e < ne; e++) {
        scale[e] = tie_scales && e ? s0 : gen_scale(qk);
        if (e == 0) scale[e] = s0;
        scale64[e] = scale[e];
        if (qk == QK_Q_F64) {   /* int32 scales, not always exact in float32 */
            switch (rndn(4)) {
            case 0: scale64[e] = (double)rnd_range(-3, 1000); break;
            case 1: scale64[e] = (double)(int32_t)rnd32(); break;
            default: break;
            }
            if (tie_scales && e) scale64[e] = scale64[0];
        }
        if (zp) {
            switch (rndn(4)) {
            case 0: zp[e] = t->qmin; break;
            case 1: zp[e] = t->qmax; break;
            default: zp[e] = rnd_range(t->qmin, t->qmax);
            }
        }
        if (zpf) zpf[e] = gen_f4_zero_point();
        if (zp64) {
            switch (rndn(4)) {
            case 0: zp64[e] = qmin64; break;
            case 1: zp64[e] = qmax64; break;
            case 2: zp64[e] = 0; break;
            default: zp64[e] = qmin64 + (int64_t)(((uint64_t)rnd32() << 32 | rnd32()) %
                                                  (uint64_t)(qmax64 - qmin64 + 1));
            }
        }
    }
    qk_qparams p;
    memset(&p, 0, sizeof p);
    p.scale = ne ? scale : NULL;
    p.scale64 = ne ? scale64 : NULL;
    p.zp = zp;
    p.blk = blk;
    p.qmin = t->qmin;
    p.qmax = t->qmax;
    p.mask = t->mask;
    p.phase = phase;
    p.saturate = t->sat;
    p.zpf = zpf;
    p.zp64 = zp64;
    p.qmin64 = qmin64;
    p.qmax64 = qmax64;
    /* reciprocals as the operator layer passes them (csrc/ops): for every entry when all are
     * inside qk_recip's range, else none (divide); sometimes none anyway */
    float *rscale = (float *)gb_place(&gr, ne * 4, where, skew, 4);
    int recip = ne && rndn(8) != 0 && qk != QK_Q_F64 && yk != QK_Y_B32 && yk != QK_Y_F16 &&
                yk != QK_Y_BF16;
    for (size_t e = 0; e < ne; e++) {
        rscale[e] = qk_recip(scale[e]);
        recip &= rscale[e] != 0.0f;
    }
    p.rscale = recip ? rscale : NULL;

    /* input */
    uint8_t *x = gb_place(&gx, n * xsz[xk], !where, skew, xsz[xk]);
    for (size_t i = 0; i < n; i++) {
        size_t e = blk >= n ? 0 : i / blk;
        int32_t z = zp ? zp[e] : 0;
        /* Quark outputs: quotients around zero, ties, +-2^31 / 2^32, specials, any bits; for
         * float16 beyond its range too */
        float v = fp ? gen_fp_quotient(fp_fmt_y(yk)) * scale[e]
                  : b32 || hq ? gen_quant_value(scale[e], hq ? -70000 : -1000, hq ? 70000 : 1000)
                  : gen_quant_value((float)scale64[e], t->qmin - z, t->qmax - z);
        int32_t iv = rnd() % 4 == 0 ? (int32_t)rnd32() : (int32_t)fmaxf(fminf(v, 2e9f), -2e9f);
        encode_x(xk, x, i, v, iv);
    }

    /* output: same random bytes around both results */
    size_t ybytes = is_p6_y(yk) ? (phase + n + 3) / 4 * 3
                    : per > 1 ? (phase + n + per - 1) / per : n * ysz;
    uint8_t *y = gb_place(&gy, ybytes, where, rndn(3), ysz);
    size_t before = (size_t)(y - gy.data) < WIN ? (size_t)(y - gy.data) : WIN;
    size_t after = (size_t)(gy.data + gy.cap - (y + ybytes));
    if (after > WIN) after = WIN;
    uint8_t *w = y - before;
    size_t wlen = before + ybytes + after;
    for (size_t i = 0; i < wlen; i++) w[i] = (uint8_t)rnd();
    memcpy(yref, w, wlen);

    qk_quant_scalar(xk, qk, yk, x, yref + before, n, &p);
    fn(x, y, n, &p);
    cases++;
    if (memcmp(w, yref, wlen) != 0) {
        if (failures++ < MAX_REPORTS) {
            size_t k = 0;
            while (w[k] == yref[k]) k++;
            long off = (long)k - (long)before;
            printf("FAIL quant x=%s %s y=%s(%s) n=%zu blk=%zu phase=%u zp=%s recip=%s: byte %ld "
                   "scalar %02x neon %02x\n", xk_name[xk], qk_name[qk], yk_name[yk], t->name,
                   n, blk, phase, zp ? "yes" : "no", p.rscale ? "yes" : "no", off, yref[k], w[k]);
            if (off >= 0 && (size_t)off < ybytes) {
                size_t i = per > 1 ? ((size_t)off * per > phase ? (size_t)off * per - phase : 0)
                                   : (size_t)off / ysz;
                size_t e = blk >= n ? 0 : i / blk;
                uint32_t xb = xsz[xk] == 4 ? ((uint32_t *)x)[i] : ((uint16_t *)x)[i];
                printf("     element ~%zu: x bits %08x scale %a (f64 %a) zp %d\n", i, xb,
                       (double)scale[e], scale64[e], zp ? zp[e] : 0);
            }
        }
    }
}

static void test_quant(int rounds)
{
    for (int xk = 0; xk < QK_NX; xk++)
        for (int qk = 0; qk < QK_NQ; qk++)
            for (int yk = 0; yk < QK_NY; yk++) {
                if (!qk_neon_table.quant[xk][qk][yk]) continue;
                const otype *ts;
                size_t nt;
                switch (yk) {
                case QK_Y_B8: ts = b8_types; nt = 6; break;
                case QK_Y_B16: ts = b16_types; nt = 2; break;
                case QK_Y_P4: ts = p4_types; nt = 2; break;
                case QK_Y_P2: ts = p2_types; nt = 2; break;
                case QK_Y_B32: ts = b32_types; nt = 2; break;
                case QK_Y_F16: case QK_Y_BF16: ts = hq_types; nt = 1; break;
                default:
                    if (!is_fp_y(yk)) {   /* a kind this test does not know yet */
                        printf("FAIL quant y=%s: no generator\n", yk_name[yk]);
                        failures++;
                        continue;
                    }
                    ts = fp_types; nt = 2; break;
                }
                long f0 = failures;
                for (size_t ti = 0; ti < nt; ti++) {
                    size_t c = 0;
                    for (int r = 0; r < rounds; r++) {
                        for (size_t n = 0; n <= 300; n++) quant_case(xk, qk, yk, &ts[ti], n, c++);
                        static const size_t big[] = {511, 1024, 1031, 4096, 5003};
                        for (size_t b = 0; b < 5; b++) quant_case(xk, qk, yk, &ts[ti], big[b], c++);
                    }
                }
                printf("quant   x=%-4s %-6s y=%-3s %s\n", xk_name[xk], qk_name[qk], yk_name[yk],
                       failures == f0 ? "ok" : "FAILED");
            }
}

/* ------------------------------------------------------------------ dequantize */

static void dequant_case(int dk, int ok, int sgn, unsigned bits, size_t n, size_t c)
{
    qk_dequant_fn fn = qk_neon_table.dequant[dk][ok];
    unsigned per = dk == QK_D_P4 || dk == QK_D_PE2M1 ? 2 : dk == QK_D_P2 || is_p6_d(dk) ? 4 : 1;
    size_t xsz = dk == QK_D_B16 || dk == QK_D_F16 || dk == QK_D_BF16 ? 2 : dk == QK_D_B32 ? 4 : 1;
    size_t osz = ok == QK_O_F32 ? 4 : ok == QK_O_E8M0 ? 1 : 2;
    size_t blk = pick_blk(n, c);
    unsigned phase = per > 1 ? (unsigned)(c / 3 % per) : 0;
    size_t ne = entries_for(n, blk);
    int where = (int)(c & 1);
    int use_zp = (c / 2) % 4 != 0;
    size_t skew = rndn(4);
    unsigned cb = dk == QK_D_B16 ? 16 : dk == QK_D_P4 ? 4 : dk == QK_D_P2 ? 2 :
                  dk == QK_D_B32 ? 32 : bits;
    int64_t cmin = sgn ? -((int64_t)1 << (cb - 1)) : 0;
    int64_t cmax = sgn ? ((int64_t)1 << (cb - 1)) - 1 : ((int64_t)1 << cb) - 1;
    int wide = dk == QK_D_B32;

    float *scale = (float *)gb_place(&gs, ne * 4, where, skew, 4);
    int32_t *zp = use_zp && !wide ? (int32_t *)gb_place(&gz, ne * 4, !where, skew, 4) : NULL;
    int64_t *zp64 = use_zp && wide ? (int64_t *)gb_place(&gz, ne * 8, !where, skew, 8) : NULL;
    /* float6: zero points of the type, subtracted in float */
    float *zpf = use_zp && dk >= QK_D_E2M3 ? (float *)gb_place(&gs64, ne * 4, where, skew, 4) : NULL;
    float s0 = gen_dq_scale();
    int same = rnd() & 1;
    int huge = wide && rnd() % 16 == 0;   /* beyond any 32-bit type: the scalar fallback */
    for (size_t e = 0; e < ne; e++) {
        scale[e] = same || e == 0 ? s0 : gen_dq_scale();
        int64_t z = rnd() % 4 ? cmin + (int64_t)(rnd() % (uint64_t)(cmax - cmin + 1))
                              : (rnd() & 1 ? cmin : cmax);
        if (huge && rnd() % 8 == 0) z = (int64_t)(rnd() >> (rnd() % 12)) * (rnd() & 1 ? 1 : -1);
        if (zp) zp[e] = (int32_t)z;
        if (zp64) zp64[e] = z;
        if (zpf) zpf[e] = gen_f4_zero_point();
    }
    qk_dparams p;
    memset(&p, 0, sizeof p);
    p.scale = ne ? scale : NULL;
    p.zp = zp;
    p.zp64 = zp64;
    p.blk = blk;
    p.bits = bits;
    p.is_signed = sgn;
    p.phase = phase;
    p.zpf = zpf;

    size_t xbytes = is_p6_d(dk) ? (phase + n + 3) / 4 * 3
                    : per > 1 ? (phase + n + per - 1) / per : n * xsz;
    uint8_t *x = gb_place(&gx, xbytes, !where, skew, xsz);
    for (size_t i = 0; i < xbytes; i++) x[i] = (uint8_t)rnd();
    if (rnd() % 4 == 0 && dk == QK_D_B16)   /* range edges */
        for (size_t i = 0; i < n; i++)
            ((uint16_t *)x)[i] = rnd() & 1 ? (uint16_t)(rnd() & 1 ? 0x7fff : 0x8000)
                                           : (uint16_t)(rnd() & 1 ? 0xffff : 0);
    if (dk == QK_D_B32 && rnd() % 2 == 0)   /* range edges and values needing rounding */
        for (size_t i = 0; i < n; i++) {
            static const uint32_t edge[] = {0x7fffffffu, 0x80000000u, 0xffffffffu, 0u,
                                            0x01000001u, 0xfefffffeu, 0x00ffffffu, 0x81000003u};
            if (rnd() & 1) ((uint32_t *)x)[i] = edge[rndn(8)];
        }

    size_t ybytes = n * osz;
    uint8_t *y = gb_place(&gy, ybytes, where, rndn(3), osz);
    size_t before = (size_t)(y - gy.data) < WIN ? (size_t)(y - gy.data) : WIN;
    size_t after = (size_t)(gy.data + gy.cap - (y + ybytes));
    if (after > WIN) after = WIN;
    uint8_t *w = y - before;
    size_t wlen = before + ybytes + after;
    for (size_t i = 0; i < wlen; i++) w[i] = (uint8_t)rnd();
    memcpy(yref, w, wlen);

    qk_dequant_scalar(dk, ok, x, yref + before, n, &p);
    fn(x, y, n, &p);
    cases++;
    if (memcmp(w, yref, wlen) != 0 && failures++ < MAX_REPORTS) {
        size_t k = 0;
        while (w[k] == yref[k]) k++;
        long off = (long)k - (long)before;
        printf("FAIL dequant x=%s(%s%u) y=%s n=%zu blk=%zu phase=%u zp=%s: byte %ld "
               "scalar %02x neon %02x\n", dk_name[dk], sgn ? "i" : "u", cb, ok_name[ok], n, blk,
               phase, zp ? "yes" : "no", off, yref[k], w[k]);
        if (off >= 0 && (size_t)off < ybytes) {
            size_t i = (size_t)off / osz, e = blk >= n ? 0 : i / blk;
            printf("     element %zu: scale %a zp %lld\n", i, (double)scale[e],
                   zp ? (long long)zp[e] : zp64 ? (long long)zp64[e] : 0LL);
        }
    }
}

static void test_dequant(int rounds)
{
    for (int dk = 0; dk < QK_ND; dk++)
        for (int ok = 0; ok < QK_NO; ok++) {
            if (!qk_neon_table.dequant[dk][ok]) continue;
            long f0 = failures;
            for (int sgn = 0; sgn < 2; sgn++)
                for (unsigned bits = 2; bits <= 8; bits *= 2) {
                    if (dk != QK_D_B8 && bits != 8) continue;   /* bits only matters for B8 */
                    size_t c = 0;
                    for (int r = 0; r < rounds; r++) {
                        for (size_t n = 0; n <= 300; n++) dequant_case(dk, ok, sgn, bits, n, c++);
                        static const size_t big[] = {511, 1024, 1031, 4096, 5003};
                        for (size_t b = 0; b < 5; b++) dequant_case(dk, ok, sgn, bits, big[b], c++);
                    }
                }
            printf("dequant x=%-4s y=%-4s %s\n", dk_name[dk], ok_name[ok],
                   failures == f0 ? "ok" : "FAILED");
        }
}

/* ------------------------------------------------------------------ min / max */

static float gen_mm_value(int style)
{
    switch (style) {
    case 0: return f32_of(special_f32[rndn(N_SPECIAL)]);
    case 1: return rnd() & 1 ? 0.0f : -0.0f;
    case 2: {   /* NaNs and zeros, a few numbers */
        uint32_t k = (uint32_t)rndn(8);
        if (k < 4) return f32_of(0x7f800000u | (rnd32() & 0x807fffffu) | 1u);
        if (k < 7) return rnd() & 1 ? 0.0f : -0.0f;
        return (float)rnd_range(-3, 3);
    }
    case 3: return f32_of(rnd32());
    case 4: return f32_of(0x7fc00000u | (rnd32() & 0x80000000u));   /* all NaN */
    case 5: return (float)rnd_range(0, 2) * (rnd() & 1 ? 1.0f : -1.0f);   /* ties, zeros */
    default: return (float)((double)(int32_t)rnd32() * 1e-6);
    }
}

static void minmax_case(size_t n, size_t c)
{
    int where = (int)(c & 1);
    float *x = (float *)gb_place(&gx, n * 4, where, rndn(4), 4);
    int style = (int)(c / 2 % 7);
    for (size_t i = 0; i < n; i++) x[i] = gen_mm_value(rnd() % 8 ? style : (int)rndn(7));
    float a0, b0, a1, b1;
    qk_scalar_table.minmax_f32(x, n, &a0, &b0);
    qk_neon_table.minmax_f32(x, n, &a1, &b1);
    cases++;
    if ((qk_f32_bits(a0) != qk_f32_bits(a1) || qk_f32_bits(b0) != qk_f32_bits(b1)) &&
        failures++ < MAX_REPORTS)
        printf("FAIL minmax n=%zu style=%d: scalar %08x %08x neon %08x %08x\n", n, style,
               qk_f32_bits(a0), qk_f32_bits(b0), qk_f32_bits(a1), qk_f32_bits(b1));
}

static void test_minmax(int rounds)
{
    if (!qk_neon_table.minmax_f32) return;
    long f0 = failures;
    size_t c = 0;
    for (int r = 0; r < 4 * rounds; r++) {
        for (size_t n = 0; n <= 300; n++) minmax_case(n, c++);
        static const size_t big[] = {1000, 4099, 16384};
        for (size_t b = 0; b < 3; b++) minmax_case(big[b], c++);
    }
    printf("minmax_f32                %s\n", failures == f0 ? "ok" : "FAILED");
}

/* ------------------------------------------------------------------ sweeps */

/* float32 -> float16 / bfloat16 rounding as the dequantize kernels do it, on chosen bit
 * patterns: code 1, zero point 0 and one scale per element make y = round(scale) exactly. */
static long sweep_convert(const uint32_t *pat, size_t n)
{
    static uint8_t ones[4096];
    static uint16_t a[4096], b[4096];
    long bad = 0;
    memset(ones, 1, sizeof ones);
    for (int ok = QK_O_F16; ok <= QK_O_BF16; ok++) {
        qk_dequant_fn fn = qk_neon_table.dequant[QK_D_B8][ok];
        if (!fn) continue;
        for (size_t s = 0; s < n; s += 4096) {
            size_t m = n - s < 4096 ? n - s : 4096;
            qk_dparams p;
            memset(&p, 0, sizeof p);
            p.scale = (const float *)(const void *)(pat + s);
            p.blk = 1;
            p.bits = 8;
            qk_dequant_scalar(QK_D_B8, ok, ones, a, m, &p);
            fn(ones, b, m, &p);
            for (size_t i = 0; i < m; i++)
                if (a[i] != b[i] && bad++ < 5)
                    printf("FAIL convert to %s: f32 %08x scalar %04x neon %04x\n", ok_name[ok],
                           pat[s + i], a[i], b[i]);
        }
    }
    return bad;
}

static void test_sweeps(int rounds)
{
    size_t cap = 1u << 20, n = 0;
    uint32_t *pat = malloc(cap * sizeof *pat);
    if (!pat) exit(2);
    /* every float16 / bfloat16 value widened, and the float32 patterns around each rounding
     * boundary (halfway points, one below, one above), both signs, NaN payloads included */
    for (uint32_t h = 0; h < 0x8000u; h++) {
        uint32_t f = qk_f32_bits(qk_f16_to_f32((uint16_t)h));
        uint32_t g = h << 16;
        static const int32_t d16[] = {0, 1, -1, 0xfff, 0x1000, 0x1001, -0x1000, -0x1001};
        static const int32_t d8[] = {0x7fff, 0x8000, 0x8001, -0x8000, -0x7fff};
        for (int k = 0; k < 8; k++) pat[n++] = f + (uint32_t)d16[k];
        for (int k = 0; k < 5; k++) pat[n++] = g + (uint32_t)d8[k];
    }
    size_t half = n;
    for (size_t i = 0; i < half; i++) pat[n++] = pat[i] ^ 0x80000000u;
    while (n < cap) pat[n++] = rnd32();   /* and random patterns */
    long bad = 0;
    for (int r = 0; r < rounds; r++) {
        bad += sweep_convert(pat, n);
        for (size_t i = half * 2; i < n; i++) pat[i] = rnd32();
    }

    /* every float16 / bfloat16 input against a set of scales and zero points */
    uint16_t *x = malloc(65536 * 2);
    uint8_t *ya = malloc(65536 * 2), *yb = malloc(65536 * 2);
    if (!x || !ya || !yb) exit(2);
    for (uint32_t i = 0; i < 65536; i++) x[i] = (uint16_t)i;
    static const float scales[] = {1.0f, 0.5f, 0.25f, 3.0f, 0.1f, 1e-3f, 7.5f, 1.0f / 3.0f,
                                   0x1p-24f, 65504.0f, 1e30f, 1e-30f};
    for (int xk = QK_X_F16; xk <= QK_X_BF16; xk++)
        for (int qk = QK_Q_F32; qk <= QK_Q_BF16; qk++)
            for (int yk = QK_Y_B8; yk <= QK_Y_B16; yk++) {
                qk_quant_fn fn = qk_neon_table.quant[xk][qk][yk];
                if (!fn) continue;
                const otype *t = yk == QK_Y_B8 ? &b8_types[0] : &b16_types[1];
                for (size_t si = 0; si < sizeof scales / sizeof scales[0]; si++)
                    for (int zi = 0; zi < 3; zi++) {
                        int32_t z = zi == 0 ? t->qmin : zi == 1 ? t->qmax : (t->qmin + t->qmax) / 2 + 1;
                        float s = scales[si];
                        if (qk == QK_Q_F16) s = qk_round_f16(s);
                        if (qk == QK_Q_BF16) s = qk_round_bf16(s);
                        qk_qparams p;
                        memset(&p, 0, sizeof p);
                        p.scale = &s;
                        p.zp = &z;
                        p.blk = 65536;
                        p.qmin = t->qmin;
                        p.qmax = t->qmax;
                        p.mask = t->mask;
                        size_t ybytes = 65536 * (yk == QK_Y_B16 ? 2u : 1u);
                        qk_quant_scalar(xk, qk, yk, x, ya, 65536, &p);
                        fn(x, yb, 65536, &p);
                        cases++;
                        if (memcmp(ya, yb, ybytes) != 0 && bad++ < 5)
                            printf("FAIL all-%s quant %s y=%s scale %a zp %d\n", xk_name[xk],
                                   qk_name[qk], t->name, (double)s, z);
                    }
            }
    /* 32-bit codes whose difference with the zero point needs more than 53 bits: rounding
     * through double would round twice (2^60 + 2^36 + 1 -> 2^60 + 2^36 -> 2^60) */
    if (qk_neon_table.dequant[QK_D_B32][QK_O_F32]) {
        int32_t c32[32] = {0};
        float fa[32], fb[32], one = 1.0f;
        int64_t z = -(((int64_t)1 << 60) + ((int64_t)1 << 36) + 1);
        qk_dparams p;
        memset(&p, 0, sizeof p);
        p.scale = &one;
        p.zp64 = &z;
        p.blk = 32;
        p.is_signed = 1;
        qk_dequant_scalar(QK_D_B32, QK_O_F32, c32, fa, 32, &p);
        qk_neon_table.dequant[QK_D_B32][QK_O_F32](c32, fb, 32, &p);
        cases++;
        if (memcmp(fa, fb, sizeof fa) != 0 && bad++ < 5)
            printf("FAIL dequant b32 with a 61-bit zero point: scalar %a neon %a\n",
                   (double)fa[0], (double)fb[0]);
    }
    failures += bad;
    printf("sweeps (f32->f16/bf16 rounding, every f16/bf16 input) %s\n", bad ? "FAILED" : "ok");
    free(pat);
    free(x);
    free(ya);
    free(yb);
}

/* ------------------------------------------------------------------ main */

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 1;
    if (argc > 2) rng_state = strtoull(argv[2], NULL, 0);
    if (rounds < 1) rounds = 1;
    if (strcmp(qk_neon_table.name, "neon") != 0) { printf("wrong table\n"); return 2; }
    size_t cap = 16384 * 4 + 8192;
    gx = gb_new(cap);
    gy = gb_new(cap);
    gs = gb_new(cap);
    gz = gb_new(cap);
    gs64 = gb_new(2 * cap);
    gz64 = gb_new(2 * cap);
    gr = gb_new(cap);
    yref = malloc(cap);
    if (!yref) return 2;

    if (sizeof yk_name / sizeof *yk_name != QK_NY || sizeof dk_name / sizeof *dk_name != QK_ND ||
        sizeof ok_name / sizeof *ok_name != QK_NO) {
        printf("FAIL: the kind name tables do not match kernels.h\n");
        return 2;
    }
    test_quant(rounds);
    test_dequant(rounds);
    test_minmax(rounds);
    test_sweeps(rounds);

    long filled = 0, total = 0;
    for (int a = 0; a < QK_NX; a++)
        for (int b = 0; b < QK_NQ; b++)
            for (int d = 0; d < QK_NY; d++, total++) filled += qk_neon_table.quant[a][b][d] != NULL;
    for (int a = 0; a < QK_ND; a++)
        for (int b = 0; b < QK_NO; b++, total++) filled += qk_neon_table.dequant[a][b] != NULL;
    total++;
    filled += qk_neon_table.minmax_f32 != NULL;
    printf("test_neon: %ld cases, %ld/%ld table entries filled, %ld failures\n", cases, filled,
           total, failures);
    return failures ? 1 : 0;
}
