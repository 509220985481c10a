/* The kernel tables the C tests check (test_kernels.c, sweep_division.c), with the CPU
 * features each needs; the list ends with a NULL name. */
#ifndef QSIMD_TEST_TABLES_H
#define QSIMD_TEST_TABLES_H

#include "qsimd.h"
#include "kernels/kernels.h"

#if defined(QSIMD_TEST_HAVE_SIMDE)
extern const qk_table qk_avx512_simde_table;   /* avx512.c built on SIMDe's emulation */
#endif

typedef struct ctest_table {
    const char *name;
    const qk_table *t;
    unsigned needs;   /* QSIMD_CPU_* bits */
} ctest_table;

static const ctest_table ctest_tables[] = {
#if defined(QSIMD_HAVE_X86)
    {"sse41", &qk_sse41_table, QSIMD_CPU_SSE41},
    {"avx2", &qk_avx2_table,
     QSIMD_CPU_SSE41 | QSIMD_CPU_AVX2 | QSIMD_CPU_FMA | QSIMD_CPU_F16C | QSIMD_CPU_OS_AVX},
    {"avx512", &qk_avx512_table,
     QSIMD_CPU_AVX2 | QSIMD_CPU_F16C | QSIMD_CPU_OS_AVX | QSIMD_CPU_AVX512F |
         QSIMD_CPU_AVX512BW | QSIMD_CPU_AVX512DQ | QSIMD_CPU_AVX512VL | QSIMD_CPU_OS_AVX512},
#endif
#if defined(QSIMD_TEST_HAVE_SIMDE)
    /* emulated: needs the AVX2 + F16C the emulation is built with */
    {"avx512-simde", &qk_avx512_simde_table, QSIMD_CPU_AVX2 | QSIMD_CPU_F16C | QSIMD_CPU_OS_AVX},
#endif
#if defined(QSIMD_HAVE_NEON)
    {"neon", &qk_neon_table, QSIMD_CPU_NEON},
#endif
    {NULL, NULL, 0},
};

#endif
