/* Exhaustive check of the exact reciprocal form (docs/EXACT-DIVISION.md).
 *
 * For every float32 bit pattern x (or every STRIDE-th one, spread over all exponents) and a
 * list of scales, quantizes x to uint8 (zero point 128) and int8 (zero point 0) with every
 * SIMD kernel table this CPU runs, and compares the bytes with a reference written here:
 * IEEE float32 division, the clamp, round half to even, the zero point (CONTRACT.md rules
 * 1-3). The scales include every kind the argument has to cover: ties (powers of two), 1/3,
 * 0.1, all-ones significands, the edges of the range where kernels use the reciprocal form
 * (QK_RECIP_MIN, QK_RECIP_MAX) and of the range the argument holds in (2^-100, 2^126), and
 * outside them (denormal, 2^119, FLT_MAX, 1e30, 1e-30: the kernels must divide there),
 * negative scales and random ones. Each scale is checked on two paths of the kernels: one
 * scale for the whole run, and one entry per element (per-axis / blocked layouts).
 *
 *   sweep_division                      all 2^32 patterns, all scales (slow: run by hand)
 *   sweep_division --stride 256 --hard  what CI runs (make -C tests/c run)
 *   options: --stride N, --hard (the hard scales only), --only TABLE, --threads N,
 *            --scales recip|divides (only the scales inside / outside the reciprocal range:
 *            runs of the latter go to the scalar kernel from every FMA table, so one table's
 *            full sweep covers them)
 * Prints per table and scale the patterns checked and the mismatches; exits 1 on any.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "qsimd.h"
#include "kernels/kernels.h"
#include "tables.h"
#if defined(__SSE2__)
#include <emmintrin.h>
#endif


static float bits_f(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

typedef struct scale_case {
    float s;
    const char *why;
    int hard;   /* in the strided CI subset */
} scale_case;

#define MAXS 80
static scale_case scales[MAXS];
static int nscales;

static void add(float s, const char *why, int hard)
{
    scales[nscales].s = s;
    scales[nscales].why = why;
    scales[nscales].hard = hard;
    nscales++;
}

static void make_scales(void)
{
    add(1.0f, "1", 1);
    add(0.5f, "0.5", 0);
    add(3.0f, "3", 0);
    add(1.0f / 3.0f, "1/3", 1);
    add(0.1f, "0.1", 1);
    add(ldexpf(1.0f, -7), "2^-7", 0);
    add(2.5e-5f, "2.5e-5", 0);
    add(7.3e3f, "7.3e3", 0);
    add(0.0137f, "0.0137", 0);
    add(1e-30f, "1e-30 (divides)", 1);
    add(1e30f, "1e30 (divides)", 1);
    add(bits_f(0x3FFFFFFFu), "all-ones significand 0x3FFFFFFF", 1);
    add(bits_f(0x3F7FFFFFu), "all-ones significand 0x3F7FFFFF", 1);
    add(bits_f(0x3BFFFFFFu), "all-ones significand 0x3BFFFFFF", 1);
    add(bits_f(0x1FFFFFFFu), "all-ones significand 0x1FFFFFFF", 0);
    add(bits_f(0x5FFFFFFFu), "all-ones significand 0x5FFFFFFF", 0);
    /* the kernels' range [QK_RECIP_MIN, QK_RECIP_MAX] and its neighbours */
    add(QK_RECIP_MIN, "2^-83 (QK_RECIP_MIN)", 1);
    add(nextafterf(QK_RECIP_MIN, 0.0f), "2^-83 - ulp (divides)", 1);
    add(nextafterf(QK_RECIP_MIN, 1.0f), "2^-83 + ulp", 0);
    add(QK_RECIP_MAX, "2^100 (QK_RECIP_MAX)", 1);
    add(nextafterf(QK_RECIP_MAX, 0.0f), "2^100 - ulp", 1);
    add(nextafterf(QK_RECIP_MAX, INFINITY), "2^100 + ulp (divides)", 1);
    /* the edges of the argument's range and FAST-DIVISION.md's probes */
    add(ldexpf(1.0f, -100), "2^-100 (divides)", 1);
    add(nextafterf(ldexpf(1.0f, -100), 0.0f), "2^-100 - ulp (divides)", 0);
    add(nextafterf(ldexpf(1.0f, -100), 1.0f), "2^-100 + ulp (divides)", 0);
    add(ldexpf(1.0f, 119), "2^119 (divides)", 1);
    add(nextafterf(ldexpf(1.0f, 119), 0.0f), "2^119 - ulp (divides)", 0);
    add(nextafterf(ldexpf(1.0f, 119), INFINITY), "2^119 + ulp (divides)", 0);
    add(ldexpf(1.0f, 126), "2^126 (divides)", 1);
    add(nextafterf(ldexpf(1.0f, 126), 0.0f), "2^126 - ulp (divides)", 0);
    add(ldexpf(1.0f, -126), "2^-126 (divides)", 0);
    add(bits_f(0x00000001u), "smallest denormal (divides)", 1);
    add(bits_f(0x00400000u), "denormal 2^-127 (divides)", 0);
    add(bits_f(0x007FFFFFu), "largest denormal (divides)", 1);
    add(3.4028235e38f, "FLT_MAX (divides)", 1);
    /* negative scales: the per-element form even for one scale */
    add(-1.0f, "-1", 1);
    add(-0.1f, "-0.1", 1);
    add(-1.0f / 3.0f, "-1/3", 0);
    add(-QK_RECIP_MIN, "-2^-83", 1);
    add(-QK_RECIP_MAX, "-2^100", 1);
    add(-bits_f(0x3F7FFFFFu), "-0x3F7FFFFF", 0);
    add(-7.3e3f, "-7.3e3", 0);
    /* random significands: realistic exponents, then anywhere in the range */
    uint32_t st = 12345u;
    for (int i = 0; i < 22; i++) {
        st = st * 1664525u + 1013904223u;
        uint32_t sig = st >> 9;
        st = st * 1664525u + 1013904223u;
        int e = i < 14 ? (int)(st >> 27) - 20 : (int)(st % 180u) - 80;   /* 2^-20.. / 2^-80.. */
        float s = ldexpf(bits_f(0x3F800000u | sig), e);
        add(i % 5 == 4 ? -s : s, i < 14 ? "random" : "random, wide", i % 7 == 0);
    }
}

