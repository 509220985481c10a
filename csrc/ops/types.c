/* Errors and dtype facts the operators share: names, widths, integer ranges, element counts,
 * byte sizes, and whether a call is too large for the caches. */
#include "types.h"   /* first: it selects mingw's C99 stdio */

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int qs_fail(qsimd_error *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->code = code;
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
    }
    return code;
}

const char *qs_dtype_name(int32_t t)
{
    switch (t) {
    case QSIMD_FLOAT: return "float32";
    case QSIMD_UINT8: return "uint8";
    case QSIMD_INT8: return "int8";
    case QSIMD_UINT16: return "uint16";
    case QSIMD_INT16: return "int16";
    case QSIMD_INT32: return "int32";
    case QSIMD_FLOAT16: return "float16";
    case QSIMD_UINT32: return "uint32";
    case QSIMD_BFLOAT16: return "bfloat16";
    case QSIMD_FLOAT8E4M3FN: return "float8_e4m3fn";
    case QSIMD_FLOAT8E4M3FNUZ: return "float8_e4m3fnuz";
    case QSIMD_FLOAT8E5M2: return "float8_e5m2";
    case QSIMD_FLOAT8E5M2FNUZ: return "float8_e5m2fnuz";
    case QSIMD_UINT4: return "uint4";
    case QSIMD_INT4: return "int4";
    case QSIMD_FLOAT4E2M1: return "float4_e2m1fn";
    case QSIMD_FLOAT8E8M0: return "float8_e8m0fnu";
    case QSIMD_UINT2: return "uint2";
    case QSIMD_INT2: return "int2";
    case QSIMD_FLOAT6E2M3: return "float6_e2m3fn";
    case QSIMD_FLOAT6E3M2: return "float6_e3m2fn";
    default: return "unknown";
    }
}

const char *qs_shape_str(const qsimd_tensor *t, char *buf, size_t size)
{
    size_t k = 0;
    buf[0] = '\0';
    for (int i = 0; i < t->ndim && k < size; i++)   /* as Python prints a tuple: (3,) (2, 3) */
        k += (size_t)snprintf(buf + k, size - k, "%s%lld", i ? ", " : "",
                              (long long)t->shape[i]);
    if (k < size) snprintf(buf + k, size - k, "%s", t->ndim == 1 ? "," : "");
    return buf;
}

int qs_is_subbyte(int32_t t)
{
    return t == QSIMD_UINT4 || t == QSIMD_INT4 || t == QSIMD_UINT2 || t == QSIMD_INT2 ||
           t == QSIMD_FLOAT4E2M1 || t == QSIMD_FLOAT6E2M3 || t == QSIMD_FLOAT6E3M2;
}

unsigned qs_bits(int32_t t)
{
    switch (t) {
    case QSIMD_UINT2: case QSIMD_INT2: return 2;
    case QSIMD_UINT4: case QSIMD_INT4: case QSIMD_FLOAT4E2M1: return 4;
    case QSIMD_FLOAT6E2M3: case QSIMD_FLOAT6E3M2: return 6;
    case QSIMD_UINT8: case QSIMD_INT8: case QSIMD_FLOAT8E4M3FN: case QSIMD_FLOAT8E4M3FNUZ:
    case QSIMD_FLOAT8E5M2: case QSIMD_FLOAT8E5M2FNUZ: case QSIMD_FLOAT8E8M0: return 8;
    case QSIMD_UINT16: case QSIMD_INT16: case QSIMD_FLOAT16: case QSIMD_BFLOAT16: return 16;
    case QSIMD_FLOAT: case QSIMD_INT32: case QSIMD_UINT32: return 32;
    default: return 0;
    }
}

int qs_is_float8(int32_t t)
{
    return t == QSIMD_FLOAT8E4M3FN || t == QSIMD_FLOAT8E4M3FNUZ || t == QSIMD_FLOAT8E5M2 ||
           t == QSIMD_FLOAT8E5M2FNUZ;
}

int qs_int_range(int32_t t, int32_t *qmin, int32_t *qmax)
{
    switch (t) {
    case QSIMD_UINT8: *qmin = 0; *qmax = 255; return 1;
    case QSIMD_INT8: *qmin = -128; *qmax = 127; return 1;
    case QSIMD_UINT16: *qmin = 0; *qmax = 65535; return 1;
    case QSIMD_INT16: *qmin = -32768; *qmax = 32767; return 1;
    case QSIMD_UINT4: *qmin = 0; *qmax = 15; return 1;
    case QSIMD_INT4: *qmin = -8; *qmax = 7; return 1;
    case QSIMD_UINT2: *qmin = 0; *qmax = 3; return 1;
    case QSIMD_INT2: *qmin = -2; *qmax = 1; return 1;
    default: return 0;
    }
}

int qs_count(const qsimd_tensor *t, const char *name, size_t *n, qsimd_error *err)
{
    if (t->ndim < 0 || t->ndim > QSIMD_MAX_DIMS)
        return qs_fail(err, QSIMD_ERR_VALUE, "%s: rank must be between 0 and %d, got %d", name,
                       QSIMD_MAX_DIMS, (int)t->ndim);
    if (t->ndim > 0 && !t->shape)
        return qs_fail(err, QSIMD_ERR_VALUE, "%s: shape is NULL but the rank is %d", name,
                       (int)t->ndim);
    size_t c = 1;
    int zero = 0;
    for (int i = 0; i < t->ndim; i++) {
        int64_t d = t->shape[i];
        if (d < 0)
            return qs_fail(err, QSIMD_ERR_VALUE, "%s: dimension %d is negative (%lld)", name, i,
                           (long long)d);
        if (d == 0) { zero = 1; continue; }
        if ((uint64_t)d > (uint64_t)(SIZE_MAX / 8) / c)   /* keep byte counts representable */
            return qs_fail(err, QSIMD_ERR_VALUE, "%s: the shape has too many elements", name);
        c *= (size_t)d;
    }
    *n = zero ? 0 : c;
    return QSIMD_OK;
}

size_t qs_nbytes(int32_t dtype, int packed, size_t n)
{
    unsigned bits = qs_bits(dtype);
    if (bits < 8) return packed ? (n * bits + 7) / 8 : n;
    return n * (bits / 8);
}

int qs_stream(size_t in_bytes, size_t out_bytes)
{
    return in_bytes >= QS_STREAM_BYTES || out_bytes >= QS_STREAM_BYTES - in_bytes;
}
