/* Splitting one operator call across threads. Kernels are elementwise, so any split gives
 * the single-thread result as long as each piece starts where the plan allows a cut (on a
 * parameter-entry boundary, no packed byte shared).
 *
 * Threads come from a pool started on first use and kept for the life of the process:
 * starting a thread per call costs 50-90 us on a VM, more than the work it would share at a
 * few million elements. A call queues its pieces, wakes the pool, works on them itself and
 * takes every piece no worker has taken yet, so a slow wake-up never makes it slower than
 * doing all the work alone; it then waits only for pieces a worker is running. Workers spin
 * briefly after a piece before sleeping, so calls in quick succession find them awake. */
#include "pool.h"
#include "qsimd.h"
#include "../cpu.h"

#if defined(_WIN32)
#include <windows.h>
#else
#include <pthread.h>
#endif
#if defined(__x86_64__) || defined(_M_X64) || defined(__i386__) || defined(_M_IX86)
#include <xmmintrin.h>
#define QS_HAVE_SFENCE 1
#endif

void qs_fence_streams(void)
{
#if defined(QS_HAVE_SFENCE)
    _mm_sfence();
#endif
}

/* Below this many elements per thread, another thread costs more than it saves. */
#define QS_MIN_PER_THREAD ((size_t)1 << 18)
#define QS_MAX_THREADS 64
/* A call is cut into up to QS_PIECES_PER_THREAD pieces per thread, of at least
 * QS_MIN_PIECE elements: whoever is free takes the next one, so a thread that starts late
 * or runs slowly (a core woken from sleep, a busy vCPU) holds back at most one piece. */
#define QS_PIECES_PER_THREAD 16
#define QS_MIN_PIECE ((size_t)1 << 15)
#define QS_CUT_ALIGN ((size_t)4096)
/* Pause iterations a worker polls for new work after a piece (~50-100 us) before sleeping. */
#define QS_SPIN 4096

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
} piece;

/* One call's pieces; it lives on the caller's stack until every piece handed out is done. */
typedef struct job {
    piece w[QS_MAX_THREADS];
    int count;
    int next;           /* next piece to hand out */
    int taken, done;    /* pieces handed to workers / finished by them */
    qs_piece_fn fn;
    void *ctx;
    struct job *link;   /* queue of jobs with pieces left */
} job;

/* ---- a mutex and two condition variables, pthreads or Win32 ---- */
#if defined(_WIN32)
typedef SRWLOCK qs_mutex;
typedef CONDITION_VARIABLE qs_cond;
#define QS_MUTEX_INIT SRWLOCK_INIT
#define QS_COND_INIT CONDITION_VARIABLE_INIT
static void qs_lock(qs_mutex *m) { AcquireSRWLockExclusive(m); }
static void qs_unlock(qs_mutex *m) { ReleaseSRWLockExclusive(m); }
static void qs_wait(qs_cond *c, qs_mutex *m) { SleepConditionVariableSRW(c, m, INFINITE, 0); }
static void qs_wake_all(qs_cond *c) { WakeAllConditionVariable(c); }
static void qs_pause(void) { YieldProcessor(); }
#else
typedef pthread_mutex_t qs_mutex;
typedef pthread_cond_t qs_cond;
#define QS_MUTEX_INIT PTHREAD_MUTEX_INITIALIZER
#define QS_COND_INIT PTHREAD_COND_INITIALIZER
static void qs_lock(qs_mutex *m) { pthread_mutex_lock(m); }
static void qs_unlock(qs_mutex *m) { pthread_mutex_unlock(m); }
static void qs_wait(qs_cond *c, qs_mutex *m) { pthread_cond_wait(c, m); }
static void qs_wake_all(qs_cond *c) { pthread_cond_broadcast(c); }
static void qs_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __asm__ __volatile__("pause");
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}
#endif

/* Guards the prepared chains' lazily built tables (prepared.c / chain.c): rarely taken,
 * never held across anything that waits. */
static qs_mutex lazy_lock = QS_MUTEX_INIT;
void qs_lazy_lock(void) { qs_lock(&lazy_lock); }
void qs_lazy_unlock(void) { qs_unlock(&lazy_lock); }

static struct {
    qs_mutex lock;
    qs_cond work;       /* workers: a job was queued */
    qs_cond finished;   /* callers: a worker finished a piece */
    job *head;          /* written under lock, read without it by spinning workers */
    int workers;        /* started so far */
    int sleeping;       /* workers waiting on `work`: only then is a wake-up call needed */
} pool = {QS_MUTEX_INIT, QS_COND_INIT, QS_COND_INIT, NULL, 0, 0};

/* Under the lock: the next piece of the first job that has one, or NULL. */
static piece *take_piece(job **pj)
{
    job *j = pool.head;
    if (!j) return NULL;
    piece *w = &j->w[j->next++];
    if (j->next == j->count) QSIMD_STORE_PTR(pool.head, j->link);   /* all handed out */
    *pj = j;
    return w;
}