/* the reference: CONTRACT.md rules 1-3, written independently of the kernels */
static uint8_t ref1(float x, float s, int32_t zp, int32_t qmin, int32_t qmax)
{
    float q = x / s;
    float lo = (float)(qmin - zp), hi = (float)(qmax - zp);
    q = q > lo ? q : lo;   /* NaN -> lo */
    q = q < hi ? q : hi;
    return (uint8_t)((int32_t)rintf(q) + zp);
}

/* n references at once: the same operations, four lanes at a time where SSE2 exists
 * (divps is IEEE division; cvtps2dq rounds half to even under the default MXCSR) */
static void ref_n(const float *x, uint8_t *out, size_t n, float s, int32_t zp, int32_t qmin,
                  int32_t qmax)
{
    size_t i = 0;
#if defined(__SSE2__)
    __m128 vs = _mm_set1_ps(s), lo = _mm_set1_ps((float)(qmin - zp));
    __m128 hi = _mm_set1_ps((float)(qmax - zp));
    for (; i + 4 <= n; i += 4) {
        __m128 q = _mm_div_ps(_mm_loadu_ps(x + i), vs);
        q = _mm_min_ps(_mm_max_ps(q, lo), hi);   /* max(NaN, lo) is lo */
        int32_t r[4];
        _mm_storeu_si128((__m128i *)r, _mm_cvtps_epi32(q));
        for (int k = 0; k < 4; k++) out[i + k] = (uint8_t)(r[k] + zp);
    }
#endif
    for (; i < n; i++) out[i] = ref1(x[i], s, zp, qmin, qmax);
}

#define CHUNK 65536
#define MAXT 8

typedef struct job {
    const qk_table *t[MAXT];
    int nt;
    float s;
    uint64_t stride;
    uint32_t first, count;   /* chunk indices */
    uint64_t checked[MAXT], bad[MAXT];
    uint32_t bad_x[MAXT];    /* the first mismatching pattern of each table */
    int32_t bad_zp[MAXT];
    int bad_pe[MAXT];
    uint8_t bad_ref[MAXT], bad_got[MAXT];
} job;

