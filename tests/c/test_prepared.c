/* The C API's prepared parameters: hand-computed results, equality with the plain call,
 * independence from the caller's buffers, concurrent runs and errors. Exit status 0: pass. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <qsimd.h>

static int failures = 0;
#define CHECK(c) do { if (!(c)) { printf("FAIL line %d: %s\n", __LINE__, #c); failures++; } } \
    while (0)

static qsimd_prepared *shared;
static float tx_data[4096];

static void *worker(void *arg)
{
    uint8_t y[4096], want[4096];
    int64_t shape[1] = {4096};
    qsimd_tensor x = {tx_data, QSIMD_FLOAT, 1, shape, 0}, ty = {y, QSIMD_UINT8, 1, shape, 0};
    (void)arg;
    for (int i = 0; i < 4096; i++) {   /* scale 0.5, zero point 100, by hand */
        float v = tx_data[i] * 2.0f + 100.0f;
        want[i] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
    }
    for (int r = 0; r < 200; r++) {
        if (qsimd_prepared_run(shared, &x, &ty, NULL) != QSIMD_OK) return (void *)1;
        if (memcmp(y, want, sizeof y)) return (void *)1;
    }
    return NULL;
}

int main(void)
{
    qsimd_error err;
    qsimd_prepared *p = NULL;
    /* per-tensor, the README's example: y = {128, 129, 130, 255, 1, 0} */
    float x[6] = {0, 2, 3, 1000, -254, -1000}, scale = 2;
    uint8_t y[6], zp = 128;
    int64_t shape[1] = {6};
    qsimd_tensor tx = {x, QSIMD_FLOAT, 1, shape, 0}, ty = {y, QSIMD_UINT8, 1, shape, 0};
    qsimd_tensor ts = {&scale, QSIMD_FLOAT, 0, NULL, 0}, tz = {&zp, QSIMD_UINT8, 0, NULL, 0};
    CHECK(qsimd_prepare_quantize(&ts, &tz, QSIMD_UINT8, 0, NULL, &p, &err) == QSIMD_OK);
    scale = 1000;   /* the caller's buffers no longer matter */
    zp = 0;
    CHECK(qsimd_prepared_run(p, &tx, &ty, &err) == QSIMD_OK);
    {
        const uint8_t want[6] = {128, 129, 130, 255, 1, 0};
        CHECK(memcmp(y, want, 6) == 0);
    }
    /* y of another type than prepared */
    int8_t y8[6];
    qsimd_tensor ty8 = {y8, QSIMD_INT8, 1, shape, 0};
    CHECK(qsimd_prepared_run(p, &tx, &ty8, &err) == QSIMD_ERR_VALUE);
    CHECK(strstr(err.message, "y must be uint8") != NULL);
    qsimd_prepared_free(p);

    /* per-axis int8 on axis 1 of (2, 3): scales {1, 2, 4}, zero points {0, 1, -1} */
    float xa[6] = {1, 2, 4, -3, 5, 9}, sa[3] = {1, 2, 4};
    int8_t za[3] = {0, 1, -1}, ya[6];
    int64_t sh2[2] = {2, 3}, sh1[1] = {3};
    qsimd_tensor txa = {xa, QSIMD_FLOAT, 2, sh2, 0}, tya = {ya, QSIMD_INT8, 2, sh2, 0};
    qsimd_tensor tsa = {sa, QSIMD_FLOAT, 1, sh1, 0}, tza = {za, QSIMD_INT8, 1, sh1, 0};
    qsimd_quantize_options qo;
    qsimd_quantize_options_init(&qo);
    CHECK(qsimd_prepare_quantize(&tsa, &tza, QSIMD_INT8, 0, &qo, &p, &err) == QSIMD_OK);
    CHECK(qsimd_prepared_run(p, &txa, &tya, &err) == QSIMD_OK);
    {   /* 1/1+0, 2/2+1, 4/4-1, -3/1+0, 5/2+1 = round(2.5)+1 = 3, 9/4-1 = round(2.25)-1 = 1 */
        const int8_t want[6] = {1, 2, 0, -3, 3, 1};
        CHECK(memcmp(ya, want, 6) == 0);
    }
    /* x whose axis does not match the prepared scale: the operator's message */
    int64_t bad[2] = {3, 2};
    qsimd_tensor txb = {xa, QSIMD_FLOAT, 2, bad, 0}, tyb = {ya, QSIMD_INT8, 2, bad, 0};
    CHECK(qsimd_prepared_run(p, &txb, &tyb, &err) == QSIMD_ERR_VALUE);
    CHECK(strstr(err.message, "x.shape[1]") != NULL);
    qsimd_prepared_free(p);

    /* dequantize, per-tensor float16 scale out as float32: (y - 3) * 0.5 */
    uint16_t h = 0x3800;   /* 0.5 */
    uint8_t q[4] = {0, 3, 4, 255}, dz = 3;
    float out[4];
    int64_t s4[1] = {4};
    qsimd_tensor tq = {q, QSIMD_UINT8, 1, s4, 0}, tout = {out, QSIMD_FLOAT, 1, s4, 0};
    qsimd_tensor th = {&h, QSIMD_FLOAT16, 0, NULL, 0}, tdz = {&dz, QSIMD_UINT8, 0, NULL, 0};
    CHECK(qsimd_prepare_dequantize(&th, &tdz, NULL, &p, &err) == QSIMD_OK);
    CHECK(qsimd_prepared_run(p, &tq, &tout, &err) == QSIMD_OK);
    CHECK(out[0] == -1.5f && out[1] == 0.0f && out[2] == 0.5f && out[3] == 126.0f);
    qsimd_prepared_free(p);

    /* errors at prepare time */
    double d = 1;
    qsimd_tensor tdbl = {&d, 11, 0, NULL, 0};
    CHECK(qsimd_prepare_quantize(&tdbl, NULL, QSIMD_UINT8, 0, NULL, &p, &err) == QSIMD_ERR_TYPE);
    CHECK(p == NULL && strstr(err.message, "scale must be") != NULL);
    CHECK(qsimd_prepare_quantize(&ts, &tz, QSIMD_INT8, 0, NULL, &p, &err) == QSIMD_ERR_VALUE);
    CHECK(strstr(err.message, "zero_point has type uint8") != NULL);
    CHECK(qsimd_prepare_quantize(&tsa, &tz, QSIMD_UINT8, 0, NULL, &p, &err) == QSIMD_ERR_VALUE);
    CHECK(strstr(err.message, "zero_point must have the shape of scale (() vs (3,))") != NULL);
    CHECK(qsimd_prepare_quantize(&ts, NULL, QSIMD_FLOAT, 0, NULL, &p, &err) == QSIMD_ERR_TYPE);
    CHECK(strstr(err.message, "output type float32 is not supported (supported: uint8, ") != NULL);
    qsimd_prepared_free(NULL);

    /* one prepared object, four threads */
    for (int i = 0; i < 4096; i++) tx_data[i] = (float)((i * 37) % 301 - 150);
    float s05 = 0.5f;
    uint8_t z100 = 100;
    qsimd_tensor t05 = {&s05, QSIMD_FLOAT, 0, NULL, 0}, t100 = {&z100, QSIMD_UINT8, 0, NULL, 0};
    CHECK(qsimd_prepare_quantize(&t05, &t100, QSIMD_UINT8, 0, NULL, &shared, &err) == QSIMD_OK);
    pthread_t th4[4];
    for (int i = 0; i < 4; i++) pthread_create(&th4[i], NULL, worker, NULL);
    for (int i = 0; i < 4; i++) {
        void *r;
        pthread_join(th4[i], &r);
        CHECK(r == NULL);
    }
    qsimd_prepared_free(shared);

    /* a preprocessing chain: an HWC uint8 frame, (x - mean[c]) / 2, to NCHW int8 with
     * scale 1 and zero point 1, by hand (ties to even: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2) */
    {
        const uint8_t frame[12] = {11, 20, 255, 13, 0, 31, 10, 25, 30, 200, 21, 29};
        const int8_t want[12] = {1, 3, 1, 96, 1, -9, 3, 1, 113, 1, 1, 1};
        float mean[3] = {10, 20, 30}, two = 2, one = 1, fframe[12];
        int16_t wframe[12];
        int8_t zp1 = 1, yc[12];
        int64_t hwc[4] = {1, 2, 2, 3}, chw[4] = {1, 3, 2, 2}, perm[4] = {0, 3, 1, 2};
        qsimd_pre_op ops[2] = {{QSIMD_PRE_SUB, 3, mean}, {QSIMD_PRE_DIV, 1, &two}};
        qsimd_tensor t1 = {&one, QSIMD_FLOAT, 0, NULL, 0}, tz1 = {&zp1, QSIMD_INT8, 0, NULL, 0};
        qsimd_tensor tf = {(void *)frame, QSIMD_UINT8, 4, hwc, 0};
        qsimd_tensor tyc = {yc, QSIMD_INT8, 4, chw, 0};
        CHECK(qsimd_prepare_quantize_chain(&t1, &tz1, QSIMD_INT8, 0, NULL, ops, 2, -1, perm, 4,
                                           &p, &err) == QSIMD_OK);
        mean[0] = 99;   /* the constants were copied */
        memset(yc, 0x55, sizeof yc);
        CHECK(qsimd_prepared_run(p, &tf, &tyc, &err) == QSIMD_OK);
        CHECK(memcmp(yc, want, 12) == 0);
        for (int i = 0; i < 12; i++) { fframe[i] = frame[i]; wframe[i] = frame[i]; }
        tf.data = fframe; tf.dtype = QSIMD_FLOAT;          /* the float path */
        memset(yc, 0x55, sizeof yc);
        CHECK(qsimd_prepared_run(p, &tf, &tyc, &err) == QSIMD_OK);
        CHECK(memcmp(yc, want, 12) == 0);
        tf.data = wframe; tf.dtype = QSIMD_INT16;          /* a 16-bit table, built now */
        memset(yc, 0x55, sizeof yc);
        CHECK(qsimd_prepared_run(p, &tf, &tyc, &err) == QSIMD_OK);
        CHECK(memcmp(yc, want, 12) == 0);
        tyc.shape = hwc;                                    /* y not permuted */
        CHECK(qsimd_prepared_run(p, &tf, &tyc, &err) == QSIMD_ERR_VALUE);
        CHECK(strstr(err.message, "perm") != NULL);
        tf.ndim = 3; tf.shape = hwc + 1;                    /* rank 3 against perm of 4 */
        CHECK(qsimd_prepared_run(p, &tf, &tyc, &err) == QSIMD_ERR_VALUE);
        CHECK(strstr(err.message, "perm has 4 entries") != NULL);
        qsimd_prepared_free(p);
        qsimd_pre_op bad[1] = {{7, 1, &two}};
        CHECK(qsimd_prepare_quantize_chain(&t1, &tz1, QSIMD_INT8, 0, NULL, bad, 1, -1, NULL, 0,
                                           &p, &err) == QSIMD_ERR_VALUE);
        CHECK(p == NULL && strstr(err.message, "pre[0]") != NULL);
        int64_t notperm[3] = {0, 2, 2};
        CHECK(qsimd_prepare_quantize_chain(&t1, &tz1, QSIMD_INT8, 0, NULL, ops, 2, -1, notperm,
                                           3, &p, &err) == QSIMD_ERR_VALUE);
        CHECK(p == NULL && strstr(err.message, "perm must be a permutation") != NULL);
    }
    printf("%s (%s)\n", failures ? "FAILED" : "ok", qsimd_get_isa());
    return failures != 0;
}
