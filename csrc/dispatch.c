/* The single dispatch point: which kernel table serves the process.
 * Chosen on first use from the CPU features (or QSIMD_ISA), changeable with qsimd_set_isa().
 * Tables are immutable; only one pointer changes, atomically. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(_WIN32)
#include <windows.h>
#else
#include <pthread.h>
#endif

#include "qsimd.h"
#include "cpu.h"
#include "dispatch.h"

typedef struct isa_entry {
    const char *name;
    const qk_table *table;
    unsigned needs;   /* QSIMD_CPU_* bits that must all be present */
} isa_entry;

/* Best last. Only the current architecture's tables are compiled in; a build may leave
 * single x86 tiers out (QSIMD_NO_SSE41 / _AVX2 / _AVX512: CMake's QSIMD_ENABLE_* options). */
static const isa_entry isas[] = {
    {"scalar", &qk_scalar_table, 0},
#if defined(QSIMD_HAVE_X86) && !defined(QSIMD_NO_SSE41)
    {"sse41", &qk_sse41_table, QSIMD_CPU_SSE41},
#endif
#if defined(QSIMD_HAVE_X86) && !defined(QSIMD_NO_AVX2)
    {"avx2", &qk_avx2_table,
     QSIMD_CPU_SSE41 | QSIMD_CPU_AVX2 | QSIMD_CPU_FMA | QSIMD_CPU_F16C | QSIMD_CPU_OS_AVX},
#endif
#if defined(QSIMD_HAVE_X86) && !defined(QSIMD_NO_AVX512)
    {"avx512", &qk_avx512_table,
     QSIMD_CPU_SSE41 | QSIMD_CPU_AVX2 | QSIMD_CPU_FMA | QSIMD_CPU_F16C | QSIMD_CPU_OS_AVX |
         QSIMD_CPU_AVX512F | QSIMD_CPU_AVX512BW | QSIMD_CPU_AVX512DQ | QSIMD_CPU_AVX512VL |
         QSIMD_CPU_OS_AVX512},
#endif
#if defined(QSIMD_HAVE_NEON)
    {"neon", &qk_neon_table, QSIMD_CPU_NEON},
#endif
};
#define N_ISAS (sizeof isas / sizeof isas[0])

static const char *const isa_names[] = {
    "scalar",
#if defined(QSIMD_HAVE_X86) && !defined(QSIMD_NO_SSE41)
    "sse41",
#endif
#if defined(QSIMD_HAVE_X86) && !defined(QSIMD_NO_AVX2)
    "avx2",
#endif
#if defined(QSIMD_HAVE_X86) && !defined(QSIMD_NO_AVX512)
    "avx512",
#endif
#if defined(QSIMD_HAVE_NEON)
    "neon",
#endif
    NULL};

static const qk_table *active = NULL;
static char env_error[160];   /* written once, by init_from_env() */

const char *const *qsimd_isa_names(void) { return isa_names; }

static const isa_entry *find(const char *name)
{
    for (size_t i = 0; i < N_ISAS; i++)
        if (strcmp(isas[i].name, name) == 0) return &isas[i];
    return NULL;
}

static int runnable(const isa_entry *e)
{
    return (qsimd_cpu_features() & e->needs) == e->needs;
}

static const qk_table *best(void)
{
    for (size_t i = N_ISAS; i-- > 0;)
        if (runnable(&isas[i])) return isas[i].table;
    return &qk_scalar_table;
}

int qsimd_isa_available(const char *name)
{
    const isa_entry *e = name ? find(name) : NULL;
    return e != NULL && runnable(e);
}

static void set_error(qsimd_error *err, int code, const char *fmt, const char *name)
{
    if (!err) return;
    err->code = code;
    snprintf(err->message, sizeof err->message, fmt, name);
}

