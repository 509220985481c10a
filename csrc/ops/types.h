/* Errors and dtype facts shared by the operators (types.c). */
#ifndef QSIMD_OPS_TYPES_H
#define QSIMD_OPS_TYPES_H

/* mingw's default MSVCRT printf lacks %zu: use its C99-conforming stdio instead */
#if defined(__MINGW32__) && !defined(__USE_MINGW_ANSI_STDIO)
#define __USE_MINGW_ANSI_STDIO 1
#endif
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "qsimd.h"

#if defined(__MINGW32__)
#define QS_PRINTF_FORMAT __MINGW_PRINTF_FORMAT
#else
#define QS_PRINTF_FORMAT printf
#endif

int qs_fail(qsimd_error *err, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(QS_PRINTF_FORMAT, 3, 4)))
#endif
    ;

const char *qs_dtype_name(int32_t dtype);
/* QuantizeLinear's output types, for the message refusing another (which must fit
 * qsimd_error's 256 bytes with any type's name) */
#define QS_Q_OUTPUT_NAMES "uint8, int8, uint16, int16, uint4, int4, uint2, int2, " \
    "float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz, float4_e2m1fn, " \
    "float6_e2m3fn, float6_e3m2fn, int32, uint32, float16 or bfloat16"
/* A tensor's shape as Python prints a tuple, without the parentheses ("3," "2, 3" ""):
 * messages name the shapes they compare. */
#define QS_SHAPE_CHARS 128
const char *qs_shape_str(const qsimd_tensor *t, char *buf, size_t size);
int qs_is_subbyte(int32_t dtype);            /* 4- and 2-bit types */
unsigned qs_bits(int32_t dtype);             /* element width in bits (0: unknown) */
int qs_int_range(int32_t dtype, int32_t *qmin, int32_t *qmax);   /* 0: not an int type <= 16 bit */

/* Element count of a tensor, checking ndim, negative dims and overflow. */
int qs_count(const qsimd_tensor *t, const char *name, size_t *n, qsimd_error *err);
/* Bytes a tensor's data occupies (packed sub-byte types: ceil). */
size_t qs_nbytes(int32_t dtype, int packed, size_t n);

/* Calls whose input and output together take at least this many bytes would not stay in the
 * caches: the kernels may write them with non-temporal stores (qk_qparams.stream). */
#define QS_STREAM_BYTES ((size_t)32 << 20)
int qs_stream(size_t in_bytes, size_t out_bytes);
int qs_is_float8(int32_t dtype);             /* the four float8 types (not e8m0) */

#endif
