/* C parity test of the MX / BFP kernels (kernels/mxbfp.h): every vector build this CPU can
 * run (AVX2, AVX-512 natively and through SIMDe's emulation, NEON) gives the scalar
 * kernel's bits
 *  - on long random slabs (blocks of every exponent range on both sides of the fast kinds'
 *    ranges, exact rounding ties, subnormals, zeros of both signs, NaN / inf, random bits);
 *  - on every layout kind the vector kernels treat apart: blocks along a middle axis with
 *    rows of 1 .. 70 columns (whole vectors and a last partial one), very long blocks, blocks
 *    along rows (groups of short blocks, rows with one short last block, single long blocks,
 *    short last blocks), several slabs per call; out of place and in place, with x and y
 *    placed against a PROT_NONE page so that a read or write past the end faults, and
 *    canaries before y;
 *  - for every method: MX of every element type and rounding mode, to_bfp of several bit
 *    widths, rounding modes and the bfloat16 conversion, to_bfp_prime with sub-blocks of
 *    1 .. 16 (powers of two and not) and shifts of 0 .. 30 bits;
 *  - and the OCP MX scale codes (qk_mxscales_*).
 * Also checks the rounding identity the vector kernels rely on: for |t| < 2^23,
 * trunc(t + copysign(0.5 - 2^-25, t)) is t rounded half away from zero.
 *   test_mxbfp [-q]   -q: fewer random layouts (emulation) */
#if defined(__unix__) || defined(__APPLE__)
#define _DEFAULT_SOURCE 1   /* MAP_ANONYMOUS under -std=c99 */
#endif
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#include <unistd.h>
#define HAVE_MMAP 1
#endif

#include "qsimd.h"
#include "kernels/mxbfp.h"

#if defined(QSIMD_TEST_HAVE_SIMDE)
void qk_mxbfp_avx512_simde(const float *x, float *y, size_t outer, size_t len, size_t inner,
                           const qk_mxbfp *c);
void qk_mxscales_avx512_simde(const float *x, uint8_t *s, size_t len, size_t inner,
                              size_t block, int shift);
#endif

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 11);
}
static uint32_t rndn(uint32_t n) { return rnd() % n; }

static float from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static uint32_t to_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

/* an element of pattern `kind`, in a block whose magnitudes sit around 2^base */
static float sample(int kind, int base)
{
    uint32_t r = rnd();
    switch (kind) {
    case 0: return ldexpf((float)(r % 2000001u) / 1e6f - 1.0f, base);
    case 1: return from_bits(r);   /* any bits, NaN and inf included */
    case 2: {   /* exact ties of every rounding step, and their neighbours */
        float t = ldexpf((float)((int)(r % 4097u) - 2048) / 16.0f, base);
        uint32_t d = rnd() % 3u;
        return d == 0 ? t : nextafterf(t, d == 1 ? 0.0f : copysignf(INFINITY, t));
    }
    case 3: return ldexpf((r >> 20 & 1u) ? -1.0f : 1.0f, base - (int)(r % 40u));
    case 4:
        if (r % 50u == 0) return from_bits(0x7f800000u | (rnd() & 0x807fffffu));
        return ldexpf((float)(int)(r % 100000u) - 50000.0f, base - 16);
    case 5: return from_bits((r & 0x80ffffffu) | ((rnd() % 12u) << 23));   /* subnormal-ish */
    case 6: return r % 97u == 0 ? -0.0f : ldexpf((float)((int)(r % 256u) - 128) / 64.0f, base);
    case 7: return r % 5u ? 0.0f : ldexpf((float)(r % 7u), base);   /* mostly zero blocks */
    case 9:   /* moderate values (every block in the vector forms' ranges), a rare NaN */
        if (r % 30000u == 0) return from_bits(0x7fc00000u);
        return ldexpf((float)(r % 2000001u) / 1e6f - 1.0f, base % 20);
    default: return ldexpf((float)(r % 4096u), base - 12) * ((r >> 31) ? -1.0f : 1.0f);
    }
}