static int choose(const char *name, const qk_table **out, qsimd_error *err)
{
    if (name == NULL || name[0] == '\0') { *out = best(); return QSIMD_OK; }
    const isa_entry *e = find(name);
    if (!e) {
        set_error(err, QSIMD_ERR_VALUE,
                  "unknown instruction set '%.40s' (known: scalar, sse41, avx2, avx512, neon)",
                  name);
        return QSIMD_ERR_VALUE;
    }
    if (!runnable(e)) {
        set_error(err, QSIMD_ERR_UNAVAILABLE, "this CPU cannot run instruction set '%.40s'",
                  name);
        return QSIMD_ERR_UNAVAILABLE;
    }
    *out = e->table;
    return QSIMD_OK;
}

/* First use: QSIMD_ISA forces a tier; an unusable value falls back to the best tier and is
 * reported by qsimd_env_isa_error() (the Python module raises it at import). Run exactly
 * once: concurrent first calls must not write env_error together, and a qsimd_set_isa()
 * made meanwhile must not be overwritten by this default. */
static void init_from_env(void)
{
    const qk_table *t = NULL;
    qsimd_error err;
    const char *env = getenv("QSIMD_ISA");
    if (env && env[0] && choose(env, &t, &err) != QSIMD_OK) {
        snprintf(env_error, sizeof env_error, "QSIMD_ISA=%.40s: %.100s", env, err.message);
        t = best();
    } else if (!env || !env[0]) {
        t = best();
    }
    QSIMD_STORE_PTR(active, t);
}

#if defined(_WIN32)
static INIT_ONCE init_once = INIT_ONCE_STATIC_INIT;
static BOOL CALLBACK init_cb(PINIT_ONCE once, PVOID param, PVOID *context)
{
    (void)once; (void)param; (void)context;
    init_from_env();
    return TRUE;
}
static void ensure_init(void) { InitOnceExecuteOnce(&init_once, init_cb, NULL, NULL); }
#else
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static void ensure_init(void) { pthread_once(&init_once, init_from_env); }
#endif

const qk_table *qk_active(void)
{
    const qk_table *t = QSIMD_LOAD_PTR(active);
    if (t) return t;
    ensure_init();
    return QSIMD_LOAD_PTR(active);
}

const char *qsimd_env_isa_error(void)
{
    ensure_init();   /* env_error is complete once this returns */
    return env_error[0] ? env_error : NULL;
}

const char *qsimd_get_isa(void) { return qk_active()->name; }

int qsimd_set_isa(const char *name, qsimd_error *err)
{
    const qk_table *t;
    int rc = choose(name, &t, err);
    if (rc == QSIMD_OK) {
        ensure_init();   /* the lazy default can no longer replace this choice */
        QSIMD_STORE_PTR(active, t);
    }
    return rc;
}

qk_quant_fn qk_get_quant(const qk_table *t, int xk, int qk, int yk)
{
    for (; t; t = t->base)
        if (t->quant[xk][qk][yk]) return t->quant[xk][qk][yk];
    return qk_scalar_table.quant[xk][qk][yk];
}

qk_dequant_fn qk_get_dequant(const qk_table *t, int dk, int ok)
{
    for (; t; t = t->base)
        if (t->dequant[dk][ok]) return t->dequant[dk][ok];
    return qk_scalar_table.dequant[dk][ok];
}

qk_minmax_fn qk_get_minmax(const qk_table *t)
{
    return t->minmax_f32 ? t->minmax_f32 : qk_scalar_table.minmax_f32;
}

qk_recip_fn qk_get_recip(const qk_table *t)
{
    return t->recip_f32 ? t->recip_f32 : qk_scalar_table.recip_f32;
}

qk_widen_fn qk_get_widen(const qk_table *t)
{
    return t->widen_zp ? t->widen_zp : qk_scalar_table.widen_zp;
}

qk_minmax_cols_fn qk_get_minmax_cols(const qk_table *t)
{
    return t->minmax_cols ? t->minmax_cols : qk_scalar_table.minmax_cols;
}

qk_minmax_groups_fn qk_get_minmax_groups(const qk_table *t)
{
    return t->minmax_groups ? t->minmax_groups : qk_scalar_table.minmax_groups;
}

const char *qsimd_version(void) { return QSIMD_VERSION_STRING; }
