/* Parity test of the SIMD kernel tables against the scalar table.
 *
 * Every non-NULL entry of each x86 table (and of the AVX-512 table built on SIMDe, when
 * linked in) is run on the same inputs as the scalar entry, and the outputs, guard bytes
 * included, must be identical bit for bit. Inputs sit against inaccessible pages (where the
 * platform has mmap), so that a read or write past either end of a buffer faults.
 *
 * Usage: test_kernels [-q] [-M] [-s SEED] [-r REPS] [-t TABLE]
 *   -q quick (fewer lengths), -M no single-byte misalignment of typed buffers (for UBSan),
 *   -r repeats of the length sweep, -t only the named table. */
#define _DEFAULT_SOURCE
#include <float.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qsimd.h"
#include "kernels/kernels.h"
#include "tables.h"
#include "kernels/convert.h"

#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#include <unistd.h>
#define HAVE_MMAP 1
#endif

#if defined(QSIMD_TEST_HAVE_SIMDE)
#endif

/* ---------- random numbers (splitmix64: reproducible everywhere) ---------- */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd64(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static uint32_t rnd32(void) { return (uint32_t)(rnd64() >> 32); }
static uint32_t rndn(uint32_t n) { return n ? (uint32_t)(((rnd64() >> 32) * n) >> 32) : 0; }
static int64_t rnd_range(int64_t lo, int64_t hi) { return lo + (int64_t)rndn((uint32_t)(hi - lo + 1)); }
static float rnd_unit(void) { return (float)(rnd32() >> 8) * (1.0f / 16777216.0f); }

/* ---------- guarded arenas: data placed against a PROT_NONE page ---------- */
typedef struct arena {
    unsigned char *base;   /* first usable byte */
    size_t size;           /* usable bytes, a multiple of the page size */
} arena;

static size_t page_size(void)
{
#ifdef HAVE_MMAP
    return (size_t)sysconf(_SC_PAGESIZE);
#else
    return 4096;
#endif
}

static void arena_init(arena *a, size_t bytes)
{
    size_t pg = page_size();
    bytes = (bytes + pg - 1) / pg * pg;
#ifdef HAVE_MMAP
    unsigned char *m = mmap(NULL, bytes + 2 * pg, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) { perror("mmap"); exit(2); }
    if (mprotect(m, pg, PROT_NONE) || mprotect(m + pg + bytes, pg, PROT_NONE)) {
        perror("mprotect");
        exit(2);
    }
    a->base = m + pg;
#else
    a->base = malloc(bytes);
    if (!a->base) exit(2);
#endif
    a->size = bytes;
}

/* `bytes` bytes ending exactly at the guard page (at_end) or starting `off` bytes after the
 * leading one. */
static void *arena_place(arena *a, size_t bytes, int at_end, size_t off)
{
    if (bytes + off > a->size) { fprintf(stderr, "arena too small\n"); exit(2); }
    return at_end ? a->base + a->size - bytes : a->base + off;
}

/* ---------- bookkeeping ---------- */
static long n_cases, n_fail;
static int quick;
/* Also shift typed buffers by single bytes. The scalar reference then makes misaligned typed
 * accesses, which x86 and AArch64 perform but UBSan reports: -M turns this off. */
static int byte_misalign = 1;

/* An offset of 0..3 units, each one byte when byte_misalign, else one element. */
static size_t shift(size_t units, size_t elem) { return units * (byte_misalign ? 1 : elem); }
#define MAX_REPORTS 25

#if defined(__GNUC__)
static void report(const char *tname, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#endif
static void report(const char *tname, const char *what, const char *fmt, ...)
{
    n_fail++;
    if (n_fail > MAX_REPORTS) return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "MISMATCH [%s] %s: ", tname, what);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
}

static const char *xk_name[] = {"f32", "f16", "bf16", "i32"};
static const char *qk_name[] = {"q32", "q16", "qbf16", "q64"};
static const char *yk_name[] = {"B8", "B16", "P4", "P2", "E4M3FN", "E4M3FNUZ", "E5M2",
                                "E5M2FNUZ", "E2M1", "PE2M1", "B32", "F16", "BF16",
                                "E2M3", "PE2M3", "E3M2", "PE3M2"};
static const char *dk_name[] = {"B8", "B16", "P4", "P2", "B32", "E4M3FN", "E4M3FNUZ", "E5M2",
                                "E5M2FNUZ", "E2M1", "PE2M1", "F16", "BF16",
                                "E2M3", "PE2M3", "E3M2", "PE3M2"};
static const char *ok_name[] = {"f32", "f16", "bf16", "e8m0"};

/* float8 / float4 / float6 kinds */
static int fp_y(int yk) { return (yk >= QK_Y_E4M3FN && yk <= QK_Y_PE2M1) || yk >= QK_Y_E2M3; }
/* packed float6: 4 codes in 3 bytes */
static int p6_y(int yk) { return yk == QK_Y_PE2M3 || yk == QK_Y_PE3M2; }
static int p6_d(int dk) { return dk == QK_D_PE2M3 || dk == QK_D_PE3M2; }
static size_t p6_bytes(unsigned phase, size_t n) { return ((phase + n) * 6 + 7) / 8; }
static int fp_format(int yk)
{
    switch (yk) {
    case QK_Y_E2M3: case QK_Y_PE2M3: return QK_FP_E2M3;
    case QK_Y_E3M2: case QK_Y_PE3M2: return QK_FP_E3M2;
    case QK_Y_E4M3FN: return QK_FP_E4M3FN;
    case QK_Y_E4M3FNUZ: return QK_FP_E4M3FNUZ;
    case QK_Y_E5M2: return QK_FP_E5M2;
    case QK_Y_E5M2FNUZ: return QK_FP_E5M2FNUZ;
    default: return QK_FP_E2M1;
    }
}

/* ---------- value generators ---------- */
static float bits_f(uint32_t u) { return qk_bits_f32(u); }

static float special_float(void)
{
    static const uint32_t sp[] = {
        0x00000000u, 0x80000000u,                            /* +-0 */
        0x7f800000u, 0xff800000u,                            /* +-inf */
        0x7fc00000u, 0xffc00000u, 0x7f800001u, 0xff812345u,  /* NaNs, quiet and signalling */
        0x7fffffffu, 0xffffffffu, 0x7fbfffffu,
        0x00000001u, 0x80000001u, 0x007fffffu, 0x807fffffu,  /* denormals */
        0x00800000u, 0x80800000u,                            /* smallest normals */
        0x7f7fffffu, 0xff7fffffu,                            /* FLT_MAX */
        0x4f000000u, 0xcf000000u,                            /* +-2^31 */
        0x4effffffu, 0xceffffffu, 0x4f000001u, 0xcf000001u,  /* around 2^31 */
        0x4f800000u, 0xcf800000u, 0x5f000000u, 0xdf000000u,  /* 2^32, 2^63 */
        0x4b000000u, 0x4b000001u, 0xcb000001u,               /* 2^23, 2^23+1 */
        0x4b800001u, 0x4a800001u, 0x4affffffu,               /* around 2^22..2^24 */
        0x3f000000u, 0xbf000000u, 0x3fc00000u, 0xbfc00000u,  /* +-0.5, +-1.5 */
        0x40200000u, 0xc0200000u, 0x3effffffu, 0x3f000001u,  /* 2.5, just around 0.5 */
        0x477ff000u, 0x477fefffu, 0x477fe000u, 0x38800000u, 0x387fffffu, 0x33800000u,
        0x33000000u, 0x33000001u, 0x7f7f8000u, 0x7f7f7fffu,  /* f16 / bf16 edges */
    };
    return bits_f(sp[rndn(sizeof sp / sizeof sp[0])]);
}

/* A float x such that x / s stresses the quantizer for the range [lo, hi] of q. */
static float adversarial_x(float s, float lo, float hi)
{
    switch (rndn(10)) {
    case 0: case 1: {   /* inside and around the range */
        float u = lo - 4.0f + rnd_unit() * (hi - lo + 8.0f);
        return u * s;
    }
    case 2: case 3: {   /* ties k + 0.5 (exact when s is a power of two) */
        float k = (float)rnd_range((int64_t)lo - 3, (int64_t)hi + 3);
        return (k + 0.5f) * s;
    }
    case 4: {           /* at and just beyond the bounds, and ties there */
        float b = rndn(2) ? lo : hi;
        float v = (b + (float)rnd_range(-1, 1) * 0.5f) * s;
        uint32_t u = qk_f32_bits(v);
        if (rndn(2) && (u & 0x7fffffffu) != 0 && (u & 0x7fffffffu) < 0x7f800000u)
            u += rndn(2) ? 1u : (uint32_t)-1;   /* one ulp either side */
        return bits_f(u);
    }
    case 5: case 6: return special_float();
    case 7: return bits_f(rnd32());
    case 8: {           /* |q| near and beyond 2^31 */
        float m = ldexpf(1.0f + rnd_unit(), (int)rnd_range(20, 40));
        return (rndn(2) ? m : -m) * s;
    }
    default: return (rnd_unit() - 0.5f) * 4.0f * s;
    }
}

static float gen_scale(int qk, int kind)
{
    float s;
    switch (kind) {
    case 0: s = ldexpf(1.0f, (int)rnd_range(-4, 4)); break;             /* exact ties */
    case 1:   /* a quarter negative: the reciprocal form's per-element path */
        s = ldexpf(1.0f + rnd_unit(), (int)rnd_range(-12, 6));
        if (rndn(4) == 0) s = -s;
        break;
    default:
        switch (rndn(16)) {
        /* the edges of the reciprocal form's range (qk_recip) and their neighbours */
        case 12: s = nextafterf(QK_RECIP_MIN, rndn(2) ? 0.0f : 1.0f); break;
        case 13: s = nextafterf(QK_RECIP_MAX, rndn(2) ? 0.0f : INFINITY); break;
        case 14: s = rndn(2) ? QK_RECIP_MIN : -QK_RECIP_MAX; break;
        case 15: s = ldexpf(rndn(2) ? 1.0f : 2.0f - ldexpf(1.0f, -23), (int)rnd_range(-101, 120));
            break;
        case 0: s = 0.0f; break;
        case 1: s = -0.0f; break;
        case 2: s = -ldexpf(1.0f + rnd_unit(), (int)rnd_range(-6, 3)); break;
        case 3: s = NAN; break;
        case 4: s = INFINITY; break;
        case 5: s = -INFINITY; break;
        case 6: s = bits_f(1u + rndn(0x7fffff)); break;                   /* denormal */
        case 7: s = 1e-30f; break;
        case 8: s = 1e30f; break;
        case 9: s = ldexpf((float)rnd_range(1, 4095), (int)rnd_range(-20, -5)); break;
        default: s = ldexpf(1.0f + rnd_unit(), (int)rnd_range(-8, 4)); break;
        }
    }
    /* the operator layer hands the kernels scales already rounded to the quotient type */
    if (qk == QK_Q_F16) s = qk_round_f16(s);
    else if (qk == QK_Q_BF16) s = qk_round_bf16(s);
    return s;
}

/* A quotient aimed at a float8 / float4 format: its values, the ties between neighbours, one
 * float32 ulp around them, scaled copies, specials, any bit pattern. */
static float fp_quotient(int fmt)
{
    uint8_t cmask = fmt == QK_FP_E2M1 ? 0xf : fmt == QK_FP_E2M3 || fmt == QK_FP_E3M2 ? 0x3f : 0xff;
    uint8_t code = (uint8_t)(rnd32() & cmask);
    float v = qk_fp_to_f32(code, fmt);
    if (!(fabsf(v) < INFINITY)) v = qk_fp_to_f32((uint8_t)(code & 0x3f), fmt);
    uint8_t up = (uint8_t)(code + 1);
    float w = qk_fp_to_f32((uint8_t)(up & cmask), fmt);
    switch (rndn(8)) {
    case 0: case 1: return v;
    case 2: case 3:
        if (fabsf(w) < INFINITY && (w > 0) == (v > 0)) return v + (w - v) / 2;
        return v * 1.0625f;
    case 4: return nextafterf(v, rndn(2) ? INFINITY : -INFINITY);
    case 5: return special_float();
    case 6: return v * ldexpf(1.0f, (int)rnd_range(-8, 8));
    default: return bits_f(rnd32());
    }
}

/* ---------- quantize ---------- */
typedef struct qtype {
    int32_t qmin, qmax;
    uint32_t mask;
} qtype;

static const qtype b8_types[] = {
    {0, 255, 0xff}, {-128, 127, 0xff}, {0, 15, 0x0f}, {-8, 7, 0x0f}, {0, 3, 0x03}, {-2, 1, 0x03},
};
static const qtype b16_types[] = {{0, 65535, 0xff}, {-32768, 32767, 0xff}};
static const qtype p4_types[] = {{0, 15, 0x0f}, {-8, 7, 0x0f}};
static const qtype p2_types[] = {{0, 3, 0x03}, {-2, 1, 0x03}};

static arena ax, ay1, ay2, asc, azp, asc64, arsc;

static size_t ybytes_of(int yk, unsigned phase, size_t n)
{
    switch (yk) {
    case QK_Y_B8: return n;
    case QK_Y_B16: return 2 * n;
    case QK_Y_P4: case QK_Y_PE2M1: return (phase + n + 1) / 2;
    case QK_Y_P2: return (phase + n + 3) / 4;
    case QK_Y_PE2M3: case QK_Y_PE3M2: return p6_bytes(phase, n);
    case QK_Y_B32: return 4 * n;
    case QK_Y_F16: case QK_Y_BF16: return 2 * n;
    default: return n;   /* float8, unpacked float4 / float6 */
    }
}

static void store_x(int xk, void *x, size_t i, float v, int32_t iv)
{
    unsigned char *b = (unsigned char *)x;
    uint16_t h;
    switch (xk) {
    case QK_X_F32: memcpy(b + 4 * i, &v, 4); break;
    case QK_X_F16:
        /* mostly converted values, sometimes raw half patterns (NaN payloads, subnormals) */
        h = rndn(8) ? qk_f32_to_f16(v) : (uint16_t)rnd32();
        memcpy(b + 2 * i, &h, 2);
        break;
    case QK_X_BF16:
        h = rndn(8) ? qk_f32_to_bf16(v) : (uint16_t)rnd32();
        if (rndn(4) == 0) h = (uint16_t)(qk_f32_bits(v) >> 16);   /* truncated: other NaNs */
        memcpy(b + 2 * i, &h, 2);
        break;
    default: memcpy(b + 4 * i, &iv, 4); break;
    }
}

static int32_t adversarial_i32(float s, float lo, float hi)
{
    static const int32_t sp[] = {0, 1, -1, INT32_MAX, INT32_MIN, INT32_MIN + 1, 16777217,
                                 -16777217, 16777216, 33554431, 2147483520, -2147483520};
    switch (rndn(4)) {
    case 0: return sp[rndn(sizeof sp / sizeof sp[0])];
    case 1: return (int32_t)rnd32();
    default: {
        float v = adversarial_x(s, lo, hi);
        if (!(fabsf(v) < 2.0e9f)) return (int32_t)rnd32();
        return (int32_t)v;
    }
    }
}

typedef struct qcase {
    int xk, qk, yk;
    size_t n, blk;
    qtype ty;
    unsigned phase;
    int zp_null;
    int scale_kind;
    int x_at_end, y_at_end;
    size_t xoff, yoff;
    int inplace;   /* y == x (the output is never wider than the input) */
    int sat;   /* float8: saturate */
    int u32;   /* QK_Y_B32: the uint32 range, else int32 */
    size_t pos, row, erow, kdim;   /* the run's layout (kernels.h); zero: a plain run */
} qcase;

/* ---------- layouts ---------- */
/* Entry of element i of a case's run, and the number of entries its arrays need: every
 * entry up to the largest used, with kdim > 1 to the end of its row of entries (kernels.h);
 * the arrays end at a guard page, so nothing may read past them. */
#define CASE_ENTRY(c, i) \
    (qk_entry((c)->blk, (c)->pos, (c)->row, (c)->erow, (c)->kdim, 0, (i), &(size_t){0}))
#define CASE_ENTRIES(c, n, used, out)                                                 \
    do {                                                                              \
        size_t mx_ = 0;                                                               \
        for (size_t i_ = 0; i_ < (n); i_++) {                                         \
            size_t e_ = CASE_ENTRY(c, i_);                                            \
            if ((c)->kdim > 1) e_ += (c)->kdim - 1 - ((c)->pos + i_) % (c)->kdim;     \
            if (e_ > mx_) mx_ = e_;                                                   \
        }                                                                             \
        (used) = (out) = mx_ + 1;                                                     \
    } while (0)

/* Layouts of the driver's short-row paths and their fallbacks, {case of gen_layout, D, inner,
 * B}: per-axis along a last axis shorter than a vector or a chunk (several rows per vector)
 * or up to the periodic expansion's limit and past it; blocks that do not divide a short last
 * axis (a partial block per row, one block per row, rows of three blocks of whole vectors)
 * or whose chunks span more entries than a vector holds; per-axis over short rows; plain
 * blocks that do not fall on chunks; blocks along an outer axis of an inner size shorter
 * than a vector (segments of whole rows, a partial last block, blocks under a vector, one
 * block per row of fewer elements than a vector). */
static const size_t short_lay[][4] = {
    {1, 7, 1, 0}, {1, 3, 1, 0}, {1, 5, 1, 0}, {1, 12, 1, 0}, {1, 56, 1, 0}, {1, 100, 1, 0},
    {1, 200, 1, 0}, {1, 460, 1, 0}, {1, 500, 1, 0}, {2, 7, 1, 32}, {2, 56, 1, 32},
    {2, 9, 1, 5}, {2, 100, 1, 32}, {2, 3, 1, 2}, {2, 20, 1, 8}, {2, 13, 1, 4}, {2, 70, 1, 24},
    {2, 300, 1, 40}, {2, 80, 1, 32}, {0, 3, 25, 0}, {0, 5, 7, 0}, {0, 16, 13, 0}, {0, 7, 40, 0},
    {0, 2, 3, 0}, {0, 40, 9, 0}, {3, 9, 3, 4}, {4, 1, 1, 40}, {4, 1, 1, 7}, {4, 1, 1, 3},
    {3, 40, 3, 8}, {3, 45, 6, 8}, {3, 70, 9, 32}, {3, 20, 12, 2}, {3, 50, 5, 4},
    {3, 3, 3, 32}, {3, 2, 2, 4}, {3, 5, 2, 8}, {3, 2, 7, 2},
    /* the last N_LONG_LAY, in long runs: rows longer than two of the driver's column tiles
     * (QD_COLW), a partial last tile, rows of whole cache lines of float32 or not: per-axis
     * along a last axis, blocks along an outer axis; per-axis along a short last axis over
     * many of the driver's rows of lcm(D, chunk); a last tile shorter than a chunk */
    {1, 14, 1, 0}, {1, 2500, 1, 0}, {3, 10, 1104, 4}, {1, 2064, 1, 0}, {3, 6, 1030, 3},
};
#define N_LONG_LAY 5
#define N_SHORT_LAY (sizeof short_lay / sizeof short_lay[0])
/* Run r of a table's layout cases (R of them, then 2 N_LONG_LAY of long rows): its
 * short_lay pick (two in three, every short layout even in a quick run; -1: a random layout)
 * and the longest run. */
#define LAY_PICK(r, R) ((r) >= (R) ? (int)(N_SHORT_LAY - 1 - (size_t)((r) - (R)) % N_LONG_LAY) \
                                   : (r) % 3 ? (r) - (r) / 3 - 1 : -1)
