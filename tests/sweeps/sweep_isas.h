/* The SIMD kernel tables this CPU can run, for the exhaustive sweeps against the scalar table
 * (sweep_float6.c, sweep_float8.c): AVX2 and AVX-512 on x86-64 (QSIMD_HAVE_X86), NEON on
 * aarch64 (QSIMD_HAVE_NEON). */
#ifndef QSIMD_SWEEP_ISAS_H
#define QSIMD_SWEEP_ISAS_H

#include "kernels.h"

typedef struct {
    const qk_table *t;
    const char *name;
} isa;

/* Fills isas (room for 2) and returns how many there are. */
static int sweep_isas(isa *isas)
{
    int nisa = 0;
#if defined(QSIMD_HAVE_X86)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        isas[nisa++] = (isa){&qk_avx2_table, "avx2"};
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
        isas[nisa++] = (isa){&qk_avx512_table, "avx512"};
#elif defined(QSIMD_HAVE_NEON)
    isas[nisa++] = (isa){&qk_neon_table, "neon"};
#endif
    return nisa;
}
#endif