static void worker_loop(void)
{
    qs_lock(&pool.lock);
    for (;;) {
        job *j;
        piece *w = take_piece(&j);
        if (!w) {
            qs_unlock(&pool.lock);
            for (int k = 0; k < QS_SPIN && !QSIMD_LOAD_PTR(pool.head); k++) qs_pause();
            qs_lock(&pool.lock);
            if (!pool.head) {
                pool.sleeping++;
                qs_wait(&pool.work, &pool.lock);
                pool.sleeping--;
            }
            continue;
        }
        j->taken++;
        qs_unlock(&pool.lock);
        j->fn(j->ctx, w->index, w->a, w->b);
        qs_lock(&pool.lock);
        if (++j->done == j->taken) qs_wake_all(&pool.finished);
    }
}

#if defined(_WIN32)
static DWORD WINAPI worker_main(LPVOID arg) { (void)arg; worker_loop(); return 0; }
#else
static void *worker_main(void *arg) { (void)arg; worker_loop(); return NULL; }

/* A forked child has none of the parent's threads: it starts an empty pool of its own. */
static void pool_after_fork_child(void)
{
    pthread_mutex_init(&pool.lock, NULL);
    pthread_mutex_init(&lazy_lock, NULL);
    pthread_cond_init(&pool.work, NULL);
    pthread_cond_init(&pool.finished, NULL);
    pool.head = NULL;
    pool.workers = 0;
    pool.sleeping = 0;
}
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static void register_atfork(void) { pthread_atfork(NULL, NULL, pool_after_fork_child); }
#endif

/* Under the lock: starts workers until there are `want` (fewer if the system refuses). */
static void grow_pool(int want)
{
    while (pool.workers < want) {
#if defined(_WIN32)
        HANDLE h = CreateThread(NULL, 0, worker_main, NULL, 0, NULL);
        if (!h) return;
        CloseHandle(h);
#else
        pthread_t t;
        pthread_attr_t attr;
        if (pthread_attr_init(&attr) != 0) return;
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        int rc = pthread_create(&t, &attr, worker_main, NULL);
        pthread_attr_destroy(&attr);
        if (rc != 0) return;
#endif
        pool.workers++;
    }
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
    job j;
    j.count = 0;
    size_t a = 0, pieces = (size_t)threads * QS_PIECES_PER_THREAD;
    if (pieces > QS_MAX_THREADS) pieces = QS_MAX_THREADS;
    if (pieces > n / QS_MIN_PIECE) pieces = n / QS_MIN_PIECE;
    for (size_t t = 0; t < pieces && a < n; t++) {
        /* cuts at multiples of QS_CUT_ALIGN elements from the start: two threads never
         * write one cache line (for outputs of a byte or more, one page), and each thread's
         * streaming stores fill whole lines */
        size_t want = (n / pieces * (t + 1) + QS_CUT_ALIGN / 2) / QS_CUT_ALIGN * QS_CUT_ALIGN;
        size_t b = t == pieces - 1 ? n : qs_next_cut(plan, per_byte, want, n);
        if (b <= a) continue;
        j.w[j.count].a = a; j.w[j.count].b = b; j.w[j.count].index = j.count;
        j.count++;
        a = b;
    }
    if (j.count == 1) {
        fn(ctx, 0, 0, n);
        return 1;
    }
    j.next = 1;   /* piece 0 is the caller's */
    j.taken = j.done = 0;
    j.fn = fn;
    j.ctx = ctx;
    j.link = NULL;
#if !defined(_WIN32)
    pthread_once(&atfork_once, register_atfork);
#endif
    qs_lock(&pool.lock);
    grow_pool(threads - 1);
    job **tail = &pool.head;
    while (*tail) tail = &(*tail)->link;
    QSIMD_STORE_PTR(*tail, &j);
    if (pool.sleeping) qs_wake_all(&pool.work);   /* spinning workers see the queue anyway */
    qs_unlock(&pool.lock);

    fn(ctx, 0, j.w[0].a, j.w[0].b);
    qs_lock(&pool.lock);
    while (j.next < j.count) {   /* pieces no worker took: ours */
        piece *w = &j.w[j.next++];
        if (j.next == j.count) {   /* out of the queue (it may not be first any more) */
            job **q = &pool.head;
            while (*q != &j) q = &(*q)->link;
            QSIMD_STORE_PTR(*q, j.link);
        }
        qs_unlock(&pool.lock);
        fn(ctx, w->index, w->a, w->b);
        qs_lock(&pool.lock);
    }
    while (j.done < j.taken) qs_wait(&pool.finished, &pool.lock);
    qs_unlock(&pool.lock);
    return j.count;
}
