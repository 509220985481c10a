/* Exhaustive float6 sweep of the SIMD kernel tables against the scalar table (scalar.c, itself
 * checked against ml_dtypes by sweep_float8.py): every float32 bit pattern x (or every
 * --stride-th, which still reaches every exponent when the stride is below 2^23) is quantized
 * to float6e2m3 and float6e3m2, one code per byte and packed (4 codes in 3 bytes), through the
 * float32 kernels with the reciprocal form (the path a call with a float32 scale takes) and
 * with true division, at scales 1 and --scale; then every code of both types is dequantized
 * to float32, float16 and bfloat16, with and without a float6 zero point.
 *
 * Not part of CI: on x86-64 it checks the AVX2 and AVX-512 tables (where the CPU has them),
 * on aarch64 the NEON table, e.g. under qemu:
 *   aarch64-linux-gnu-gcc -std=c99 -O2 -ffp-contract=off -fno-strict-aliasing -DQSIMD_HAVE_NEON \
 *       -Icsrc/kernels tests/sweeps/sweep_float6.c csrc/kernels/neon.c csrc/kernels/scalar.c \
 *       -lm -static -o sweep6 && arm64-run ./sweep6 --stride 1
 *   cc -std=c99 -O2 -ffp-contract=off -fno-strict-aliasing -DQSIMD_HAVE_X86 -Icsrc/kernels \
 *       tests/sweeps/sweep_float6.c csrc/kernels/scalar.c avx2.o avx512.o -lm -o sweep6
 * (avx2.o / avx512.o built with their flags from csrc/sources.txt).
 *   ./sweep6 [--stride S] [--scale F] [--start HEX] [--count N]
 * Prints one line per checked combination and exits 1 on any mismatch. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "convert.h"
#include "sweep_isas.h"

#define CHUNK ((size_t)1 << 20)

static unsigned long long mism[2][2][2][2];   /* [isa][type][packed][rec] */
static unsigned long long checked[2][2][2][2];

static void report(const char *what, uint32_t xbits, unsigned got, unsigned want)
{
    static int shown;
    if (shown++ < 20)
        fprintf(stderr, "MISMATCH %s x=0x%08x got 0x%02x want 0x%02x\n", what, xbits, got, want);
}