#define LAY_MAXN(r, R) ((r) >= (R) ? 40000 : (r) % 8 ? 700 : 20000)

/* A random layout of a random tensor (outer, D, inner) as the operator layer describes it,
 * and a random run of it: per-axis, per-axis along the last axis, blocks along the last axis,
 * blocks along an outer axis, plain blocks; dimensions around the vector widths, or (pick >=
 * 0) short_lay[pick % its size]. blk, pos, row, erow, kdim and n are set; returns 0 when the
 * run is empty. */
static int gen_layout(size_t *blk, size_t *pos, size_t *row, size_t *erow, size_t *kdim,
                      size_t *n, size_t maxn, int pick)
{
    static const size_t dims[] = {1, 2, 3, 4, 5, 7, 8, 9, 14, 15, 16, 17, 24, 31, 32, 33, 49,
                                  56, 63, 64, 65, 100, 196};
    size_t nd = sizeof dims / sizeof dims[0], ns = N_SHORT_LAY;
    size_t D = dims[rndn((uint32_t)nd)], inner = dims[rndn((uint32_t)nd)];
    size_t B = dims[rndn((uint32_t)nd)], outer = 1 + rndn(6), kind = rndn(4);
    if (pick >= 0) {
        const size_t *l = short_lay[(size_t)pick % ns];
        kind = l[0]; D = l[1]; inner = l[2]; B = l[3] ? l[3] : 1;
        outer = 1 + rndn(D * inner > 1000 ? 8 : 400);   /* (long rows: the arenas' size) */
    }
    size_t total, s = (D + B - 1) / B;
    *pos = *row = *erow = *kdim = 0;
    switch (kind) {
    case 0:   /* per-axis */
        *row = D * inner; *blk = inner;
        break;
    case 1:   /* per-axis along the last axis */
        inner = 1; *kdim = D; *blk = (size_t)-1;
        break;
    case 2:   /* blocks along the last axis */
        inner = 1; *row = D; *erow = s; *blk = B;
        break;
    case 3:   /* blocks along an outer axis */
        *row = D * inner; *erow = s * inner; *blk = B * inner; *kdim = inner;
        break;
    default:  /* plain blocks */
        *blk = B;
        break;
    }
    total = outer * D * inner;
    size_t a = rndn((uint32_t)total), b = a + 1 + rndn((uint32_t)(total - a));
    if (b - a > maxn) b = a + maxn;
    *pos = a;
    *n = b - a;
    return *n > 0;
}