/* n elements, magnitudes changing every `run` elements */
static void fill(float *x, size_t n, int kind, size_t run)
{
    int base = 0;
    for (size_t i = 0; i < n; i++) {
        if (i % run == 0) base = (int)rndn(300) - 150;
        x[i] = sample(kind, base);
    }
}

typedef struct {
    const char *name;
    qk_mxbfp_fn fn;
    qk_mxscales_fn scales;
    unsigned needs;
    int slow;   /* emulated: fewer cases */
} mx_impl;

/* ---------- guarded buffers: data ending against a PROT_NONE page ---------- */
typedef struct {
    unsigned char *base;
    size_t size;
} arena;

static void arena_init(arena *a, size_t bytes)
{
#if defined(HAVE_MMAP)
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    bytes = (bytes + pg - 1) / pg * pg;
    unsigned char *m = mmap(NULL, bytes + 2 * pg, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED || mprotect(m, pg, PROT_NONE) || mprotect(m + pg + bytes, pg, PROT_NONE)) {
        perror("mmap");
        exit(2);
    }
    a->base = m + pg;
#else
    a->base = malloc(bytes);
    if (!a->base) exit(2);
#endif
    a->size = bytes;
}

/* n floats ending at the guard page */
static float *at_end(arena *a, size_t n)
{
    return (float *)(void *)(a->base + a->size - n * sizeof(float));
}

static long fails, cases;

static void report(const char *impl, const char *what, const qk_mxbfp *c, size_t outer,
                   size_t len, size_t inner, size_t i, float x, float got, float want)
{
    if (fails++ < 12)
        printf("mxbfp %s %s: method %d emax %d mbits %d mode %d bf %d block %zu sub %zu "
               "shift %u, layout %zux%zux%zu, element %zu: x = %a gives %a (%08x), scalar %a "
               "(%08x)\n", impl, what, c->method, c->emax, c->mbits, c->rounding, c->to_bfloat,
               c->block, c->sub_block, (unsigned)c->shift_max, outer, len, inner, i, (double)x,
               (double)got, (unsigned)to_bits(got), (double)want, (unsigned)to_bits(want));
}

/* MX element types: emax, emin, mbits, max_norm */
static const float MX_T[6][4] = {{15, -14, 2, 57344.0f}, {8, -6, 3, 448.0f}, {4, -2, 2, 28.0f},
                                 {2, 0, 3, 7.5f},        {2, 0, 1, 6.0f},    {0, 0, 0, 127.0f}};

/* a random method and its settings, blocks of `block` */
static qk_mxbfp random_kind(size_t block)
{
    qk_mxbfp c;
    memset(&c, 0, sizeof c);
    c.block = block;
    c.sub_block = 1;
    c.rounding = (int)rndn(3);
    switch (rndn(4)) {
    case 0:
    case 1: {
        int t = (int)rndn(6);
        c.method = t == 5 ? QK_MX_INT8 : QK_MX_FLOAT;
        c.emax = (int)MX_T[t][0];
        c.emin = (int)MX_T[t][1];
        c.mbits = (int)MX_T[t][2];
        c.max_norm = MX_T[t][3];
        break;
    }
    case 2: {
        static const int bw[] = {10, 11, 13, 16, 16, 24, 31, 32};
        c.method = QK_BFP;
        c.mbits = bw[rndn(8)] - 9;
        c.to_bfloat = rndn(4) == 0;
        break;
    }
    default: {
        static const int bw[] = {10, 13, 13, 16, 24, 32};
        static const unsigned sh[] = {0, 1, 1, 2, 3, 8, 30};
        c.method = QK_BFP_PRIME;
        c.mbits = bw[rndn(6)] - 9;
        c.to_bfloat = rndn(4) == 0;
        c.shift_max = (1u << sh[rndn(7)]) - 1u;
        /* a divisor of the block: powers of two and others */
        size_t d[16], nd = 0;
        for (size_t k = 1; k <= block && nd < 16; k++)
            if (block % k == 0) d[nd++] = k;
        c.sub_block = d[rndn((uint32_t)nd)];
        break;
    }
    }
    return c;
}