int main(int argc, char **argv)
{
    uint64_t stride = 1, start = 0, count = (uint64_t)1 << 32;
    float scale2 = 0.05f;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--stride")) stride = strtoull(argv[i + 1], NULL, 0);
        else if (!strcmp(argv[i], "--scale")) scale2 = strtof(argv[i + 1], NULL);
        else if (!strcmp(argv[i], "--start")) start = strtoull(argv[i + 1], NULL, 16);
        else if (!strcmp(argv[i], "--count")) count = strtoull(argv[i + 1], NULL, 0);
    }
    if (stride == 0) stride = 1;
    isa isas[2];
    int nisa = sweep_isas(isas);
    if (!nisa) {
        fprintf(stderr, "sweep_float6: no SIMD table to check on this CPU\n");
        return 2;
    }
    float *x = malloc(CHUNK * sizeof *x);
    uint8_t *want = malloc(CHUNK), *got = malloc(CHUNK);
    if (!x || !want || !got) return 2;
    static const int yk1[2] = {QK_Y_E2M3, QK_Y_E3M2}, ykp[2] = {QK_Y_PE2M3, QK_Y_PE3M2};
    static const char *tname[2] = {"float6e2m3", "float6e3m2"};
    const float scales[2] = {1.0f, scale2};
    uint64_t total = 0;
    uint64_t end = start + count > ((uint64_t)1 << 32) ? (uint64_t)1 << 32 : start + count;
    for (uint64_t base = start; base < end;) {
        size_t n = 0;
        for (; n < CHUNK && base < end; n++, base += stride) x[n] = qk_bits_f32((uint32_t)base);
        n &= ~(size_t)3;   /* whole packed groups */
        if (n == 0) break;
        total += n;
        for (int si = 0; si < 2; si++) {
            float s = scales[si], r = qk_recip(s);
            for (int rec = 0; rec < 2; rec++) {
                if (rec && r == 0.0f) continue;
                qk_qparams p;
                memset(&p, 0, sizeof p);
                p.scale = &s;
                p.blk = n;
                p.qmin = 0;
                p.qmax = 0;
                p.mask = 0xff;
                p.saturate = 1;
                p.rscale = rec ? &r : NULL;
                for (int ty = 0; ty < 2; ty++) {
                    for (int pk = 0; pk < 2; pk++) {
                        int yk = pk ? ykp[ty] : yk1[ty];
                        size_t nb = pk ? n / 4 * 3 : n;
                        qk_quant_scalar(QK_X_F32, QK_Q_F32, yk, x, want, n, &p);
                        for (int k = 0; k < nisa; k++) {
                            memset(got, 0xa5, nb);
                            isas[k].t->quant[QK_X_F32][QK_Q_F32][yk](x, got, n, &p);
                            checked[k][ty][pk][rec] += n;
                            if (memcmp(got, want, nb)) {
                                for (size_t i = 0; i < nb; i++)
                                    if (got[i] != want[i]) {
                                        mism[k][ty][pk][rec]++;
                                        report(tname[ty], qk_f32_bits(x[pk ? i / 3 * 4 : i]),
                                               got[i], want[i]);
                                    }
                            }
                        }
                    }
                }
            }
        }
    }
    /* dequantize: all 64 codes, 4 times over (the packed layouts see each code in each slot) */
    unsigned long long dbad = 0, dchecked = 0;
    {
        uint8_t codes[256], packed[192];
        for (int i = 0; i < 256; i++) codes[i] = (uint8_t)(i & 63);
        memset(packed, 0, sizeof packed);
        for (unsigned i = 0; i < 256; i++) qk_put6(packed + i / 4 * 3, i % 4, codes[i]);
        static const int dk1[2] = {QK_D_E2M3, QK_D_E3M2}, dkp[2] = {QK_D_PE2M3, QK_D_PE3M2};
        float s = 0.375f, z = -1.5f;
        unsigned char dw[256 * 4], dg[256 * 4];
        for (int ty = 0; ty < 2; ty++)
            for (int pk = 0; pk < 2; pk++)
                for (int ok = QK_O_F32; ok <= QK_O_BF16; ok++)
                    for (int hz = 0; hz < 2; hz++) {
                        qk_dparams d;
                        memset(&d, 0, sizeof d);
                        d.scale = &s;
                        d.blk = 256;
                        d.zpf = hz ? &z : NULL;
                        int dk = pk ? dkp[ty] : dk1[ty];
                        const void *src = pk ? (const void *)packed : (const void *)codes;
                        size_t ob = 256 * (ok == QK_O_F32 ? 4u : 2u);
                        qk_dequant_scalar(dk, ok, src, dw, 256, &d);
                        for (int k = 0; k < nisa; k++) {
                            qk_dequant_fn fn = isas[k].t->dequant[dk][ok];
                            if (!fn) continue;
                            fn(src, dg, 256, &d);
                            dchecked += 256;
                            if (memcmp(dg, dw, ob)) {
                                dbad++;
                                fprintf(stderr, "MISMATCH dequant %s %s packed=%d ok=%d zp=%d\n",
                                        isas[k].name, tname[ty], pk, ok, hz);
                            }
                        }
                    }
    }
    unsigned long long bad = dbad;
    printf("sweep_float6: %llu float32 inputs (start 0x%llx, stride %llu) at scales 1 and %g\n",
           (unsigned long long)total, (unsigned long long)start, (unsigned long long)stride,
           (double)scale2);
    printf("| ISA | type | layout | quotient | inputs checked | mismatches |\n|---|---|---|---|---|---|\n");
    for (int k = 0; k < nisa; k++)
        for (int ty = 0; ty < 2; ty++)
            for (int pk = 0; pk < 2; pk++)
                for (int rec = 1; rec >= 0; rec--) {
                    printf("| %s | %s | %s | %s | %llu | %llu |\n", isas[k].name, tname[ty],
                           pk ? "packed" : "one per byte", rec ? "reciprocal" : "division",
                           checked[k][ty][pk][rec], mism[k][ty][pk][rec]);
                    bad += mism[k][ty][pk][rec];
                }
    printf("dequantize: %llu codes checked, %llu mismatching calls\n", dchecked, dbad);
    printf("sweep_float6: %s\n", bad ? "MISMATCHES" : "all equal");
    return bad ? 1 : 0;
}
