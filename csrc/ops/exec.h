/* One elementwise operator call, described once and run (exec.c): QuantizeLinear and
 * DequantizeLinear fill a qs_exec and hand it over; exec.c walks the plan's runs, gives each
 * run its scale and zero-point entries and calls the kernel. The kernel pointer is the only
 * indirect call between the operator and the kernel; threads only when a call asks for them
 * and is large enough (parallel.c). */
#ifndef QSIMD_OPS_EXEC_H
#define QSIMD_OPS_EXEC_H

#include "params.h"
#include "plan.h"
#include "../kernels/kernels.h"

typedef struct qs_exec {
    const qs_plan *plan;
    const qs_psrc *src;       /* the entries, converted as kernels read them */
    const qs_params *kept;    /* or NULL: src's entries already converted (a prepared object) */
    qk_quant_fn quant;        /* QuantizeLinear's kernel, or NULL ... */
    qk_dequant_fn dequant;    /* ... DequantizeLinear's */
    qk_qparams qp;            /* the kernel's fixed parameters; exec.c sets the per-run ones
                               * (with .stream set, each piece fences its non-temporal stores) */
    qk_dparams dp;
    const char *x;
    char *y;
    size_t xsize, ysize;      /* bytes per element; 0 on the packed side */
    unsigned per_byte;        /* packed side: elements per group of bytes (0: none packed) */
    unsigned gbytes;          /* packed side: bytes per group (a byte; 6-bit: 3 bytes) */
} qs_exec;

/* Runs the call on up to `threads` threads (< 1: the process default). QSIMD_ERR_NOMEM when
 * the entries to convert at once cannot be allocated (nothing written then). */
int qs_execute(const qs_exec *e, int threads, qsimd_error *err);

#endif
