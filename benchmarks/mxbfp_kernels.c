/* The MX / BFP kernels alone against memcpy of the same bytes, on the layouts of
 * benchmarks/layouts.py (64-byte aligned buffers, as numpy gives them; the best of `reps`
 * runs each), for timing without Python and for callgrind's instruction counts on AVX2.
 *
 *   F="-std=c99 -O2 -ffp-contract=off -fno-strict-aliasing -DQSIMD_HAVE_X86 \
 *     -Icsrc/include -Icsrc"
 *   fl() { awk -v f="kernels/$1.c" '$2 == f { $1 = $2 = ""; print }' csrc/sources.txt; }
 *   cc $F $(fl mxbfp_avx512) -c csrc/kernels/mxbfp_avx512.c -o /tmp/a512.o
 *   cc $F $(fl mxbfp_avx2) -c csrc/kernels/mxbfp_avx2.c -o /tmp/a2.o
 *   cc $F -c csrc/kernels/mxbfp_scalar.c -o /tmp/sc.o
 *   cc $F benchmarks/mxbfp_kernels.c /tmp/a512.o /tmp/a2.o /tmp/sc.o -lm -o /tmp/mxbfp_kernels
 *   /tmp/mxbfp_kernels [512|2] [layout substring] [kind 0-3, -1 all] [reps]
 *   valgrind --tool=callgrind /tmp/mxbfp_kernels 2 "14 last" 0 2   (then qk_mxbfp_avx2's
 *   inclusive count / (2 reps x elements)) */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/mxbfp.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static float *aligned(size_t n)
{
    char *p = malloc(n * sizeof(float) + 64);
    return p ? (float *)(void *)(p + (64 - (uintptr_t)p % 64)) : NULL;   /* never freed */
}

int main(int argc, char **argv)
{
    static const struct { const char *name; size_t outer, len, inner; } lay[] = {
        {"56 ch", 1, 64, 3136},      {"56 last", 3584, 56, 1},   {"14 ch", 1, 256, 196},
        {"14 last", 3584, 14, 1},    {"7 ch", 8, 512, 49},       {"7 last", 28672, 7, 1},
        {"768 ch", 1, 197, 768},     {"768 last", 197, 768, 1},  {"4096 ch", 1, 16, 4096},
        {"4096 last", 16, 4096, 1}};
    /* method, emax, emin, mbits, max_norm, rounding, to_bfloat, block, sub_block, shift_max */
    static const qk_mxbfp kinds[] = {{QK_MX_INT8, 0, 0, 0, 127.0f, 0, 0, 32, 1, 0},
                                     {QK_MX_FLOAT, 8, -6, 3, 448.0f, 0, 0, 32, 1, 0},
                                     {QK_BFP, 0, 0, 7, 0.0f, 0, 0, 8, 1, 0},
                                     {QK_BFP_PRIME, 0, 0, 4, 0.0f, 0, 0, 8, 2, 1}};
    static const char *kn[] = {"int8", "fp8", "to_bfp16", "prime13"};
    int isa = argc > 1 ? atoi(argv[1]) : 512, only = argc > 3 ? atoi(argv[3]) : -1;
    int reps = argc > 4 ? atoi(argv[4]) : 60;
    const char *pick = argc > 2 ? argv[2] : "";
    qk_mxbfp_fn fn = isa == 512 ? qk_mxbfp_avx512 : qk_mxbfp_avx2;
    size_t n = 200704;
    float *x = aligned(n), *y = aligned(n), *z = aligned(n);
    if (!x || !y || !z) return 2;
    srand(4);
    for (size_t i = 0; i < n; i++) {   /* N(0, 16), Box-Muller */
        double u = (rand() + 1.0) / (RAND_MAX + 2.0), v = rand() / (RAND_MAX + 1.0);
        x[i] = (float)(4.0 * sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v));
    }
    for (size_t l = 0; l < sizeof lay / sizeof *lay; l++) {
        size_t m = lay[l].outer * lay[l].len * lay[l].inner;
        if (*pick && !strstr(lay[l].name, pick)) continue;
        printf("%-10s", lay[l].name);
        for (int k = 0; k < 4; k++) {
            double bc = 1e9, bk = 1e9;
            if (only >= 0 && k != only) continue;
            for (int r = 0; r < reps; r++) {
                double t0 = now();
                memcpy(z, x, m * sizeof(float));
                double t1 = now();
                fn(x, y, lay[l].outer, lay[l].len, lay[l].inner, &kinds[k]);
                double t2 = now();
                bc = t1 - t0 < bc ? t1 - t0 : bc;
                bk = t2 - t1 < bk ? t2 - t1 : bk;
            }
            printf("  %s %.2f (%.1f / %.1f us)", kn[k], bk / bc, bk * 1e6, bc * 1e6);
        }
        printf("\n");
    }
    return 0;
}
