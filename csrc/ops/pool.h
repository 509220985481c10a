/* The thread pool (parallel.c): splits a plan's elements into pieces and runs them on up to
 * `threads` threads. It reads the plan only to know where a piece may end
 * (qs_next_cut); nothing below it calls back up except the piece function it is given. */
#ifndef QSIMD_OPS_POOL_H
#define QSIMD_OPS_POOL_H

#include <stddef.h>

#include "plan.h"

/* Work on elements [a, b), the index-th piece (0.. in order). */
typedef void (*qs_piece_fn)(void *ctx, int index, size_t a, size_t b);

/* Calls fn(ctx, index, a, b) for consecutive pieces covering the plan's elements on up to
 * `threads` threads (< 1: the process default; the caller's thread runs piece 0), ending
 * pieces only at valid cuts (whole packed groups of per_byte elements). Returns the number
 * of pieces (at most 64). */
int qs_parallel(const qs_plan *plan, int threads, unsigned per_byte, qs_piece_fn fn, void *ctx);
/* How many threads qs_parallel would use for n elements. */
int qs_thread_count(size_t n, int threads);
/* Process-wide default thread count (qsimd_set_num_threads), at least 1. */
int qs_default_threads(void);
/* Orders the calling thread's non-temporal stores before its later stores: once at the end
 * of each piece of work of a streaming call (a fence per kernel run would stall on every
 * chunk of blocks). */
void qs_fence_streams(void);
/* One process-wide lock for objects that fill in a cache on first use (a prepared chain's
 * tables for 16-bit inputs). */
void qs_lazy_lock(void);
void qs_lazy_unlock(void);

#endif
