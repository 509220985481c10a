/* The allocator of large results (qsimd/_result_cache.c), for _core.pyx. */
#ifndef QSIMD_RESULT_CACHE_H
#define QSIMD_RESULT_CACHE_H
#include <stddef.h>

#define QS_CACHE_MIN ((size_t)1 << 20)   /* smaller results come from NumPy's own allocator */
#define QS_CACHE_SLOTS 2                 /* blocks kept at most */

void qs_cache_init(void);                /* once, at import: the lock and the page size */
void qs_cache_set_limit(size_t limit);   /* frees the blocks kept; then keeps <= limit bytes */
size_t qs_cache_get_limit(void);
int qs_cache_sizes(size_t *sizes);       /* the kept blocks' sizes (QS_CACHE_SLOTS at most) */
size_t qs_cache_page(void);              /* the page size madvise aligns to */
void *qs_cache_handler(void);            /* the PyDataMem_Handler, for a "mem_handler" capsule */
#endif
