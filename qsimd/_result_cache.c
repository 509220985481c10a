/* The allocator of large results (NumPy's PyDataMem_Handler interface, used by _core.pyx): a
 * small cache of recently freed blocks, so a repeated large call does not pay for fresh
 * memory being faulted in and zeroed. The limit is set at import (qsimd/_memory.py).
 * Python-only: the C core allocates nothing. */
#include <Python.h>
#include <pythread.h>
#include <stdint.h>
#include <stdlib.h>
#include <numpy/ndarraytypes.h>   /* PyDataMem_Handler: a type only, no NumPy API call here */
#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

#include "_result_cache.h"

static PyThread_type_lock qs_cache_lock;   /* NULL until qs_cache_init: nothing is kept */
/* blocks kept, oldest first */
static struct { void *p; size_t n; } qs_cache[QS_CACHE_SLOTS];
static int qs_ncache;
static size_t qs_cache_limit = 0;   /* bytes kept at most; set at import (qsimd/_memory.py) */
/* madvise needs a page-aligned start: 4 KiB on most systems, 16 KiB or 64 KiB on some
 * ARM kernels (a Pi 5), where a 4096-byte alignment fails with EINVAL. Set at import. */
static size_t qs_page = 4096;
static void qs_init_page(void)
{
#if defined(__linux__)
    long v = sysconf(_SC_PAGESIZE);
    if (v > 0) qs_page = (size_t)v;
#endif
}

static void *qs_h_malloc(void *ctx, size_t size)
{
    void *p = NULL;
    (void)ctx;
    if (size >= QS_CACHE_MIN && qs_cache_lock) {
        int best = -1;
        PyThread_acquire_lock(qs_cache_lock, WAIT_LOCK);
        for (int i = 0; i < qs_ncache; i++)   /* fits, wasting at most half */
            if (qs_cache[i].n >= size && qs_cache[i].n / 2 <= size &&
                (best < 0 || qs_cache[i].n < qs_cache[best].n))
                best = i;
        if (best >= 0) {
            p = qs_cache[best].p;
            for (int i = best; i + 1 < qs_ncache; i++) qs_cache[i] = qs_cache[i + 1];
            qs_ncache--;
        }
        PyThread_release_lock(qs_cache_lock);
        if (p) return p;
    }
    p = malloc(size ? size : 1);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    /* as NumPy's own allocator: large blocks on huge pages where the system allows,
     * a fraction of the page faults on first touch */
    if (p && size >= ((size_t)1 << 22)) {
        size_t page = qs_page;
        size_t off = (page - (size_t)((uintptr_t)p % page)) % page;
        if (off < size) madvise((char *)p + off, size - off, MADV_HUGEPAGE);
    }
#endif
    return p;
}
static void *qs_h_calloc(void *ctx, size_t n, size_t size)
{
    (void)ctx;
    return calloc(n ? n : 1, size ? size : 1);
}
static void *qs_h_realloc(void *ctx, void *p, size_t size)
{
    (void)ctx;
    return realloc(p, size ? size : 1);
}
/* size is the array's byte count, never more than the block holds. The newest block is
 * kept; older ones make room for it. */
static void qs_h_free(void *ctx, void *p, size_t size)
{
    void *drop[QS_CACHE_SLOTS + 1];
    int ndrop = 0;
    (void)ctx;
    if (p && size >= QS_CACHE_MIN && qs_cache_lock) {
        PyThread_acquire_lock(qs_cache_lock, WAIT_LOCK);
        if (size <= qs_cache_limit) {
            size_t kept = 0;
            for (int i = 0; i < qs_ncache; i++) kept += qs_cache[i].n;
            while (qs_ncache && (qs_ncache == QS_CACHE_SLOTS ||
                                 kept > qs_cache_limit - size)) {
                drop[ndrop++] = qs_cache[0].p;
                kept -= qs_cache[0].n;
                for (int i = 0; i + 1 < qs_ncache; i++) qs_cache[i] = qs_cache[i + 1];
                qs_ncache--;
            }
            qs_cache[qs_ncache].p = p;
            qs_cache[qs_ncache].n = size;
            qs_ncache++;
            p = NULL;
        }
        PyThread_release_lock(qs_cache_lock);
    }
    while (ndrop) free(drop[--ndrop]);
    free(p);
}
/* The blocks kept, freed now; then at most `limit` bytes are kept. */
void qs_cache_set_limit(size_t limit)
{
    void *drop[QS_CACHE_SLOTS];
    int n;
    PyThread_acquire_lock(qs_cache_lock, WAIT_LOCK);
    qs_cache_limit = limit;
    n = qs_ncache;
    for (int i = 0; i < n; i++) drop[i] = qs_cache[i].p;
    qs_ncache = 0;
    PyThread_release_lock(qs_cache_lock);
    for (int i = 0; i < n; i++) free(drop[i]);
}
size_t qs_cache_get_limit(void) { return qs_cache_limit; }
int qs_cache_sizes(size_t *sizes)
{
    int k;
    PyThread_acquire_lock(qs_cache_lock, WAIT_LOCK);
    for (k = 0; k < qs_ncache; k++) sizes[k] = qs_cache[k].n;
    PyThread_release_lock(qs_cache_lock);
    return k;
}
static PyDataMem_Handler qs_handler = {
    "qsimd_result_cache", 1,
    {NULL, qs_h_malloc, qs_h_calloc, qs_h_realloc, qs_h_free}};


void qs_cache_init(void)
{
    qs_init_page();
    if (!qs_cache_lock) qs_cache_lock = PyThread_allocate_lock();
}

size_t qs_cache_page(void) { return qs_page; }

void *qs_cache_handler(void) { return &qs_handler; }
