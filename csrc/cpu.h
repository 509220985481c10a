/* Internal: the few atomic operations dispatch needs, for gcc/clang and MSVC. The values
 * stored are idempotent (every thread computes the same one), so plain acquire/release
 * loads and stores are enough: no locks, no compare-and-swap. */
#ifndef QSIMD_CPU_H
#define QSIMD_CPU_H

#if defined(_MSC_VER) && !defined(__clang__)
#include <intrin.h>
#define QSIMD_LOAD_PTR(p) ((void *)_InterlockedCompareExchangePointer((void *volatile *)&(p), NULL, NULL))
#define QSIMD_STORE_PTR(p, v) ((void)_InterlockedExchangePointer((void *volatile *)&(p), (void *)(v)))
#define QSIMD_LOAD_U32(p) ((unsigned)_InterlockedOr((volatile long *)&(p), 0))
#define QSIMD_STORE_U32(p, v) ((void)_InterlockedExchange((volatile long *)&(p), (long)(v)))
#else
#define QSIMD_LOAD_PTR(p) __atomic_load_n(&(p), __ATOMIC_ACQUIRE)
#define QSIMD_STORE_PTR(p, v) __atomic_store_n(&(p), (v), __ATOMIC_RELEASE)
#define QSIMD_LOAD_U32(p) __atomic_load_n(&(p), __ATOMIC_ACQUIRE)
#define QSIMD_STORE_U32(p, v) __atomic_store_n(&(p), (v), __ATOMIC_RELEASE)
#endif

#endif
