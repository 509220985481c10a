/* Threads against the C API, for ThreadSanitizer (.ci/sanitizers.sh builds and runs it).
 *
 * 8 threads make their FIRST qsimd calls at the same moment (the lazy instruction-set
 * choice included) while one of them forces "scalar" with qsimd_set_isa; then they loop over
 * every operator while a ninth thread keeps switching the instruction set and the thread
 * count. Every so often each of them also makes a call large enough to be split across the
 * thread pool, so several calls share the pool at once. Checks: every result equals the first
 * thread's (every ISA gives the same bits), a large result equals the single-thread one, a
 * qsimd_set_isa made during the first use is not lost, and TSan sees no data race.
 *   cc -std=c99 -fsanitize=thread -Icsrc/include tests/c/test_api_threads.c libqsimd.a -lm -pthread
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qsimd.h"

#define N 4099           /* odd: SIMD tails and a partial packed byte */
#define NB ((1 << 19) + 3) /* large enough to be split across the thread pool */
#define WORKERS 8
#define ROUNDS 40

static float x[N], scale_axis[97];
static int64_t shape1[1] = {N}, shape2[2] = {N / 97, 97}, sshape[1] = {97};
static pthread_barrier_t start;
static int stop_mutator;   /* atomic */

typedef struct result {
    uint8_t q8[N], q4[(N + 1) / 2];
    float dq[N];
    float dyn_scale;
    uint8_t dyn_zp, dyn_y[N];
} result;

static result results[WORKERS];
/* The large calls: each worker's own buffers, checked against one thread's result. */
static float xb[NB], big_dq_ref[NB];
static uint8_t big_q_ref[NB], big_q[WORKERS][NB];
static float big_dq[WORKERS][NB];
static int failures;
static pthread_mutex_t fail_lock = PTHREAD_MUTEX_INITIALIZER;

static void fail(const char *what, const qsimd_error *err)
{
    pthread_mutex_lock(&fail_lock);
    failures++;
    fprintf(stderr, "test_api_threads: %s%s%s\n", what, err ? ": " : "", err ? err->message : "");
    pthread_mutex_unlock(&fail_lock);
}

static void run_all(result *r)
{
    qsimd_error err;
    qsimd_tensor tx = {x, QSIMD_FLOAT, 1, shape1, 0};
    float s = 0.37f;
    uint8_t zp = 7;
    qsimd_tensor ts = {&s, QSIMD_FLOAT, 0, NULL, 0}, tz = {&zp, QSIMD_UINT8, 0, NULL, 0};
    qsimd_tensor ty = {r->q8, QSIMD_UINT8, 1, shape1, 0};
    if (qsimd_quantize_linear(&tx, &ts, &tz, NULL, &ty, &err) != QSIMD_OK) fail("quantize", &err);
    /* per-axis on the last axis, packed int4 output */
    int64_t n2 = shape2[0] * shape2[1];
    qsimd_tensor tx2 = {x, QSIMD_FLOAT, 2, shape2, 0};
    qsimd_tensor ts2 = {scale_axis, QSIMD_FLOAT, 1, sshape, 0};
    qsimd_tensor ty4 = {r->q4, QSIMD_INT4, 2, shape2, 1};
    qsimd_quantize_options qo;
    qsimd_quantize_options_init(&qo);
    qo.axis = 1;
    memset(r->q4, 0, sizeof r->q4);
    if (n2 && qsimd_quantize_linear(&tx2, &ts2, NULL, &qo, &ty4, &err) != QSIMD_OK)
        fail("quantize per-axis int4", &err);
    qsimd_tensor tq = {r->q8, QSIMD_UINT8, 1, shape1, 0};
    qsimd_tensor td = {r->dq, QSIMD_FLOAT, 1, shape1, 0};
    if (qsimd_dequantize_linear(&tq, &ts, &tz, NULL, &td, &err) != QSIMD_OK)
        fail("dequantize", &err);
    qsimd_tensor tdy = {r->dyn_y, QSIMD_UINT8, 1, shape1, 0};
    if (qsimd_dynamic_quantize_linear(&tx, &tdy, &r->dyn_scale, &r->dyn_zp, &err) != QSIMD_OK)
        fail("dynamic", &err);
}