/* A quotient aimed at float16 / bfloat16 (AMD Quark's outputs): ties between neighbours of
 * few mantissa bits, the overflow and subnormal edges, specials, any bit pattern. */
static float half_quotient(void)
{
    switch (rndn(6)) {
    case 0: case 1:
        return ldexpf((float)rnd_range(-4095, 4095) + 0.5f, (int)rnd_range(-40, 12));
    case 2: return ldexpf(1.0f + rnd_unit(), (int)rnd_range(-27, 17)) * (rndn(2) ? 1 : -1);
    case 3: return special_float();
    case 4: return bits_f(rnd32());
    default: return (rnd_unit() - 0.5f) * 1000.0f;
    }
}

static void run_quant(const char *tname, qk_quant_fn fn, qk_quant_fn ref, const qcase *c)
{
    size_t n = c->n, entries, used;
    CASE_ENTRIES(c, n, used, entries);
    size_t xs = (c->xk == QK_X_F32 || c->xk == QK_X_I32) ? 4 : 2;
    float *scale = arena_place(&asc, entries * sizeof(float), 1, 0);
    double *scale64 = arena_place(&asc64, entries * sizeof(double), 1, 0);
    float *rscale = arena_place(&arsc, entries * sizeof(float), 1, 0);
    int32_t *zp = arena_place(&azp, entries * sizeof(int32_t), 1, 0);
    /* float4 zero points (added in float); the same arena, the integer ones are unused */
    float *zpf = (float *)zp;
    int fp = fp_y(c->yk), f4 = c->yk == QK_Y_E2M1 || c->yk == QK_Y_PE2M1 || c->yk >= QK_Y_E2M3;
    int b32 = c->yk == QK_Y_B32, hq = c->yk == QK_Y_F16 || c->yk == QK_Y_BF16;
    /* 32-bit outputs: int64 zero points and range (the int32 zero points are unused) */
    int64_t *zp64 = b32 ? arena_place(&azp, entries * sizeof(int64_t), 1, 0) : NULL;
    int64_t qmin64 = c->u32 ? 0 : INT32_MIN, qmax64 = c->u32 ? (int64_t)UINT32_MAX : INT32_MAX;
    for (size_t e = used; e < entries; e++) {   /* the padding: zero */
        scale[e] = rscale[e] = 0.0f;
        scale64[e] = 0.0;
        zp[e] = 0;
        if (zp64) zp64[e] = 0;
    }
    for (size_t e = 0; e < used; e++) {
        scale[e] = gen_scale(c->qk, c->scale_kind);
        if (hq) {   /* Quark float16 / bfloat16: zero points added in float32 */
            static const float zh[] = {0.0f, -0.0f, 0.5f, -1.5f, 3.0f, 65504.0f, -65520.0f,
                                       1.0e-7f, -3.0e38f, 0.00048828125f};
            zpf[e] = zh[rndn(10)];
            scale64[e] = scale[e];
            continue;
        }
        if (b32) {
            scale64[e] = scale[e];
            switch (rndn(5)) {
            case 0: zp64[e] = qmin64; break;
            case 1: zp64[e] = qmax64; break;
            case 2: zp64[e] = 0; break;
            default: zp64[e] = qmin64 + (int64_t)(rnd64() % (uint64_t)(qmax64 - qmin64 + 1));
            }
            continue;
        }
        if (f4) {
            static const float z4[] = {0.0f, -0.0f, 0.5f, -0.5f, 1.5f, -3.0f, 6.0f, -6.0f,
                                       7.5f, -28.0f, 0.125f, -0.0625f};
            zpf[e] = z4[rndn(c->yk >= QK_Y_E2M3 ? 12 : 8)];
            continue;
        }
        scale64[e] = scale[e];
        int32_t z;
        switch (rndn(5)) {
        case 0: z = c->ty.qmin; break;
        case 1: z = c->ty.qmax; break;
        case 2: z = 0; break;
        default: z = (int32_t)rnd_range(c->ty.qmin, c->ty.qmax);
        }
        zp[e] = z;
    }
    unsigned char *x = c->x_at_end ? arena_place(&ax, n * xs, 1, 0)
                                   : arena_place(&ax, n * xs + c->xoff, 0, c->xoff);
    for (size_t i = 0; i < n; i++) {
        size_t e = CASE_ENTRY(c, i);
        int64_t z = c->zp_null || hq ? 0 : b32 ? zp64[e] : zp[e];
        float s = scale[e];
        if (!(s != 0.0f && fabsf(s) < INFINITY)) s = 1.0f;   /* keep x meaningful */
        /* int64: for 32-bit outputs qmin - z overflows int */
        float lo = (float)((b32 ? qmin64 : c->ty.qmin) - z);
        float hi = (float)((b32 ? qmax64 : c->ty.qmax) - z);
        if (hq)
            store_x(c->xk, x, i, half_quotient() * s, adversarial_i32(s, -70000.0f, 70000.0f));
        else if (fp)
            store_x(c->xk, x, i, fp_quotient(fp_format(c->yk)) * s, adversarial_i32(s, lo, hi));
        else
            store_x(c->xk, x, i, adversarial_x(s, lo, hi), adversarial_i32(s, lo, hi));
    }

    size_t yb = ybytes_of(c->yk, c->phase, n);
    const size_t G = 16;   /* guard bytes on each side (none after when y_at_end) */
    size_t gafter = c->y_at_end ? 0 : G;
    size_t total = G + yb + gafter;
    unsigned char *r1 = arena_place(&ay1, total + c->yoff, c->y_at_end, c->yoff);
    unsigned char *r2 = arena_place(&ay2, total + c->yoff, c->y_at_end, c->yoff);
    if (c->inplace) {   /* the run's input in the output buffer; its guards stay random */
        yb = n * xs;
        total = G + yb + gafter;
        r1 = arena_place(&ay1, total + c->yoff, c->y_at_end, c->yoff);
        r2 = arena_place(&ay2, total + c->yoff, c->y_at_end, c->yoff);
    }
    for (size_t i = 0; i < total; i++) r1[i] = (unsigned char)rnd32();
    if (c->inplace) memcpy(r1 + G, x, n * xs);
    memcpy(r2, r1, total);
    unsigned char *pattern = malloc(total ? total : 1);
    memcpy(pattern, r1, total);

    /* reciprocals as the operator layer passes them: all valid, or none (divide) */
    int recip = rndn(8) != 0;
    for (size_t e = 0; e < used; e++) {
        rscale[e] = qk_recip(scale[e]);
        recip &= rscale[e] != 0.0f;
    }

    qk_qparams p;
    memset(&p, 0, sizeof p);
    p.scale = scale;
    p.scale64 = scale64;
    p.rscale = recip ? rscale : NULL;
    p.zp = c->zp_null || fp || b32 || hq ? NULL : zp;
    p.zpf = (f4 || hq) && !c->zp_null ? zpf : NULL;
    p.zp64 = b32 && !c->zp_null ? zp64 : NULL;
    p.qmin64 = qmin64;
    p.qmax64 = qmax64;
    p.saturate = c->sat;
    p.blk = c->blk;
    p.pos = c->pos; p.row = c->row; p.erow = c->erow; p.kdim = c->kdim;
    p.qmin = c->ty.qmin;
    p.qmax = c->ty.qmax;
    p.mask = c->ty.mask;
    p.phase = c->phase;
    p.stream = n > 4096 && rndn(2);   /* non-temporal stores allowed (long runs) */
    for (size_t e = 0; e < used; e++) p.negs |= scale[e] < 0.0f;   /* as params.c */
    if (c->inplace) {
        ref(r1 + G, r1 + G, n, &p);
        fn(r2 + G, r2 + G, n, &p);
    } else {
        ref(x, r1 + G, n, &p);
        fn(x, r2 + G, n, &p);
    }
    n_cases++;

    char what[64];
    snprintf(what, sizeof what, "quant %s/%s/%s%s", xk_name[c->xk], qk_name[c->qk],
             yk_name[c->yk], c->inplace ? " in place" : "");
    /* the reference itself must respect the guards; a disagreement is the SIMD's fault */
    for (size_t i = 0; i < total; i++) {
        if (r1[i] != r2[i]) {
            size_t off = i >= G ? i - G : 0;
            report(tname, what,
                   "n=%zu blk=%zu q=[%d,%d] zp=%s sat=%d phase=%u xoff=%zu yoff=%zu byte %zd: "
                   "scalar %02x simd %02x (element ~%zu)",
                   n, c->blk, c->ty.qmin, c->ty.qmax, c->zp_null ? "none" : "set", c->sat,
                   c->phase, c->xoff, c->yoff, (ptrdiff_t)i - (ptrdiff_t)G, r1[i], r2[i],
                   c->yk == QK_Y_B32 ? off / 4 : c->yk == QK_Y_B16 || c->yk == QK_Y_F16 ||
                   c->yk == QK_Y_BF16 ? off / 2 : c->yk == QK_Y_P4 || c->yk == QK_Y_PE2M1
                   ? off * 2 : c->yk == QK_Y_P2 ? off * 4 : off);
            break;
        }
    }
    /* guard bytes and the neighbours' bits in the first / last packed byte */
    int guard_bad = 0;
    for (size_t i = 0; i < G; i++) guard_bad |= r2[i] != pattern[i];
    for (size_t i = G + yb; i < total; i++) guard_bad |= r2[i] != pattern[i];
    if ((c->yk == QK_Y_P4 || c->yk == QK_Y_P2 || c->yk == QK_Y_PE2M1) && n > 0 && !c->inplace) {
        unsigned bits = c->yk == QK_Y_P2 ? 2 : 4, per = 8 / bits;
        unsigned first_keep = (1u << (c->phase * bits)) - 1u;
        unsigned endslot = (unsigned)((c->phase + n - 1) % per) + 1;
        unsigned last_keep = endslot == per ? 0u : (0xffu << (endslot * bits)) & 0xffu;
        if ((r2[G] & first_keep) != (pattern[G] & first_keep)) guard_bad = 1;
        if ((r2[G + yb - 1] & last_keep) != (pattern[G + yb - 1] & last_keep)) guard_bad = 1;
    }
    if (p6_y(c->yk) && !c->inplace) {   /* every bit of the run's bytes outside its slots */
        for (size_t bit = 0; bit < yb * 8; bit++) {
            if (bit >= (size_t)c->phase * 6 && bit < (c->phase + n) * 6) continue;
            if (((r2[G + bit / 8] ^ pattern[G + bit / 8]) >> (bit % 8)) & 1u) guard_bad = 1;
        }
    }
    if (guard_bad)
        report(tname, what, "n=%zu blk=%zu phase=%u: bytes outside the run changed", n, c->blk,
               c->phase);
    free(pattern);
}