/* One layout and kind on impl: out of place and in place against the scalar kernel; y ends
 * `gap` floats before the guard page (y's offset in a cache line), canaries in between. */
static void one_case(const mx_impl *im, arena *ax, arena *ay, float *want, const qk_mxbfp *c,
                     size_t outer, size_t len, size_t inner, int kind, size_t gap)
{
    size_t n = outer * len * inner;
    float *x = at_end(ax, n), *y = at_end(ay, n + gap);
    float *pre = y - 8;   /* canaries before y */
    fill(x, n, kind, 1 + rndn(40));
    qk_mxbfp_scalar(x, want, outer, len, inner, c);
    for (int in_place = 0; in_place < 2; in_place++) {
        for (int i = 0; i < 8; i++) pre[i] = from_bits(0x7fc0dead);
        for (size_t i = 0; i < gap; i++) y[n + i] = from_bits(0x7fc0dead);
        float *out = y;
        if (in_place) memcpy(y, x, n * sizeof(float));
        im->fn(in_place ? y : x, out, outer, len, inner, c);
        cases++;
        for (size_t i = 0; i < n; i++)
            if (to_bits(out[i]) != to_bits(want[i])) {
                report(im->name, in_place ? "in place" : "layout", c, outer, len, inner, i, x[i],
                       out[i], want[i]);
                break;
            }
        for (int i = 0; i < 8; i++)
            if (to_bits(pre[i]) != 0x7fc0deadu) {
                report(im->name, "wrote before y", c, outer, len, inner, 0, 0, 0, 0);
                break;
            }
        for (size_t i = 0; i < gap; i++)
            if (to_bits(y[n + i]) != 0x7fc0deadu) {
                report(im->name, "wrote after y", c, outer, len, inner, 0, 0, 0, 0);
                break;
            }
    }
}

static void scales_case(const mx_impl *im, arena *ax, arena *ay, size_t len, size_t inner,
                        size_t block)
{
    size_t n = len * inner, nb = (len + block - 1) / block;
    float *x = at_end(ax, n);
    uint8_t *s = (uint8_t *)(void *)(ay->base + ay->size - nb * inner), want[4096];
    int shift = (int)rndn(16);
    if (nb * inner > sizeof want) return;
    fill(x, n, (int)rndn(9), 1 + rndn(20));
    qk_mxscales_scalar(x, want, len, inner, block, shift);
    im->scales(x, s, len, inner, block, shift);
    cases++;
    if (memcmp(s, want, nb * inner) != 0 && fails++ < 12)
        printf("mxscales %s: layout %zux%zu block %zu shift %d differs\n", im->name, len, inner,
               block, shift);
}

