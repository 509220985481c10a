/* Microscaling (MX) and block floating point (BFP) on an NCHW activation tensor, blocks
 * along the channel axis (axis 1), as AMD Quark's MX / BFP models quantize activations:
 *   1. MXQuantizeDequantize, fp8_e4m3 elements, blocks of 32 channels, in place;
 *   2. BFPQuantizeDequantize, to_bfp with 16 bits, blocks of 8 channels;
 *   3. OCP MX in ONNX terms: float4_e2m1 elements packed two per byte and float8_e8m0
 *      scales, ready for ONNX DequantizeLinear (opset 24+).
 * Prints each result's largest error relative to its block's largest magnitude, which the
 * element type bounds, and a rejected call's message.
 *
 *   mx_activations [DIR]   with DIR: also writes x.bin, mx_fp8.bin, bfp16.bin, mx_fp4.bin
 *                          and mx_fp4_scales.bin there so a test can check them independently.
 * Exit status: 0 when every error is within its bound, 1 otherwise, 2 on an API error. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qsimd.h"

enum { N = 2, C = 64, H = 14, W = 14, HW = H * W };
#define COUNT ((size_t)N * C * HW)

static void check(int rc, const qsimd_error *err, const char *what)
{
    if (rc != QSIMD_OK) {
        fprintf(stderr, "%s failed (%d): %s\n", what, rc, err->message);
        exit(2);
    }
}

static int dump(const char *dir, const char *name, const void *data, size_t bytes)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(data, 1, bytes, f) == bytes;
    if (f && fclose(f) != 0) ok = 0;
    if (!ok) fprintf(stderr, "cannot write %s\n", path);
    return ok;
}

/* The largest |y - x| / max|x of its block| over blocks of `block` channels. */
static double worst(const float *x, const float *y, int block)
{
    double w = 0;
    for (int n = 0; n < N; n++)
        for (int c0 = 0; c0 < C; c0 += block)
            for (int p = 0; p < HW; p++) {
                double top = 0, e = 0;
                for (int c = c0; c < c0 + block && c < C; c++) {
                    size_t i = ((size_t)n * C + (size_t)c) * HW + (size_t)p;
                    if (fabs(x[i]) > top) top = fabs(x[i]);
                    if (fabs((double)y[i] - x[i]) > e) e = fabs((double)y[i] - x[i]);
                }
                if (top > 0 && e / top > w) w = e / top;
            }
    return w;
}

int main(int argc, char **argv)
{
    static float x[COUNT], mx[COUNT], bfp[COUNT];
    static uint8_t fp4[(COUNT + 1) / 2], scales[N * (C / 32) * HW];
    const int64_t shape[4] = {N, C, H, W}, sshape[4] = {N, C / 32, H, W};
    qsimd_error err;

    /* activations after a ReLU-like stage: channels of very different magnitudes */
    unsigned rng = 2024u;
    for (size_t i = 0; i < COUNT; i++) {
        size_t c = i / HW % C;
        rng = rng * 1664525u + 1013904223u;
        float u = (float)(rng >> 8) / 16777216.0f;
        x[i] = ldexpf(u * u, (int)(c % 7) - 3) - 0.05f;
    }
    printf("qsimd %s, instruction set %s\n", qsimd_version(), qsimd_get_isa());

    /* 1. MX fp8_e4m3 along the channels, in place (y may equal x) */
    memcpy(mx, x, sizeof x);
    qsimd_tensor tmx = {mx, QSIMD_FLOAT, 4, shape, 0};
    qsimd_mx_options mo;
    qsimd_mx_options_init(&mo);   /* axis 1, blocks of 32, rounding mode 0 */
    mo.element_dtype = "fp8_e4m3";
    check(qsimd_mx_quantize_dequantize(&tmx, &tmx, &mo, &err), &err, "MX fp8_e4m3");
    /* e4m3 keeps 3 mantissa bits (error within 2^-4 of the element), but OCP's scale maps
     * the block's top binade to [256, 512) and e4m3 stops at 448: magnitudes above saturate,
     * within 64 / 448 = 1/7 of themselves */
    double e_mx = worst(x, mx, 32);

    /* 2. BFP, 16 bits (7 mantissa bits), blocks of 8 channels */
    qsimd_tensor tx = {x, QSIMD_FLOAT, 4, shape, 0}, tbfp = {bfp, QSIMD_FLOAT, 4, shape, 0};
    qsimd_bfp_options bo;
    qsimd_bfp_options_init(&bo);
    check(qsimd_bfp_quantize_dequantize(&tx, &tbfp, &bo, &err), &err, "BFP to_bfp 16");
    /* steps of 2^-6 of the block's top binade, the top step clamped: within one step */
    double e_bfp = worst(x, bfp, 8);

    /* 3. OCP MX: packed float4 elements and e8m0 scales */
    qsimd_tensor te = {fp4, QSIMD_FLOAT4E2M1, 4, shape, 1};
    qsimd_tensor ts = {scales, QSIMD_FLOAT8E8M0, 4, sshape, 0};
    check(qsimd_quantize_mx(&tx, &te, &ts, &mo, &err), &err, "quantize_mx float4");

    printf("mx_fp8 worst %.6f bound %.6f\n", e_mx, 1.0 / 7);
    printf("bfp16 worst %.6f bound %.6f\n", e_bfp, 0.015625);
    int ok = e_mx <= 1.0 / 7 && e_bfp <= 0.015625;
    printf("within_bound %s\n", ok ? "yes" : "no");

    /* a bad attribute is an error code and a message, never a crash */
    mo.element_dtype = "fp8";
    int rc = qsimd_mx_quantize_dequantize(&tx, &tbfp, &mo, &err);
    printf("error example: code %d: %s\n", rc, err.message);

    if (argc > 1 &&
        !(dump(argv[1], "x.bin", x, sizeof x) && dump(argv[1], "mx_fp8.bin", mx, sizeof mx) &&
          dump(argv[1], "bfp16.bin", bfp, sizeof bfp) &&
          dump(argv[1], "mx_fp4.bin", fp4, sizeof fp4) &&
          dump(argv[1], "mx_fp4_scales.bin", scales, sizeof scales)))
        return 2;
    return ok ? 0 : 1;
}