static const qtype *types_for(int yk, size_t *count)
{
    switch (yk) {
    case QK_Y_B8: *count = 6; return b8_types;
    case QK_Y_B16: *count = 2; return b16_types;
    case QK_Y_P4: *count = 2; return p4_types;
    case QK_Y_P2: *count = 2; return p2_types;
    default: *count = 1; return b8_types;   /* float kinds: the range fields are unused */
    }
}

static const size_t blk_modes[] = {0 /* >= n */, 1, 2, 3, 5, 8, 16, 17, 32, 33, 64, 128};
#define N_BLK (sizeof blk_modes / sizeof blk_modes[0])

static void sweep_quant(const char *tname, const qk_table *t, int xk, int qk, int yk)
{
    qk_quant_fn fn = t->quant[xk][qk][yk], ref = qk_scalar_table.quant[xk][qk][yk];
    size_t nt;
    const qtype *types = types_for(yk, &nt);
    unsigned per = yk == QK_Y_P4 || yk == QK_Y_PE2M1 ? 2 : yk == QK_Y_P2 || p6_y(yk) ? 4 : 1;
    size_t xs = (xk == QK_X_F32 || xk == QK_X_I32) ? 4 : 2;
    size_t ys = yk == QK_Y_B32 ? 4 : yk == QK_Y_B16 || yk == QK_Y_F16 || yk == QK_Y_BF16 ? 2 : 1;
    size_t maxn = quick ? 100 : 300;
    long k = 0;
    for (size_t n = 0; n <= maxn; n++) {
        for (size_t b = 0; b < N_BLK; b++) {
            if (blk_modes[b] >= n && b > 0) continue;   /* same as blk >= n */
            qcase c;
            memset(&c, 0, sizeof c);
            c.xk = xk; c.qk = qk; c.yk = yk; c.n = n;
            c.blk = b == 0 ? (k % 3 == 0 ? n : n + 1 + (size_t)rndn(1000)) : blk_modes[b];
            c.ty = types[k % nt];
            c.phase = (unsigned)(k / nt % per);
            c.zp_null = rndn(4) == 0;
            c.scale_kind = (int)rndn(3);
            c.x_at_end = rndn(2);
            c.y_at_end = rndn(2);
            c.xoff = rndn(4) * xs + (rndn(8) == 0 ? shift(1, xs) : 0);
            /* packed float4 kernels do not support y == x (no API path asks for it) */
            c.inplace = rndn(8) == 0 && yk != QK_Y_PE2M1 && !p6_y(yk);
            c.yoff = shift(rndn(4), c.inplace ? xs : ys);   /* in place: y holds x first */
            c.sat = (int)(k & 1);
            c.u32 = (int)((k >> 1) & 1);
            run_quant(tname, fn, ref, &c);
            k++;
        }
    }
    /* large runs: all blk modes, every type; then one entry over a run whose last chunk
     * starts well before the streamed part ends (mt % QD_U of 31) */
    static const size_t big[] = {4099, 65537, 65567};
    for (size_t bi = 0; bi < 3; bi++) {
        for (size_t b = 0; b < N_BLK; b++) {
            if ((quick && b % 3) || (bi == 2 && b)) continue;
            qcase c;
            memset(&c, 0, sizeof c);
            c.xk = xk; c.qk = qk; c.yk = yk; c.n = big[bi];
            c.blk = b == 0 ? big[bi] : blk_modes[b];
            c.ty = types[k % nt];
            c.phase = (unsigned)(k % per);
            c.zp_null = k % 5 == 0;
            c.scale_kind = (int)(k % 3);
            c.x_at_end = (int)(k & 1);
            c.y_at_end = (int)((k >> 1) & 1);
            c.xoff = (size_t)(k % 4) * xs;
            c.yoff = shift((size_t)(k % 3), ys);
            c.sat = (int)((k >> 2) & 1);
            c.u32 = (int)((k >> 3) & 1);
            run_quant(tname, fn, ref, &c);
            k++;
        }
    }
    /* blocks longer than a stretch of the driver's chunks, some not dividing them, so that
     * chunks start inside an entry; half of them in place */
    static const size_t big_blk[] = {300, 700, 1500};
    for (size_t b = 0; b < sizeof big_blk / sizeof big_blk[0]; b++) {
        qcase c;
        memset(&c, 0, sizeof c);
        c.xk = xk; c.qk = qk; c.yk = yk; c.n = 4099 + (size_t)rndn(2000);
        c.blk = big_blk[b];
        c.ty = types[k % nt];
        c.phase = (unsigned)(k % per);
        c.zp_null = k % 5 == 0;
        c.scale_kind = (int)(k % 3);
        c.inplace = (k & 1) && yk != QK_Y_PE2M1 && !p6_y(yk);
        c.yoff = shift((size_t)(k % 3), c.inplace ? xs : ys);
        c.sat = (int)((k >> 2) & 1);
        run_quant(tname, fn, ref, &c);
        k++;
    }
    /* runs of real layouts: every form of kernels.h, random tensors and runs */
    for (int r = 0, R = quick ? 120 : 360; r < R + 2 * N_LONG_LAY; r++, k++) {   /* a third
                                                                              from short_lay */
        qcase c;
        memset(&c, 0, sizeof c);
        c.xk = xk; c.qk = qk; c.yk = yk;
        if (!gen_layout(&c.blk, &c.pos, &c.row, &c.erow, &c.kdim, &c.n, LAY_MAXN(r, R),
                        LAY_PICK(r, R)))
            continue;
        c.ty = types[k % nt];
        c.phase = (unsigned)((c.pos + k) % per);
        c.zp_null = k % 5 == 0;
        c.scale_kind = (int)(k % 3);
        c.x_at_end = (int)(k & 1);
        c.y_at_end = (int)((k >> 1) & 1);
        c.xoff = (size_t)(k % 4) * xs;
        c.yoff = shift((size_t)(k % 3), ys);
        c.sat = (int)((k >> 2) & 1);
        c.u32 = (int)((k >> 3) & 1);
        run_quant(tname, fn, ref, &c);
    }
}

