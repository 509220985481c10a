/* Exhaustive float8 sweep of the SIMD kernel tables against the scalar table (scalar.c, itself
 * checked against ml_dtypes by sweep_float8.py at scale 1): every float32 bit pattern x (or
 * every --stride-th) is quantized to float8e4m3fn and float8e5m2, saturating and not, through
 * the float32 kernels (AVX2 / AVX-512, or NEON under qemu) given the reciprocal, as a call with
 * a scale in qk_recip's range is (AVX-512 then takes the exact reciprocal form of
 * docs/EXACT-DIVISION.md), at scale 1, --scale and four fixed scales of other significands and
 * magnitudes. The scalar kernel divides.
 *
 * Not part of CI (a few minutes natively): build like tests/sweeps/sweep_float6.c,
 *   cc -std=c99 -O2 -ffp-contract=off -fno-strict-aliasing -DQSIMD_HAVE_X86 -Icsrc/kernels \
 *       tests/sweeps/sweep_float8.c csrc/kernels/scalar.c avx2.o avx512.o -lm -o sweep8
 *   ./sweep8 [--stride S] [--scale F] [--start HEX] [--count N]
 * Prints one line per checked combination and exits 1 on any mismatch. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "convert.h"
#include "sweep_isas.h"

#define CHUNK ((size_t)1 << 20)
#define NSCALE 6

int main(int argc, char **argv)
{
    uint64_t stride = 1, start = 0, count = (uint64_t)1 << 32;
    float scales[NSCALE] = {1.0f, 0.05f, 1.0f / 3.0f, 3.1e-3f, 7.1e5f, 0x1.7p-80f};
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--stride")) stride = strtoull(argv[i + 1], NULL, 0);
        else if (!strcmp(argv[i], "--scale")) scales[1] = strtof(argv[i + 1], NULL);
        else if (!strcmp(argv[i], "--start")) start = strtoull(argv[i + 1], NULL, 16);
        else if (!strcmp(argv[i], "--count")) count = strtoull(argv[i + 1], NULL, 0);
    }
    if (stride == 0) stride = 1;
    isa isas[2];
    int nisa = sweep_isas(isas);
    if (!nisa) {
        fprintf(stderr, "sweep_float8: no SIMD table to check on this CPU\n");
        return 2;
    }
    float *x = malloc(CHUNK * sizeof *x);
    uint8_t *want = malloc(CHUNK), *got = malloc(CHUNK);
    if (!x || !want || !got) return 2;
    static const int yks[2] = {QK_Y_E4M3FN, QK_Y_E5M2};
    static const char *tname[2] = {"float8e4m3fn", "float8e5m2"};
    unsigned long long checked[2][2][2] = {{{0}}}, bad[2][2][2] = {{{0}}};   /* isa, type, sat */
    int shown = 0;
    uint64_t end = start + count > ((uint64_t)1 << 32) ? (uint64_t)1 << 32 : start + count;
    for (uint64_t base = start; base < end;) {
        size_t n = 0;
        for (; n < CHUNK && base < end; n++, base += stride) x[n] = qk_bits_f32((uint32_t)base);
        for (int si = 0; si < NSCALE; si++) {
            float s = scales[si], r = qk_recip(s);
            if (r == 0.0f) continue;
            qk_qparams p;
            memset(&p, 0, sizeof p);
            p.scale = &s;
            p.rscale = &r;
            p.blk = n;
            p.mask = 0xff;
            for (int ty = 0; ty < 2; ty++)
                for (int sat = 0; sat < 2; sat++) {
                    p.saturate = sat;
                    qk_quant_scalar(QK_X_F32, QK_Q_F32, yks[ty], x, want, n, &p);
                    for (int k = 0; k < nisa; k++) {
                        memset(got, 0xa5, n);
                        isas[k].t->quant[QK_X_F32][QK_Q_F32][yks[ty]](x, got, n, &p);
                        checked[k][ty][sat] += n;
                        if (!memcmp(got, want, n)) continue;
                        for (size_t i = 0; i < n; i++)
                            if (got[i] != want[i]) {
                                bad[k][ty][sat]++;
                                if (shown++ < 20)
                                    fprintf(stderr, "MISMATCH %s %s sat %d s=%a x=0x%08x got "
                                            "0x%02x want 0x%02x\n", isas[k].name, tname[ty], sat,
                                            (double)s, qk_f32_bits(x[i]), got[i], want[i]);
                            }
                    }
                }
        }
    }
    unsigned long long nbad = 0;
    printf("| ISA | type | saturate | quantizations (%d scales) | mismatches |\n|---|---|---|---|---|\n",
           NSCALE);
    for (int k = 0; k < nisa; k++)
        for (int ty = 0; ty < 2; ty++)
            for (int sat = 0; sat < 2; sat++) {
                printf("| %s | %s | %d | %llu | %llu |\n", isas[k].name, tname[ty], sat,
                       checked[k][ty][sat], bad[k][ty][sat]);
                nbad += bad[k][ty][sat];
            }
    printf("sweep_float8: %s\n", nbad ? "MISMATCHES" : "all equal");
    return nbad ? 1 : 0;
}
