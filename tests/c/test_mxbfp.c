/* C parity test of the MX / BFP quantize-dequantize kernels (kernels/mxbfp_impl.h): every
 * SIMD build the CPU can run gives the scalar build's bits, over blocks of every exponent
 * range (both sides of the SIMD blocks' fast ranges), exact rounding ties, subnormals, zeros of
 * both signs, NaN / inf and random bit patterns, rows with short last blocks.
 * Also checks the rounding identity the SIMD int8 blocks rely on: for |t| < 2^22,
 * trunc(t + copysign(0.5 - 2^-25, t)) is t rounded half away from zero. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qsimd.h"
#include "kernels/mxbfp.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 11);
}

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

/* element i of pattern `kind`, in a block whose magnitudes sit around 2^base */
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
    default: return ldexpf((float)(r % 4096u), base - 12) * ((r >> 31) ? -1.0f : 1.0f);
    }
}

typedef struct {
    const char *name;
    qk_mxbfp_fn fn;
    unsigned needs;
} mx_impl;

int main(void)
{
    long bad = 0, cases = 0;
    for (uint32_t u = 0; u < 0x4a800000u; u++) {   /* 0 <= t < 2^22, and by symmetry < 0 */
        float t = from_bits(u);
        volatile float s = t + 0.49999997f;
        if (truncf(s) != roundf(t)) {
            if (bad < 5) printf("rounding identity fails at %a\n", (double)t);
            bad++;
        }
    }

    const mx_impl impls[] = {
#if defined(QSIMD_HAVE_X86)
        {"avx2", qk_mxbfp_avx2, QSIMD_CPU_AVX2 | QSIMD_CPU_FMA | QSIMD_CPU_F16C | QSIMD_CPU_OS_AVX},
        {"avx512", qk_mxbfp_avx512,
         QSIMD_CPU_AVX2 | QSIMD_CPU_FMA | QSIMD_CPU_OS_AVX | QSIMD_CPU_AVX512F |
             QSIMD_CPU_AVX512BW | QSIMD_CPU_AVX512DQ | QSIMD_CPU_AVX512VL | QSIMD_CPU_OS_AVX512},
#endif
#if defined(QSIMD_HAVE_NEON)
        {"neon", qk_mxbfp_neon, 0},
#endif
        {NULL, NULL, 0}};
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
        {QK_BFP, 0, 0, 7, 0.0f, 2, 0, 8, 1, 0},
        {QK_BFP_PRIME, 0, 0, 7, 0.0f, 0, 0, 8, 2, 1},
    };
    const size_t n = (size_t)1 << 15;
    float *x = malloc(n * 4), *want = malloc(n * 4), *got = malloc(n * 4);
    if (!x || !want || !got) return 2;
    unsigned f = qsimd_cpu_features();
    for (int k = 0; impls[k].name; k++) {
        if ((f & impls[k].needs) != impls[k].needs) {
            printf("mxbfp %-8s skipped: this CPU cannot run it\n", impls[k].name);
            continue;
        }
        long fails = 0;
        for (int it = 0; it < 160; it++) {
            int kind = it % 8;
            for (size_t i = 0; i < n; i++) {
                /* the block's magnitude: runs of blocks alike (4-block groups take the fast
                 * path together), the whole exponent range across the test */
                uint32_t h = (uint32_t)(i / 32 / (1 + it % 5)) * 2654435761u + (uint32_t)it * 97u;
                int base = (int)(h % 300u) - 150;
                x[i] = sample(kind, base);
            }
            for (size_t c = 0; c < sizeof kinds / sizeof *kinds; c++) {
                size_t len = n - (size_t)(it % 3) * 7, inner = it % 7 == 6 ? 4 : 1;
                len -= len % inner;
                qk_mxbfp_scalar(x, want, len / inner, inner, &kinds[c]);
                impls[k].fn(x, got, len / inner, inner, &kinds[c]);
                cases++;
                for (size_t i = 0; i < len; i++) {
                    if (to_bits(want[i]) == to_bits(got[i])) continue;
                    if (fails < 5)
                        printf("mxbfp %s kind %zu: x[%zu] = %a gives %a, scalar %a\n",
                               impls[k].name, c, i, (double)x[i], (double)got[i],
                               (double)want[i]);
                    fails++;
                }
            }
        }
        printf("mxbfp %-8s %ld mismatches\n", impls[k].name, fails);
        bad += fails;
    }
    printf("mxbfp parity: %ld cases, %ld mismatches\n", cases, bad);
    free(x);
    free(want);
    free(got);
    return bad ? 1 : 0;
}