/* ---------- dequantize ---------- */
typedef struct dcase {
    int dk, ok;
    size_t n, blk;
    unsigned bits;
    int is_signed;
    unsigned phase;
    int zp_null;
    int x_at_end, y_at_end;
    size_t xoff, yoff;
    int inplace;   /* y == x: 16-bit input to 16-bit output only */
    size_t pos, row, erow, kdim;   /* the run's layout (kernels.h); zero: a plain run */
} dcase;

static float gen_dscale(void)
{
    switch (rndn(16)) {
    case 0: return 0.0f;
    case 1: return -0.0f;
    case 2: return NAN;
    case 3: return rndn(2) ? INFINITY : -INFINITY;
    case 4: return bits_f(1u + rndn(0x7fffff));                       /* denormal */
    case 5: return ldexpf(1.0f + rnd_unit(), (int)rnd_range(-30, -14)); /* f16 subnormal products */
    case 6: return ldexpf(1.0f + rnd_unit(), (int)rnd_range(0, 14));   /* f16 overflow */
    case 7: return 3.4e38f;
    case 8: case 9:   /* few mantissa bits: products land on f16 / bf16 ties */
        return ldexpf((float)rnd_range(1, 8191), (int)rnd_range(-16, -4)) * (rndn(2) ? 1 : -1);
    case 10: return bits_f(rnd32());
    default: return ldexpf(1.0f + rnd_unit(), (int)rnd_range(-10, 4)) * (rndn(4) ? 1 : -1);
    }
}

