/* Quantize a batch of float32 images the way an inference server's input stage would:
 *   1. DynamicQuantizeLinear to uint8 (scale and zero point from the data), dequantize back;
 *   2. symmetric int4, one scale per 32 values along the last axis, packed two per byte
 *      (ONNX raw layout), dequantized straight from the packed bytes.
 * Prints the maximum error against the bound scale/2, and the throughput.
 *
 *   quantize_image [DIR]   with DIR: also writes x.bin, u8.bin, i4.bin, i4_scales.bin and
 *                          params.txt there so a test can check the results independently.
 * Exit status: 0 when every error is within its bound, 1 otherwise, 2 on an API error. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "qsimd.h"

enum { N = 4, C = 3, H = 56, W = 64, BLOCK = 32 };
#define COUNT ((size_t)N * C * H * W)

static int check(int rc, const qsimd_error *err, const char *what)
{
    if (rc != QSIMD_OK) {
        fprintf(stderr, "%s failed (%d): %s\n", what, rc, err->message);
        exit(2);
    }
    return rc;
}

static int dump(const char *dir, const char *name, const void *data, size_t bytes)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, bytes, f) != bytes) {
        fprintf(stderr, "cannot write %s\n", path);
        if (f) fclose(f);
        return 0;
    }
    return fclose(f) == 0;
}

int main(int argc, char **argv)
{
    static float x[COUNT], back[COUNT];
    static uint8_t q8[COUNT], q4[(COUNT + 1) / 2];
    static float s4[COUNT / BLOCK];
    const int64_t shape[4] = {N, C, H, W};
    const int64_t s4_shape[4] = {N, C, H, W / BLOCK};
    qsimd_error err;

    /* smooth image content plus a little deterministic noise */
    unsigned rng = 12345u;
    for (size_t i = 0; i < COUNT; i++) {
        size_t w = i % W, h = (i / W) % H, c = (i / W / H) % C;
        rng = rng * 1664525u + 1013904223u;
        float noise = (float)(rng >> 8) / 16777216.0f - 0.5f;
        x[i] = 2.0f * sinf(0.11f * (float)w + 0.7f * (float)c) * cosf(0.05f * (float)h) +
               0.25f * noise - 0.3f;
    }
    qsimd_tensor tx = {x, QSIMD_FLOAT, 4, shape, 0};
    qsimd_tensor tback = {back, QSIMD_FLOAT, 4, shape, 0};

    printf("qsimd %s, instruction set %s\n", qsimd_version(), qsimd_get_isa());

    /* 1. uint8 through DynamicQuantizeLinear */
    float scale8;
    uint8_t zp8;
    qsimd_tensor tq8 = {q8, QSIMD_UINT8, 4, shape, 0};
    check(qsimd_dynamic_quantize_linear(&tx, &tq8, &scale8, &zp8, &err), &err, "dynamic quantize");
    int64_t one = 1;
    qsimd_tensor tscale8 = {&scale8, QSIMD_FLOAT, 0, &one, 0};
    qsimd_tensor tzp8 = {&zp8, QSIMD_UINT8, 0, &one, 0};
    check(qsimd_dequantize_linear(&tq8, &tscale8, &tzp8, NULL, &tback, &err), &err, "dequantize u8");
    /* plain comparisons: gcc 12 for aarch64 crashes vectorizing an fmax reduction here */
    double err8 = 0;
    for (size_t i = 0; i < COUNT; i++) {
        double e = fabs((double)back[i] - x[i]);
        if (e > err8) err8 = e;
    }
    double bound8 = scale8 / 2.0 * (1 + 1e-6);
    printf("uint8: scale %.6g zero_point %u max_abs_error %.6g bound %.6g\n", scale8, zp8, err8,
           bound8);

    /* 2. int4, blocked along the last axis, packed */
    for (size_t b = 0; b < COUNT / BLOCK; b++) {
        float amax = 0;
        for (size_t j = 0; j < BLOCK; j++) {
            float a = fabsf(x[b * BLOCK + j]);
            if (a > amax) amax = a;
        }
        s4[b] = amax > 0 ? amax / 7.0f : 1.0f;
    }
    qsimd_tensor ts4 = {s4, QSIMD_FLOAT, 4, s4_shape, 0};
    qsimd_tensor tq4 = {q4, QSIMD_INT4, 4, shape, 1};
    qsimd_quantize_options qo;
    qsimd_quantize_options_init(&qo);
    qo.axis = 3;
    qo.block_size = BLOCK;
    check(qsimd_quantize_linear(&tx, &ts4, NULL, &qo, &tq4, &err), &err, "quantize int4");
    qsimd_dequantize_options dqo;
    qsimd_dequantize_options_init(&dqo);
    dqo.axis = 3;
    dqo.block_size = BLOCK;
    check(qsimd_dequantize_linear(&tq4, &ts4, NULL, &dqo, &tback, &err), &err, "dequantize int4");
    double err4 = 0, excess4 = 0;
    for (size_t i = 0; i < COUNT; i++) {
        double e = fabs((double)back[i] - x[i]), over = e - s4[i / BLOCK] / 2.0 * (1 + 1e-6);
        if (e > err4) err4 = e;
        if (over > excess4) excess4 = over;
    }
    printf("int4 : blocks %lu packed_bytes %lu max_abs_error %.6g within_bound %s\n",
           (unsigned long)(COUNT / BLOCK), (unsigned long)sizeof q4, err4,
           excess4 <= 0 ? "yes" : "no");

    /* throughput of the uint8 quantize with a fixed scale */
    qsimd_tensor tzp = {&zp8, QSIMD_UINT8, 0, &one, 0};
    int reps = 200;
    clock_t t0 = clock();
    for (int r = 0; r < reps; r++)
        check(qsimd_quantize_linear(&tx, &tscale8, &tzp, NULL, &tq8, &err), &err, "quantize u8");
    double sec = (double)(clock() - t0) / CLOCKS_PER_SEC;
    if (sec > 0)
        printf("throughput: quantize f32->u8 %.1f Melem/s (%d x %lu elements)\n",
               reps * (double)COUNT / sec / 1e6, reps, (unsigned long)COUNT);

    /* a misuse is reported, not crashed on */
    const int64_t bad_shape[4] = {N, C, H, W / BLOCK + 1};   /* one block too many */
    qsimd_tensor bad = {s4, QSIMD_FLOAT, 4, bad_shape, 0};
    int rc = qsimd_quantize_linear(&tx, &bad, NULL, &qo, &tq8, &err);
    printf("error example: code %d: %s\n", rc, err.message);

    if (argc > 1) {
        char params[128];
        snprintf(params, sizeof params, "%.9g %u\n", scale8, zp8);
        if (!dump(argv[1], "x.bin", x, sizeof x) || !dump(argv[1], "u8.bin", q8, sizeof q8) ||
            !dump(argv[1], "i4.bin", q4, sizeof q4) ||
            !dump(argv[1], "i4_scales.bin", s4, sizeof s4) ||
            !dump(argv[1], "params.txt", params, strlen(params)))
            return 2;
    }
    return err8 <= bound8 && excess4 <= 0 && rc == QSIMD_ERR_VALUE ? 0 : 1;
}