static void *work(void *arg)
{
    job *j = (job *)arg;
    float *x = malloc(CHUNK * sizeof(float)), *sv = malloc(CHUNK * sizeof(float));
    float *rv = malloc(CHUNK * sizeof(float));
    int32_t *zv = malloc(CHUNK * sizeof(int32_t));
    uint8_t *want = malloc(CHUNK), *got = malloc(CHUNK);
    float r = qk_recip(j->s);
    static const int32_t qr[2][3] = {{0, 255, 128}, {-128, 127, 0}};   /* qmin, qmax, zp */
    uint64_t total = ((uint64_t)1 << 32) / j->stride;
    for (size_t i = 0; i < CHUNK; i++) {
        sv[i] = j->s;
        rv[i] = r;
    }
    for (uint32_t c = j->first; c < j->first + j->count; c++) {
        uint64_t k0 = (uint64_t)c * CHUNK;
        size_t n = k0 + CHUNK <= total ? CHUNK : (size_t)(total - k0);
        for (size_t i = 0; i < n; i++) {
            uint64_t k = k0 + i;
            /* every stride-th pattern, its low bits varied so all of them get exercised */
            uint64_t pat = k * j->stride +
                           (j->stride > 1 ? ((k * 2654435761u) >> 7) % j->stride : 0);
            x[i] = bits_f((uint32_t)pat);
        }
        for (int ty = 0; ty < 2; ty++) {
            int32_t qmin = qr[ty][0], qmax = qr[ty][1], zp = qr[ty][2];
            ref_n(x, want, n, j->s, zp, qmin, qmax);
            for (size_t i = 0; i < n; i++) zv[i] = zp;
            for (int ti = 0; ti < j->nt; ti++) {
                for (int pe = 0; pe < 2; pe++) {
                    /* one scale for the run, or one entry per element (per-axis layouts) */
                    qk_qparams p;
                    memset(&p, 0, sizeof p);
                    p.qmin = qmin;
                    p.qmax = qmax;
                    p.mask = 0xffu;
                    p.scale = pe ? sv : &j->s;
                    p.rscale = r == 0.0f ? NULL : pe ? rv : &r;
                    p.zp = pe ? zv : &zp;
                    p.blk = pe ? 1 : n;
                    p.negs = j->s < 0.0f;   /* as params.c sets it */
                    j->t[ti]->quant[QK_X_F32][QK_Q_F32][QK_Y_B8](x, got, n, &p);
                    j->checked[ti] += n;
                    if (!memcmp(got, want, n)) continue;
                    for (size_t i = 0; i < n; i++) {
                        if (got[i] == want[i]) continue;
                        if (!j->bad[ti]) {
                            memcpy(&j->bad_x[ti], &x[i], 4);
                            j->bad_zp[ti] = zp;
                            j->bad_pe[ti] = pe;
                            j->bad_ref[ti] = want[i];
                            j->bad_got[ti] = got[i];
                        }
                        j->bad[ti]++;
                    }
                }
            }
        }
    }
    free(x); free(sv); free(rv); free(zv); free(want); free(got);
    return NULL;
}