int main(int argc, char **argv)
{
    int quick = argc > 1 && strcmp(argv[1], "-q") == 0;
    long bad = 0;
    for (uint32_t u = 0; u < 0x4b000000u; u++) {   /* 0 <= t < 2^23, and by symmetry < 0 */
        float t = from_bits(u);
        volatile float s = t + 0.49999997f;
        if (truncf(s) != roundf(t)) {
            if (bad < 5) printf("rounding identity fails at %a\n", (double)t);
            bad++;
        }
    }

    const mx_impl impls[] = {
#if defined(QSIMD_HAVE_X86)
        {"avx2", qk_mxbfp_avx2, qk_mxscales_avx2,
         QSIMD_CPU_AVX2 | QSIMD_CPU_FMA | QSIMD_CPU_F16C | QSIMD_CPU_OS_AVX, 0},
        {"avx512", qk_mxbfp_avx512, qk_mxscales_avx512,
         QSIMD_CPU_AVX2 | QSIMD_CPU_FMA | QSIMD_CPU_OS_AVX | QSIMD_CPU_AVX512F |
             QSIMD_CPU_AVX512BW | QSIMD_CPU_AVX512DQ | QSIMD_CPU_AVX512VL | QSIMD_CPU_OS_AVX512, 0},
#endif
#if defined(QSIMD_TEST_HAVE_SIMDE)
        {"avx512-simde", qk_mxbfp_avx512_simde, qk_mxscales_avx512_simde,
         QSIMD_CPU_AVX2 | QSIMD_CPU_FMA | QSIMD_CPU_F16C | QSIMD_CPU_OS_AVX, 1},
#endif
#if defined(QSIMD_HAVE_NEON)
        {"neon", qk_mxbfp_neon, qk_mxscales_neon, 0, 0},
#endif
        {NULL, NULL, NULL, 0, 0}};
    /* method, emax, emin, mbits, max_norm, rounding, to_bfloat, block, sub_block, shift_max */
    const qk_mxbfp kinds[] = {
        {QK_MX_FLOAT, 15, -14, 2, 57344.0f, 0, 0, 32, 1, 0},   /* fp8_e5m2 */
        {QK_MX_FLOAT, 8, -6, 3, 448.0f, 0, 0, 32, 1, 0},       /* fp8_e4m3 */
        {QK_MX_FLOAT, 4, -2, 2, 28.0f, 0, 0, 32, 1, 0},        /* fp6_e3m2 */
        {QK_MX_FLOAT, 2, 0, 3, 7.5f, 0, 0, 32, 1, 0},          /* fp6_e2m3 */
        {QK_MX_FLOAT, 2, 0, 1, 6.0f, 0, 0, 32, 1, 0},          /* fp4_e2m1 */
        {QK_MX_INT8, 0, 0, 0, 127.0f, 0, 0, 32, 1, 0},
        {QK_MX_INT8, 0, 0, 0, 127.0f, 1, 0, 32, 1, 0},
        {QK_MX_INT8, 0, 0, 0, 127.0f, 2, 0, 32, 1, 0},
        {QK_MX_FLOAT, 8, -6, 3, 448.0f, 0, 0, 16, 1, 0},       /* another block size */
        {QK_BFP, 0, 0, 7, 0.0f, 0, 0, 8, 1, 0},
        {QK_BFP, 0, 0, 7, 0.0f, 2, 0, 8, 1, 0},
        {QK_BFP, 0, 0, 23, 0.0f, 0, 1, 8, 1, 0},
        {QK_BFP_PRIME, 0, 0, 4, 0.0f, 0, 0, 8, 2, 1},
        {QK_BFP_PRIME, 0, 0, 7, 0.0f, 1, 0, 16, 4, 3},
    };
    const size_t n = (size_t)1 << 15;
    float *x = malloc(n * 4), *want = malloc(n * 4), *got = malloc(n * 4);
    float *big_want = malloc(4 * n * 4);
    arena ax, ay;
    arena_init(&ax, 1 << 20);
    arena_init(&ay, 1 << 20);
    if (!x || !want || !got || !big_want) return 2;
    unsigned f = qsimd_cpu_features();
    for (int k = 0; impls[k].name; k++) {
        const mx_impl *im = &impls[k];
        if ((f & im->needs) != im->needs) {
            printf("mxbfp %-12s skipped: this CPU cannot run it\n", im->name);
            continue;
        }
        long before = fails, c0 = cases;
        int slabs = im->slow || quick ? 24 : 160;
        for (int it = 0; it < slabs; it++) {   /* long slabs */
            int kind = it % 8;
            for (size_t i = 0; i < n; i++) {
                /* runs of blocks alike (groups take the fast kinds together), the whole
                 * exponent range across the test */
                uint32_t h = (uint32_t)(i / 32 / (1 + it % 5)) * 2654435761u + (uint32_t)it * 97u;
                x[i] = sample(kind, (int)(h % 300u) - 150);
            }
            for (size_t c = 0; c < sizeof kinds / sizeof *kinds; c++) {
                size_t len = n - (size_t)(it % 3) * 7, inner = it % 7 == 6 ? 4 : it % 7 == 5 ? 64 : 1;
                len -= len % inner;
                qk_mxbfp_scalar(x, want, 1, len / inner, inner, &kinds[c]);
                im->fn(x, got, 1, len / inner, inner, &kinds[c]);
                cases++;
                for (size_t i = 0; i < len; i++)
                    if (to_bits(want[i]) != to_bits(got[i])) {
                        report(im->name, "slab", &kinds[c], 1, len / inner, inner, i, x[i],
                               got[i], want[i]);
                        break;
                    }
            }
        }
        /* layouts: rows of every width, blocks of every length, several slabs */
        static const size_t inners[] = {1, 1, 1, 2, 3, 5, 7, 8, 9, 12, 15, 16, 17, 24, 31,
                                        32, 33, 40, 48, 49, 70, 1024};
        static const size_t lens[] = {1, 2, 3, 5, 7, 8, 9, 13, 14, 16, 17, 20, 24, 28, 31, 32,
                                      33, 40, 56, 64, 96, 100};
        static const size_t blocks[] = {1, 2, 3, 4, 5, 7, 8, 8, 9, 12, 16, 20, 24, 28, 32, 32, 33, 40, 64};
        static const size_t outers[] = {1, 2, 3, 8, 9, 16, 17, 33};
        int layouts = im->slow || quick ? 1500 : 12000;
        for (int it = 0; it < layouts; it++) {
            size_t inner = inners[rndn(sizeof inners / sizeof *inners)];
            size_t len = lens[rndn(sizeof lens / sizeof *lens)];
            size_t outer = outers[rndn(sizeof outers / sizeof *outers)];
            size_t block = blocks[rndn(sizeof blocks / sizeof *blocks)];
            while (outer * len * inner > n) outer = outer > 1 ? outer / 2 : 1, len = len > 8 ? len / 2 : len;
            if (outer * len * inner > n) continue;
            qk_mxbfp c = random_kind(block);
            one_case(im, &ax, &ay, want, &c, outer, len, inner, (int)rndn(9), 0);
        }
        /* middle-axis strides whose tiles' rows share L1 sets (rows streamed twice), with
         * more columns than one stream takes (3072), and blocks of one row after them */
        static const size_t streams[][4] = {{1, 40, 768, 32}, {3, 33, 256, 32}, {1, 16, 3072, 32},
                                            {2, 20, 1024, 16}, {1, 24, 2048, 24}};
        for (int it = 0; it < (im->slow || quick ? 20 : 60); it++) {
            const size_t *l = streams[it % 5];
            qk_mxbfp c = random_kind(l[3]);
            one_case(im, &ax, &ay, big_want, &c, l[0], l[1], l[2], it % 3 ? 9 : (int)rndn(9), 0);
        }
        /* blocks along a middle axis of more rows than the vector kernels tile */
        for (int it = 0; it < 6; it++) {
            qk_mxbfp c = random_kind(it < 3 ? 5000 : 4097);
            one_case(im, &ax, &ay, want, &c, 1, 5000, it % 2 ? 3 : 6, it % 9, 0);
        }
        /* rows of whole cache lines with y at every offset in a line: the vertical form's
         * first columns apart, so that its tiles store whole lines */
        static const size_t wide[] = {64, 128, 144, 256, 768, 1024};
        for (int it = 0; it < (im->slow || quick ? 60 : 400); it++) {
            size_t inner = wide[rndn(sizeof wide / sizeof *wide)], len = 1 + rndn(40);
            size_t outer = 1 + rndn(2);
            while (outer * len * inner > n) len /= 2;
            qk_mxbfp c = random_kind(blocks[rndn(sizeof blocks / sizeof *blocks)]);
            one_case(im, &ax, &ay, want, &c, outer, len, inner, (int)rndn(9), rndn(16));
        }
        for (int it = 0; it < (im->slow ? 200 : 2000); it++) {
            size_t inner = inners[rndn(sizeof inners / sizeof *inners)];
            size_t len = lens[rndn(sizeof lens / sizeof *lens)];
            scales_case(im, &ax, &ay, len, inner, blocks[rndn(sizeof blocks / sizeof *blocks)]);
        }
        printf("mxbfp %-12s %ld cases, %ld mismatches\n", im->name, cases - c0, fails - before);
    }
    printf("mxbfp parity: %ld cases, %ld mismatches\n", cases, fails + bad);
    free(x);
    free(want);
    free(got);
    free(big_want);
    return fails + bad ? 1 : 0;
}