static void run_dequant(const char *tname, qk_dequant_fn fn, qk_dequant_fn ref, const dcase *c)
{
    size_t n = c->n, entries, used;
    CASE_ENTRIES(c, n, used, entries);
    float *scale = arena_place(&asc, entries * sizeof(float), 1, 0);
    int32_t *zp = arena_place(&azp, entries * sizeof(int32_t), 1, 0);
    unsigned cb = c->dk == QK_D_B8 ? c->bits : c->dk == QK_D_B16 ? 16 : c->dk == QK_D_P2 ? 2
                : c->dk == QK_D_P4 || c->dk == QK_D_PE2M1 ? 4 : 8;   /* float kinds: any byte */
    /* int32 / uint32: int64 zero points (the int32 ones unused) */
    int b32 = c->dk == QK_D_B32;
    int64_t *zp64 = b32 ? arena_place(&asc64, entries * sizeof(int64_t), 1, 0) : NULL;
    int64_t min64 = c->is_signed ? INT32_MIN : 0;
    int64_t max64 = c->is_signed ? INT32_MAX : (int64_t)UINT32_MAX;
    if (b32) cb = 8;
    int32_t cmin = c->is_signed ? -(1 << (cb - 1)) : 0;
    int32_t cmax = c->is_signed ? (1 << (cb - 1)) - 1 : (int32_t)((1u << cb) - 1);
    for (size_t e = used; e < entries; e++) {   /* the padding: zero */
        scale[e] = 0.0f;
        zp[e] = 0;
        if (zp64) zp64[e] = 0;
    }
    for (size_t e = 0; e < used; e++) {
        scale[e] = gen_dscale();
        switch (rndn(5)) {
        case 0: zp[e] = cmin; break;
        case 1: zp[e] = cmax; break;
        case 2: zp[e] = 0; break;
        default: zp[e] = (int32_t)rnd_range(cmin, cmax);
        }
        if (b32) {
            switch (rndn(5)) {
            case 0: zp64[e] = min64; break;
            case 1: zp64[e] = max64; break;
            case 2: zp64[e] = 0; break;
            default: zp64[e] = min64 + (int64_t)(rnd64() % (uint64_t)(max64 - min64 + 1));
            }
        }
    }
    size_t xb = b32 ? 4 * n : c->dk == QK_D_B16 || c->dk == QK_D_F16 || c->dk == QK_D_BF16 ? 2 * n
              : c->dk == QK_D_P4 || c->dk == QK_D_PE2M1 ? (c->phase + n + 1) / 2
              : c->dk == QK_D_P2 ? (c->phase + n + 3) / 4
              : p6_d(c->dk) ? p6_bytes(c->phase, n) : n;
    unsigned char *x = c->x_at_end ? arena_place(&ax, xb, 1, 0)
                                   : arena_place(&ax, xb + c->xoff, 0, c->xoff);
    for (size_t i = 0; i < xb; i++) x[i] = (unsigned char)rnd32();   /* high bits included */
    for (size_t i = 0; b32 && i < n; i++) {   /* also codes near the zero point and the ends */
        static const uint32_t sp[] = {0u, 1u, 0x7fffffffu, 0x80000000u, 0xffffffffu,
                                      0x01000001u, 0xfeffffffu};
        int64_t z = c->zp_null ? 0 : zp64[CASE_ENTRY(c, i)];
        uint32_t v;
        switch (rndn(4)) {
        case 0: v = (uint32_t)(z + rnd_range(-100000, 100000)); break;
        case 1: v = sp[rndn(7)]; break;
        default: continue;
        }
        memcpy(x + 4 * i, &v, 4);
    }

    size_t os = c->ok == QK_O_F32 ? 4 : c->ok == QK_O_E8M0 ? 1 : 2, yb = n * os;
    const size_t G = 16;
    size_t gafter = c->y_at_end ? 0 : G, total = G + yb + gafter;
    unsigned char *r1 = arena_place(&ay1, total + c->yoff, c->y_at_end, c->yoff);
    unsigned char *r2 = arena_place(&ay2, total + c->yoff, c->y_at_end, c->yoff);
    for (size_t i = 0; i < total; i++) r1[i] = (unsigned char)rnd32();
    if (c->inplace) memcpy(r1 + G, x, xb);   /* same size: 16-bit codes to 16-bit floats */
    memcpy(r2, r1, total);

    qk_dparams p;
    memset(&p, 0, sizeof p);
    p.scale = scale;
    p.zp = c->zp_null || b32 ? NULL : zp;
    p.zp64 = c->zp_null ? NULL : zp64;
    if (c->dk >= QK_D_E2M3 || c->dk == QK_D_F16 || c->dk == QK_D_BF16) {
        /* float6 and Quark float16 / bfloat16: zero points subtracted in float */
        static const float z6[] = {0.0f, -0.0f, 0.5f, -1.5f, 7.5f, -28.0f, 0.0625f,
                                   65504.0f, -3.0e38f, 1.0e-7f};
        unsigned nz = c->dk >= QK_D_E2M3 ? 7 : 10;
        float *zpf = arena_place(&asc64, entries * sizeof(float), 1, 0);
        for (size_t e = 0; e < entries; e++) zpf[e] = z6[rndn(nz)];
        p.zp = NULL;
        p.zpf = c->zp_null ? NULL : zpf;
    }
    p.blk = c->blk;
    p.pos = c->pos; p.row = c->row; p.erow = c->erow; p.kdim = c->kdim;
    p.bits = c->bits;
    p.is_signed = c->is_signed;
    p.phase = c->phase;
    p.stream = n > 4096 && rndn(2);
    if (c->inplace) {
        ref(r1 + G, r1 + G, n, &p);
        fn(r2 + G, r2 + G, n, &p);
    } else {
        ref(x, r1 + G, n, &p);
        fn(x, r2 + G, n, &p);
    }
    n_cases++;
    for (size_t i = 0; i < total; i++) {
        if (r1[i] != r2[i]) {
            char what[64];
            snprintf(what, sizeof what, "dequant %s->%s%s", dk_name[c->dk], ok_name[c->ok],
                     c->inplace ? " in place" : "");
            report(tname, what,
                   "n=%zu blk=%zu bits=%u signed=%d zp=%s phase=%u byte %zd: scalar %02x simd "
                   "%02x (element ~%zu)",
                   n, c->blk, cb, c->is_signed, c->zp_null ? "none" : "set", c->phase,
                   (ptrdiff_t)i - (ptrdiff_t)G, r1[i], r2[i], i >= G ? (i - G) / os : 0);
            break;
        }
    }
}

static void sweep_dequant(const char *tname, const qk_table *t, int dk, int ok)
{
    qk_dequant_fn fn = t->dequant[dk][ok], ref = qk_scalar_table.dequant[dk][ok];
    unsigned per = dk == QK_D_P4 || dk == QK_D_PE2M1 ? 2 : dk == QK_D_P2 || p6_d(dk) ? 4 : 1;
    static const unsigned b8bits[] = {8, 4, 2};
    size_t xs = dk == QK_D_B32 ? 4 : dk == QK_D_B16 || dk == QK_D_F16 || dk == QK_D_BF16 ? 2 : 1;
    size_t os = ok == QK_O_F32 ? 4 : ok == QK_O_E8M0 ? 1 : 2;
    size_t maxn = quick ? 100 : 300;
    long k = 0;
    for (size_t n = 0; n <= maxn; n++) {
        for (size_t b = 0; b < N_BLK; b++) {
            if (blk_modes[b] >= n && b > 0) continue;
            dcase c;
            memset(&c, 0, sizeof c);
            c.dk = dk; c.ok = ok; c.n = n;
            c.blk = b == 0 ? (k % 3 == 0 ? n : n + 1 + (size_t)rndn(1000)) : blk_modes[b];
            c.bits = dk == QK_D_B8 ? b8bits[k % 3] : 8;
            c.is_signed = (int)((k / 3) & 1);
            c.phase = (unsigned)(k / 6 % per);
            c.zp_null = rndn(4) == 0;
            c.x_at_end = rndn(2);
            c.y_at_end = rndn(2);
            c.xoff = shift(rndn(4), xs);
            c.yoff = shift(rndn(4), os);
            c.inplace = dk == QK_D_B16 && ok != QK_O_F32 && rndn(4) == 0;
            run_dequant(tname, fn, ref, &c);
            k++;
        }
    }
    /* the last two: one entry, y past a cache line, 3 and 31 elements over whole chunks */
    static const size_t big[] = {4099, 65537, 4099, 4127};
    for (size_t bi = 0; bi < 4; bi++) {
        for (size_t b = 0; b < N_BLK; b++) {
            if (quick && b % 3) continue;
            if (bi >= 2 && b) continue;
            dcase c;
            memset(&c, 0, sizeof c);
            c.dk = dk; c.ok = ok; c.n = big[bi];
            c.blk = b == 0 ? big[bi] : blk_modes[b];
            c.bits = dk == QK_D_B8 ? b8bits[k % 3] : 8;
            c.is_signed = (int)((k / 3) & 1);
            c.phase = (unsigned)(k % per);
            c.zp_null = k % 5 == 0;
            c.x_at_end = (int)(k & 1);
            c.y_at_end = (int)((k >> 1) & 1);
            c.xoff = shift((size_t)(k % 4), xs);
            c.yoff = shift((size_t)(k % 3), os);
            if (bi >= 2) {   /* y whole elements past a cache line: the aligning head */
                c.y_at_end = 0;
                for (size_t e = 0; e < 64 / os; e += 3) {
                    c.yoff = e * os;
                    run_dequant(tname, fn, ref, &c);
                }
            }
            run_dequant(tname, fn, ref, &c);
            k++;
        }
    }
    for (int r = 0, R = quick ? 120 : 360; r < R + 2 * N_LONG_LAY; r++, k++) {   /* real
                                                                    layouts, as for quantize */
        dcase c;
        memset(&c, 0, sizeof c);
        c.dk = dk; c.ok = ok;
        if (!gen_layout(&c.blk, &c.pos, &c.row, &c.erow, &c.kdim, &c.n, LAY_MAXN(r, R),
                        LAY_PICK(r, R)))
            continue;
        c.bits = dk == QK_D_B8 ? b8bits[k % 3] : 8;
        c.is_signed = (int)((k / 3) & 1);
        c.phase = (unsigned)((c.pos + k) % per);
        c.zp_null = k % 5 == 0;
        c.x_at_end = (int)(k & 1);
        c.y_at_end = (int)((k >> 1) & 1);
        c.xoff = shift((size_t)(k % 4), xs);
        c.yoff = shift((size_t)(k % 3), os);
        if (r >= R) {   /* long rows: float32 results from several offsets in a cache line */
            c.y_at_end = 0;
            c.yoff = (size_t)(r - R) * 20;
        }
        run_dequant(tname, fn, ref, &c);
    }
}

/* ---------- exhaustive sweeps of the half-precision paths ---------- */
/* Every float16 / bfloat16 input through the rows that read them (one scale per call, a few
 * scales and zero points, the reciprocals as the operator layer passes them), and float32 ->
 * float16 / bfloat16 rounding of dequantized values at every rounding boundary of the two
 * types: code 1, zero point 0 and one scale per element make y = round(scale). */