int main(int argc, char **argv)
{
    uint64_t stride = 1;
    int hard_only = 0, threads = 2, which = 0;   /* which: 0 all, 1 recip, 2 divides */
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--stride") && i + 1 < argc) stride = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--hard")) hard_only = 1;
        else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--scales") && i + 1 < argc && !strcmp(argv[i + 1], "recip"))
            which = 1, i++;
        else if (!strcmp(argv[i], "--scales") && i + 1 < argc && !strcmp(argv[i + 1], "divides"))
            which = 2, i++;
        else {
            fprintf(stderr, "usage: %s [--stride N] [--hard] [--only TABLE] [--threads N] "
                            "[--scales recip|divides]\n",
                    argv[0]);
            return 2;
        }
    }
    if (stride < 1 || stride > ((uint64_t)1 << 20) || threads < 1 || threads > 64) {
        fprintf(stderr, "stride must be 1..2^20, threads 1..64\n");
        return 2;
    }
    make_scales();
    unsigned f = qsimd_cpu_features();
    /* the SIMD tables, then scalar (checked only when asked for with --only scalar) */
    ctest_table tables[sizeof ctest_tables / sizeof *ctest_tables + 1];
    memcpy(tables, ctest_tables, sizeof ctest_tables);
    tables[sizeof ctest_tables / sizeof *ctest_tables - 1] =
        (ctest_table){"scalar", &qk_scalar_table, 0};
    tables[sizeof ctest_tables / sizeof *ctest_tables] = (ctest_table){NULL, NULL, 0};
    const qk_table *run[MAXT];
    const char *run_name[MAXT];
    int nt = 0;
    for (int ti = 0; tables[ti].name && nt < MAXT; ti++) {
        if (only ? strcmp(only, tables[ti].name) != 0
                 : !strcmp(tables[ti].name, "scalar") ||
                       (!strcmp(tables[ti].name, "avx512-simde") && stride < 64))
            continue;   /* scalar only on request; SIMDe (slow) only strided */
        if ((f & tables[ti].needs) != tables[ti].needs) {
            printf("%-13s skipped: this CPU cannot run it\n", tables[ti].name);
            continue;
        }
        run[nt] = tables[ti].t;
        run_name[nt++] = tables[ti].name;
    }
    uint64_t t_checked[MAXT] = {0}, t_bad[MAXT] = {0}, all_checked = 0, all_bad = 0;
    int nsc = 0;
    time_t t0 = time(NULL);
    for (int si = 0; si < nscales; si++) {
        if (hard_only && !scales[si].hard) continue;
        if (which && (qk_recip(scales[si].s) != 0.0f) != (which == 1)) continue;
        nsc++;
        uint64_t total = ((uint64_t)1 << 32) / stride;
        uint32_t chunks = (uint32_t)((total + CHUNK - 1) / CHUNK);
        job jobs[64];
        pthread_t th[64];
        uint32_t per = (chunks + (uint32_t)threads - 1) / (uint32_t)threads;
        int used = 0;
        for (int k = 0; k < threads && (uint32_t)k * per < chunks; k++) {
            memset(&jobs[k], 0, sizeof jobs[k]);
            memcpy(jobs[k].t, run, sizeof run);
            jobs[k].nt = nt;
            jobs[k].s = scales[si].s;
            jobs[k].stride = stride;
            jobs[k].first = (uint32_t)k * per;
            jobs[k].count = chunks - jobs[k].first < per ? chunks - jobs[k].first : per;
            pthread_create(&th[k], NULL, work, &jobs[k]);
            used++;
        }
        uint64_t bad = 0;
        for (int k = 0; k < used; k++) pthread_join(th[k], NULL);
        for (int ti = 0; ti < nt; ti++) {
            int shown = 0;
            for (int k = 0; k < used; k++) {
                t_checked[ti] += jobs[k].checked[ti];
                if (jobs[k].bad[ti] && !shown++)
                    printf("  MISMATCH %s scale %a (%s) %s: x bits 0x%08x zp %d: reference %u "
                           "kernel %u\n", run_name[ti], (double)scales[si].s, scales[si].why,
                           jobs[k].bad_pe[ti] ? "per element" : "one scale", jobs[k].bad_x[ti],
                           jobs[k].bad_zp[ti], jobs[k].bad_ref[ti], jobs[k].bad_got[ti]);
                t_bad[ti] += jobs[k].bad[ti];
                bad += jobs[k].bad[ti];
            }
        }
        printf("scale %-16a %-34s %s (%lds)\n", (double)scales[si].s, scales[si].why,
               bad ? "MISMATCHES" : "ok", (long)(time(NULL) - t0));
        fflush(stdout);
    }
    for (int ti = 0; ti < nt; ti++) {
        printf("%-13s %2d scales x 2 paths x u8/i8: %llu quantizations, %llu mismatches\n",
               run_name[ti], nsc, (unsigned long long)t_checked[ti],
               (unsigned long long)t_bad[ti]);
        all_checked += t_checked[ti];
        all_bad += t_bad[ti];
    }
    printf("division sweep (stride %llu, %d scales, %lds): %d tables, %llu quantizations, "
           "%llu mismatches\n", (unsigned long long)stride, nsc, (long)(time(NULL) - t0), nt,
           (unsigned long long)all_checked, (unsigned long long)all_bad);
    return all_bad ? 1 : 0;
}
