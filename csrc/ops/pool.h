/* The thread pool (parallel.c): splits [0, n) into pieces and runs them on up to `threads`
 * threads. It knows nothing of plans or types; where a piece may end is the caller's
 * business (the cut callback), so the pool sits below the operator layer. */
#ifndef QSIMD_OPS_POOL_H
#define QSIMD_OPS_POOL_H

#include <stddef.h>

/* Work on elements [a, b), the index-th piece (0.. in order). */
typedef void (*qs_piece_fn)(void *ctx, int index, size_t a, size_t b);
/* A place at or after `want` where a piece may end, or `limit` if none is near. */
typedef size_t (*qs_cut_fn)(const void *ctx, size_t want, size_t limit);

/* Calls fn(ctx, index, a, b) for consecutive pieces covering [0, n) on up to `threads`
 * threads (< 1: the process default; the caller's thread runs piece 0), ending pieces only
 * where cut() says. Returns the number of pieces (at most 64). */
int qs_pool_run(size_t n, int threads, qs_cut_fn cut, const void *cut_ctx, qs_piece_fn fn,
                void *ctx);
/* How many threads qs_pool_run would use for n elements. */
int qs_thread_count(size_t n, int threads);
/* Process-wide default thread count (qsimd_set_num_threads), at least 1. */
int qs_default_threads(void);
/* Orders the calling thread's non-temporal stores before its later stores: once at the end
 * of each piece of work of a streaming call (a fence per kernel run would stall on every
 * chunk of blocks). */
void qs_fence_streams(void);

#endif