static void sweep_halves(const char *tname, const qk_table *t)
{
    static const float scales[] = {1.0f, 0.5f, 0.25f, 3.0f, 0.1f, 1e-3f, 7.5f, 1.0f / 3.0f,
                                   0x1p-24f, 65504.0f, 1e30f, 1e-30f};
    static const qtype u8 = {0, 255, 0xff}, i16 = {-32768, 32767, 0xff};
    uint16_t *x = arena_place(&ax, 65536 * 2, 1, 0);
    unsigned char *ya = ay1.base, *yb = ay2.base;
    for (uint32_t i = 0; i < 65536; i++) x[i] = (uint16_t)i;
    for (int xk = QK_X_F16; xk <= QK_X_BF16; xk++)
        for (int qk = QK_Q_F32; qk <= QK_Q_BF16; qk++)
            for (int yk = QK_Y_B8; yk <= QK_Y_B16; yk++) {
                qk_quant_fn fn = t->quant[xk][qk][yk];
                const qtype *ty = yk == QK_Y_B8 ? &u8 : &i16;
                for (size_t si = 0; fn && si < sizeof scales / sizeof scales[0]; si++)
                    for (int zi = 0; zi < 3; zi++) {
                        int32_t z = zi == 0 ? ty->qmin : zi == 1 ? ty->qmax
                                  : (ty->qmin + ty->qmax) / 2 + 1;
                        float s = scales[si], r;
                        if (qk == QK_Q_F16) s = qk_round_f16(s);
                        if (qk == QK_Q_BF16) s = qk_round_bf16(s);
                        r = qk_recip(s);
                        qk_qparams p;
                        memset(&p, 0, sizeof p);
                        p.scale = &s;
                        p.rscale = r != 0.0f ? &r : NULL;
                        p.zp = &z;
                        p.blk = 65536;
                        p.qmin = ty->qmin;
                        p.qmax = ty->qmax;
                        p.mask = ty->mask;
                        qk_scalar_table.quant[xk][qk][yk](x, ya, 65536, &p);
                        fn(x, yb, 65536, &p);
                        n_cases++;
                        if (memcmp(ya, yb, 65536 * (yk == QK_Y_B16 ? 2u : 1u)))
                            report(tname, "every half input", "%s/%s/%s scale %a zp %d",
                                   xk_name[xk], qk_name[qk], yk_name[yk], (double)s, z);
                    }
            }
    /* the float32 patterns around each rounding boundary (halfway points, one below, one
     * above) of every float16 / bfloat16 value, NaN payloads included, one sign at a time */
    static const int32_t d16[] = {0, 1, -1, 0xfff, 0x1000, 0x1001, -0x1000, -0x1001};
    static const int32_t d8[] = {0x7fff, 0x8000, 0x8001, -0x8000, -0x7fff};
    uint32_t *pat = arena_place(&asc, 0x8000 * 13 * 4, 1, 0);
    unsigned char *ones = arena_place(&ax, 4096, 1, 0);
    memset(ones, 1, 4096);
    for (uint32_t sign = 0; sign < 2; sign++) {
        size_t n = 0;
        for (uint32_t h = 0; h < 0x8000u; h++) {
            uint32_t f = qk_f32_bits(qk_f16_to_f32((uint16_t)h)) | sign << 31;
            uint32_t g = h << 16 | sign << 31;
            for (int k = 0; k < 8; k++) pat[n++] = f + (uint32_t)d16[k];
            for (int k = 0; k < 5; k++) pat[n++] = g + (uint32_t)d8[k];
        }
        for (int ok = QK_O_F16; ok <= QK_O_BF16; ok++) {
            qk_dequant_fn fn = t->dequant[QK_D_B8][ok];
            for (size_t a = 0; fn && a < n; a += 4096) {
                size_t m = n - a < 4096 ? n - a : 4096;
                qk_dparams p;
                memset(&p, 0, sizeof p);
                p.scale = (const float *)(const void *)(pat + a);
                p.blk = 1;
                p.bits = 8;
                qk_scalar_table.dequant[QK_D_B8][ok](ones, ya, m, &p);
                fn(ones, yb, m, &p);
                n_cases++;
                if (memcmp(ya, yb, 2 * m))
                    report(tname, "f32 rounding", "to %s, patterns %zu..%zu", ok_name[ok], a,
                           a + m);
            }
        }
    }
}

/* ---------- min / max ---------- */
static float minmax_value(int pattern)
{
    switch (pattern) {
    case 0: return special_float();
    case 1: return rndn(2) ? 0.0f : -0.0f;                   /* zeros of both signs */
    case 2: return rndn(3) ? (rndn(2) ? 0.0f : -0.0f) : NAN;
    case 3: return rndn(2) ? NAN : (rnd_unit() + 0.5f);      /* positives and NaN */
    case 4: return NAN;
    case 5: return rndn(2) ? INFINITY : -INFINITY;
    default: return (rnd_unit() - 0.5f) * 100.0f;
    }
}

static void sweep_minmax(const char *tname, const qk_table *t)
{
    size_t maxn = quick ? 150 : 400;
    for (int rep = 0; rep < 2; rep++) {
        for (size_t n = 0; n <= maxn + 5000 * (size_t)rep; n += rep ? 997 : 1) {
            for (int pat = 0; pat < 8; pat++) {
                float *x = arena_place(&ax, n * sizeof(float), (int)(n & 1), 0);
                for (size_t i = 0; i < n; i++) x[i] = minmax_value(pat == 7 ? (int)rndn(7) : pat);
                if (n && pat == 6 && rndn(2)) {   /* a zero minimum / maximum somewhere late */
                    for (size_t i = 0; i < n; i++) x[i] = fabsf(x[i]) + 1.0f;
                    x[n - 1 - rndn((uint32_t)n)] = -0.0f;
                    x[n - 1 - rndn((uint32_t)n)] = 0.0f;
                }
                float a1, b1, a2, b2;
                qk_scalar_table.minmax_f32(x, n, &a1, &b1);
                t->minmax_f32(x, n, &a2, &b2);
                n_cases++;
                if (qk_f32_bits(a1) != qk_f32_bits(a2) || qk_f32_bits(b1) != qk_f32_bits(b2))
                    report(tname, "minmax", "n=%zu pattern=%d: scalar (%a, %a) simd (%a, %a)",
                           n, pat, a1, b1, a2, b2);
            }
        }
    }
}

/* Column ranges: rows of columns with NaN, zeros of both signs, equal values; every strip
 * width and tail, one row and many, against the scalar table's. */
static void sweep_minmax_cols(const char *tname, const qk_table *t)
{
    size_t maxm = quick ? 70 : 140;
    for (size_t m = 1; m <= maxm; m += 1 + (m > 40) * 3) {
        for (size_t rows = 1; rows <= 40; rows += rows < 4 ? 1 : 9) {
            size_t stride = m + rndn(5);
            float *x = arena_place(&ax, ((rows - 1) * stride + m) * sizeof(float), (int)(m & 1), 0);
            float lo1[160], hi1[160], lo2[160], hi2[160];
            for (size_t i = 0; i < (rows - 1) * stride + m; i++)
                x[i] = minmax_value((int)rndn(8));
            qk_scalar_table.minmax_cols(x, rows, stride, m, lo1, hi1);
            t->minmax_cols(x, rows, stride, m, lo2, hi2);
            n_cases++;
            for (size_t i = 0; i < m; i++)
                if (qk_f32_bits(lo1[i]) != qk_f32_bits(lo2[i]) ||
                    qk_f32_bits(hi1[i]) != qk_f32_bits(hi2[i])) {
                    report(tname, "minmax_cols", "m=%zu rows=%zu column %zu: scalar (%a, %a) "
                           "simd (%a, %a)", m, rows, i, lo1[i], hi1[i], lo2[i], hi2[i]);
                    break;
                }
        }
    }
}

/* Group ranges: groups of every length around the vector widths, NaN, infinities, both
 * zeros (a zero result may take either sign: compared by value there), against the scalar
 * table's. */
static int same_range(float a, float b)
{
    return qk_f32_bits(a) == qk_f32_bits(b) || (a == 0.0f && b == 0.0f);
}

static void sweep_minmax_groups(const char *tname, const qk_table *t)
{
    size_t maxb = quick ? 70 : 140;
    for (size_t b = 1; b <= maxb; b += 1 + (b > 40) * 3) {
        for (int pat = 0; pat < 8; pat++) {
            size_t g = 1 + rndn(9);
            float *x = arena_place(&ax, g * b * sizeof(float), (int)(b & 1), 0);
            float lo1[10], hi1[10], lo2[10], hi2[10];
            for (size_t i = 0; i < g * b; i++) x[i] = minmax_value(pat == 7 ? (int)rndn(7) : pat);
            qk_scalar_table.minmax_groups(x, g, b, lo1, hi1);
            t->minmax_groups(x, g, b, lo2, hi2);
            n_cases++;
            for (size_t k = 0; k < g; k++)
                if (!same_range(lo1[k], lo2[k]) || !same_range(hi1[k], hi2[k])) {
                    report(tname, "minmax_groups", "b=%zu g=%zu pattern=%d group %zu: scalar "
                           "(%a, %a) simd (%a, %a)", b, g, pat, k, lo1[k], hi1[k], lo2[k],
                           hi2[k]);
                    break;
                }
        }
    }
}

