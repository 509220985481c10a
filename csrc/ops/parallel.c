/* Splitting one operator call across threads. Kernels are elementwise, so any split gives
 * the single-thread result as long as each piece starts on a parameter-entry boundary and no
 * packed byte is shared (qs_valid_cut). Threads are started per call: the threshold below
 * keeps that cost (tens of microseconds) far under the work it splits. */
#include "common.h"
#include "../cpu.h"

#if defined(_WIN32)
#include <windows.h>
#else
#include <pthread.h>
#endif

/* Below this many elements per thread, another thread costs more than it saves. */
#define QS_MIN_PER_THREAD ((size_t)1 << 18)
#define QS_MAX_THREADS 64

static unsigned default_threads = 1;

int qs_default_threads(void)
{
    unsigned t = QSIMD_LOAD_U32(default_threads);
    return t ? (int)t : 1;
}

int qsimd_set_num_threads(int n)
{
    if (n < 1 || n > QS_MAX_THREADS) return QSIMD_ERR_VALUE;
    QSIMD_STORE_U32(default_threads, (unsigned)n);
    return QSIMD_OK;
}

int qsimd_get_num_threads(void) { return qs_default_threads(); }

typedef struct piece {
    size_t a, b;
    int index;
    qs_piece_fn fn;
    void *ctx;
} piece;

static void run_piece(piece *w) { w->fn(w->ctx, w->index, w->a, w->b); }

#if defined(_WIN32)
static DWORD WINAPI thread_main(LPVOID arg) { run_piece((piece *)arg); return 0; }
#else
static void *thread_main(void *arg) { run_piece((piece *)arg); return NULL; }
#endif

/* A valid cut at or after `want` (the first few candidates are tried), else `limit`. */
static size_t next_cut(const qs_plan *p, size_t want, size_t limit, unsigned per_byte)
{
    size_t row = 0, off = want, period = limit, step = 1;   /* per-tensor: any element */
    if (p->kind == QS_PER_AXIS) {
        step = p->inner;             /* channel starts */
    } else if (p->kind == QS_BLOCKED && p->inner == 1) {
        period = p->d; step = p->b;  /* block starts inside each row */
        row = want / period; off = want % period;
    }
    off = (off + step - 1) / step * step;
    for (int tries = 0; tries < 16; tries++) {
        if (off >= period) { row++; off = 0; }
        size_t cut = row * period + off;
        if (cut >= limit) break;
        if (qs_valid_cut(p, cut, per_byte)) return cut;
        off += step;
    }
    return limit;
}

int qs_thread_count(size_t n, int threads)
{
    if (threads < 1) threads = qs_default_threads();
    if (threads > QS_MAX_THREADS) threads = QS_MAX_THREADS;
    if ((size_t)threads > n / QS_MIN_PER_THREAD) threads = (int)(n / QS_MIN_PER_THREAD);
    return threads < 1 ? 1 : threads;
}

int qs_parallel(const qs_plan *plan, int threads, unsigned per_byte, qs_piece_fn fn, void *ctx)
{
    size_t n = plan->n;
    threads = qs_thread_count(n, threads);
    if (threads <= 1) {
        fn(ctx, 0, 0, n);
        return 1;
    }
    piece w[QS_MAX_THREADS];
    int count = 0;
    size_t a = 0;
    for (int t = 0; t < threads && a < n; t++) {
        size_t b = t == threads - 1 ? n : next_cut(plan, n / (size_t)threads * (size_t)(t + 1), n,
                                                   per_byte);
        if (b <= a) continue;
        w[count].a = a; w[count].b = b; w[count].index = count;
        w[count].fn = fn; w[count].ctx = ctx;
        count++;
        a = b;
    }
#if defined(_WIN32)
    HANDLE h[QS_MAX_THREADS];
#else
    pthread_t h[QS_MAX_THREADS];
#endif
    int started[QS_MAX_THREADS] = {0};
    for (int i = 1; i < count; i++) {
#if defined(_WIN32)
        h[i] = CreateThread(NULL, 0, thread_main, &w[i], 0, NULL);
        started[i] = h[i] != NULL;
#else
        started[i] = pthread_create(&h[i], NULL, thread_main, &w[i]) == 0;
#endif
    }
    run_piece(&w[0]);
    for (int i = 1; i < count; i++) {
        if (!started[i]) {   /* could not start a thread: do its share here */
            run_piece(&w[i]);
            continue;
        }
#if defined(_WIN32)
        WaitForSingleObject(h[i], INFINITE);
        CloseHandle(h[i]);
#else
        pthread_join(h[i], NULL);
#endif
    }
    return count;
}

typedef struct runs_ctx {
    const qs_plan *plan;
    qs_run_fn fn;
    void *ctx;
} runs_ctx;

static void runs_piece(void *vctx, int index, size_t a, size_t b)
{
    runs_ctx *c = (runs_ctx *)vctx;
    (void)index;
    qs_for_each_run_in(c->plan, a, b, c->fn, c->ctx);
}

void qs_parallel_runs(const qs_plan *plan, int threads, unsigned per_byte, qs_run_fn fn,
                      void *ctx)
{
    runs_ctx c;
    c.plan = plan; c.fn = fn; c.ctx = ctx;
    qs_parallel(plan, threads, per_byte, runs_piece, &c);
}