/* Quantize and dequantize NB elements on the pool (several workers at once queue jobs). */
static int run_big(uint8_t *q, float *dq, int threads)
{
    qsimd_error err;
    int64_t shape[1] = {NB};
    float s = 0.37f;
    uint8_t zp = 7;
    qsimd_tensor tx = {xb, QSIMD_FLOAT, 1, shape, 0}, tq = {q, QSIMD_UINT8, 1, shape, 0};
    qsimd_tensor td = {dq, QSIMD_FLOAT, 1, shape, 0};
    qsimd_tensor ts = {&s, QSIMD_FLOAT, 0, NULL, 0}, tz = {&zp, QSIMD_UINT8, 0, NULL, 0};
    qsimd_quantize_options qo;
    qsimd_dequantize_options dopt;
    qsimd_quantize_options_init(&qo);
    qsimd_dequantize_options_init(&dopt);
    qo.num_threads = dopt.num_threads = threads;
    if (qsimd_quantize_linear(&tx, &ts, &tz, &qo, &tq, &err) != QSIMD_OK) {
        fail("quantize (large)", &err);
        return 0;
    }
    if (qsimd_dequantize_linear(&tq, &ts, &tz, &dopt, &td, &err) != QSIMD_OK) {
        fail("dequantize (large)", &err);
        return 0;
    }
    return 1;
}

static void *worker(void *arg)
{
    int id = (int)(intptr_t)arg;
    pthread_barrier_wait(&start);
    if (id == 0) {   /* during everyone's first use: must not be overwritten by the lazy choice */
        qsimd_error err;
        if (qsimd_set_isa("scalar", &err) != QSIMD_OK) fail("set_isa", &err);
    }
    run_all(&results[id]);
    pthread_barrier_wait(&start);   /* the first-use phase is over */
    if (id == 0 && strcmp(qsimd_get_isa(), "scalar") != 0)
        fail("a qsimd_set_isa made during the first use was lost", NULL);
    pthread_barrier_wait(&start);
    for (int i = 0; i < ROUNDS; i++) {
        result r;
        memset(&r, 0, sizeof r);   /* padding too: the results are compared with memcmp */
        run_all(&r);
        if (memcmp(&r, &results[0], sizeof r) != 0) fail("a result differs", NULL);
        if (i % 8 == id % 8 && run_big(big_q[id], big_dq[id], 2) &&
            (memcmp(big_q[id], big_q_ref, sizeof big_q_ref) != 0 ||
             memcmp(big_dq[id], big_dq_ref, sizeof big_dq_ref) != 0))
            fail("a large result split across threads differs", NULL);
    }
    return NULL;
}

static void *mutator(void *arg)
{
    const char *const *names = qsimd_isa_names();
    unsigned k = 0, count = 0;
    (void)arg;
    while (names[count]) count++;
    pthread_barrier_wait(&start);
    pthread_barrier_wait(&start);
    pthread_barrier_wait(&start);
    while (!__atomic_load_n(&stop_mutator, __ATOMIC_ACQUIRE)) {
        const char *name = k % (count + 1) < count ? names[k % (count + 1)] : NULL;   /* NULL: best */
        if (name && !qsimd_isa_available(name)) name = NULL;
        if (qsimd_set_isa(name, NULL) != QSIMD_OK) fail("set_isa in the mutator", NULL);
        qsimd_set_num_threads(1 + (int)(k % 3));
        k++;
    }
    return NULL;
}

int main(void)
{
    for (int i = 0; i < N; i++) x[i] = (float)((i * 7919) % 2001 - 1000) * 0.173f;
    x[5] = 0.0f / 0.0f;   /* NaN: ignored by the dynamic range, quantized to qmin */
    for (int i = 0; i < 97; i++) scale_axis[i] = 0.05f + (float)i * 0.01f;
    for (int i = 0; i < NB; i++) xb[i] = (float)((i * 7919) % 2001 - 1000) * 0.131f;
    if (!run_big(big_q_ref, big_dq_ref, 1)) return 1;
    pthread_barrier_init(&start, NULL, WORKERS + 1);
    pthread_t t[WORKERS + 1];
    for (int i = 0; i < WORKERS; i++)
        if (pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i) != 0) return 2;
    if (pthread_create(&t[WORKERS], NULL, mutator, NULL) != 0) return 2;
    for (int i = 0; i < WORKERS; i++) pthread_join(t[i], NULL);
    __atomic_store_n(&stop_mutator, 1, __ATOMIC_RELEASE);
    pthread_join(t[WORKERS], NULL);
    for (int i = 1; i < WORKERS; i++)
        if (memcmp(&results[i], &results[0], sizeof results[0]) != 0)
            fail("first-use results differ between threads", NULL);
    printf("test_api_threads: %d threads x %d rounds, %d failures\n", WORKERS, ROUNDS, failures);
    return failures ? 1 : 0;
}