/* ---------- reciprocals of scales ---------- */
static void sweep_recip(const char *tname, const qk_table *t)
{
    size_t maxn = quick ? 100 : 300;
    for (size_t n = 0; n <= maxn; n++) {
        for (int pat = 0; pat < 4; pat++) {
            float *s = arena_place(&ax, n * sizeof(float), (int)(n & 3), 0);
            float *r1 = malloc((n + 1) * sizeof(float)), *r2 = malloc((n + 1) * sizeof(float));
            for (size_t i = 0; i < n; i++)   /* in range; one special in some runs (pat) */
                s[i] = (rnd_unit() + 0.01f) * (pat == 3 && rndn(2) ? -1.0f : 1.0f);
            if (n && pat == 1) s[rndn((uint32_t)n)] = special_float();
            if (n && pat == 2) s[n - 1] = rndn(2) ? 0x1p-84f : 0x1.000002p100f;
            unsigned f1 = qk_scalar_table.recip_f32(s, r1, n);
            unsigned f2 = t->recip_f32(s, r2, n), f3 = t->recip_f32(s, NULL, n);
            n_cases++;
            if (f1 != f2 || f1 != f3)
                report(tname, "recip", "n=%zu pattern=%d: flags scalar %u simd %u / %u", n,
                       pat, f1, f2, f3);
            for (size_t i = 0; i < n; i++)   /* (kernels.h: r[i] unspecified out of range) */
                if (qk_recip(s[i]) != 0.0f && qk_f32_bits(r1[i]) != qk_f32_bits(r2[i])) {
                    report(tname, "recip", "n=%zu s[%zu]=%a: scalar %a simd %a", n, i,
                           s[i], r1[i], r2[i]);
                    break;
                }
            free(r1);
            free(r2);
        }
    }
    /* every significand at one exponent (a reciprocal computed without a division rounds
     * the same at every exponent of the range), both signs; random ones at every exponent
     * and the range's ends */
    enum { NB = 4096 };
    float *s = malloc(NB * sizeof(float)), *r = malloc(NB * sizeof(float));
    size_t bad = 0;
    for (uint32_t m0 = 0; m0 < (1u << 24) + 2 * 184 * NB && !bad; m0 += NB) {
        for (uint32_t k = 0; k < NB; k++) {
            uint32_t m = m0 + k, bits;
            if (m < (1u << 24)) {
                bits = (m >> 1) | 0x3f800000u | (m & 1u) << 31;
            } else {
                uint32_t ex = (m - (1u << 24)) / NB % 184;   /* 2^-83 .. 2^100 */
                bits = (uint32_t)(127 - 83 + ex) << 23 | (rnd32() & 0x807fffffu);
                if (k == 0) bits = (uint32_t)(127 - 83 + ex) << 23 | 0x7fffffu;
            }
            memcpy(&s[k], &bits, 4);
        }
        if (quick && m0 >= (1u << 24)) break;
        t->recip_f32(s, r, NB);
        for (uint32_t k = 0; k < NB; k++)
            if (qk_recip(s[k]) != 0.0f && qk_f32_bits(r[k]) != qk_f32_bits(1.0f / s[k])) {
                report(tname, "recip", "s=%a: 1/s %a simd %a", s[k], 1.0f / s[k], r[k]);
                bad = 1;
                break;
            }
        n_cases++;
    }
    free(s);
    free(r);
}

/* ---------- zero points widened ---------- */
static void sweep_widen(const char *tname, const qk_table *t)
{
    for (size_t n = 0; n <= (quick ? 100u : 300u); n++)
        for (int k = 0; k < 8; k++) {
            int dk = k < 2 || k >= 4 ? QK_D_B8 : QK_D_B16, sgn = k & 1;
            unsigned bits = k < 4 ? (dk == QK_D_B8 ? 8u : 16u) : k < 6 ? 4u : 2u;
            unsigned char *b = arena_place(&ax, 2 * n, (int)(n & 3), 0);
            int32_t *z1 = malloc((n + 1) * sizeof(int32_t)), *z2 = malloc((n + 1) * 4);
            for (size_t i = 0; i < 2 * n; i++) b[i] = (unsigned char)rndn(256);
            qk_scalar_table.widen_zp(b, z1, n, dk, sgn, bits);
            t->widen_zp(b, z2, n, dk, sgn, bits);
            n_cases++;
            for (size_t i = 0; i < n; i++)
                if (z1[i] != z2[i]) {
                    report(tname, "widen", "n=%zu dk=%d sgn=%d bits=%u [%zu]: scalar %d simd %d",
                           n, dk, sgn, bits, i, z1[i], z2[i]);
                    break;
                }
            free(z1);
            free(z2);
        }
}

/* ---------- driver ---------- */
static void test_table(const char *tname, const qk_table *t, int reps)
{
    long c0 = n_cases, f0 = n_fail;
    int entries = 0;
    for (int rep = 0; rep < reps; rep++) {
        for (int xk = 0; xk < QK_NX; xk++)
            for (int qk = 0; qk < QK_NQ; qk++)
                for (int yk = 0; yk < QK_NY; yk++)
                    if (t->quant[xk][qk][yk]) {
                        entries += rep == 0;
                        sweep_quant(tname, t, xk, qk, yk);
                    }
        for (int dk = 0; dk < QK_ND; dk++)
            for (int ok = 0; ok < QK_NO; ok++)
                if (t->dequant[dk][ok]) {
                    entries += rep == 0;
                    sweep_dequant(tname, t, dk, ok);
                }
        if (t->minmax_f32) {
            entries += rep == 0;
            sweep_minmax(tname, t);
        }
        if (t->minmax_cols) {
            entries += rep == 0;
            sweep_minmax_cols(tname, t);
        }
        if (t->minmax_groups) {
            entries += rep == 0;
            sweep_minmax_groups(tname, t);
        }
        if (t->recip_f32) {
            entries += rep == 0;
            sweep_recip(tname, t);
        }
        if (t->widen_zp) {
            entries += rep == 0;
            sweep_widen(tname, t);
        }
        sweep_halves(tname, t);
    }
    printf("%-14s %3d entries  %8ld cases  %ld mismatches\n", tname, entries, n_cases - c0,
           n_fail - f0);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    int reps = 1;
    const char *only = NULL;
    uint64_t seed = 12345;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-q")) quick = 1;
        else if (!strcmp(argv[i], "-s") && i + 1 < argc) seed = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "-r") && i + 1 < argc) reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-t") && i + 1 < argc) only = argv[++i];
        else if (!strcmp(argv[i], "-M")) byte_misalign = 0;
        else {
            fprintf(stderr, "usage: %s [-q] [-M] [-s SEED] [-r REPS] [-t TABLE]\n", argv[0]);
            return 2;
        }
    }
    if (getenv("QSIMD_TEST_QUICK") && getenv("QSIMD_TEST_QUICK")[0] == '1') quick = 1;
    rng_state ^= seed * 0x2545f4914f6cdd1dull;
    size_t big = 65537 * 8 + 4096;
    arena_init(&ax, big * 4);
    arena_init(&ay1, big * 2);
    arena_init(&ay2, big * 2);
    arena_init(&asc, big * 4);
    arena_init(&asc64, big * 8);
    arena_init(&arsc, big * 4);
    arena_init(&azp, big * 4);
    if (sizeof yk_name / sizeof *yk_name != QK_NY || sizeof dk_name / sizeof *dk_name != QK_ND ||
        sizeof ok_name / sizeof *ok_name != QK_NO) {
        fprintf(stderr, "the kind name tables do not match kernels.h\n");
        return 2;
    }

    unsigned f = qsimd_cpu_features();
    const ctest_table *tables = ctest_tables;
    int tested = 0;
    for (int i = 0; tables[i].name; i++) {
        if (only && strcmp(only, tables[i].name)) continue;
        if ((f & tables[i].needs) != tables[i].needs) {
            printf("%-14s skipped: this CPU cannot run it\n", tables[i].name);
            continue;
        }
        test_table(tables[i].name, tables[i].t, reps);
        tested++;
    }
    printf("kernel parity: %d tables, %ld cases, %ld mismatches\n", tested, n_cases, n_fail);
    return n_fail ? 1 : 0;
}
