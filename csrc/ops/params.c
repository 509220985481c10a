/* Scales and zero points widened into the arrays the kernels read: all at once where entries
 * are reused, a chunk at a time just before their runs for blocks along the last axis. */
#include "params.h"

#include <stdlib.h>
#include <string.h>

#include "../dispatch.h"
#include "../kernels/convert.h"
#include "../kernels/kernels.h"

/* Entries [e0, e0 + m) into the given arrays (NULL: not wanted). Each type has its own loop
 * so the common ones vectorise. */
static void convert_scales(const qs_psrc *src, size_t e0, size_t m, float *f, double *f64)
{
    const void *d = src->scale->data;
    size_t i;
    switch (src->scale->dtype) {
    case QSIMD_FLOAT16:
        for (i = 0; i < m; i++) f[i] = qk_f16_to_f32(((const uint16_t *)d)[e0 + i]);
        break;
    case QSIMD_BFLOAT16:
        for (i = 0; i < m; i++) f[i] = qk_bf16_to_f32(((const uint16_t *)d)[e0 + i]);
        break;
    case QSIMD_FLOAT8E8M0:
        for (i = 0; i < m; i++) f[i] = qk_e8m0_to_f32(((const uint8_t *)d)[e0 + i]);
        break;
    case QSIMD_INT32:   /* to float32 rounding to nearest even, as numpy's astype */
        for (i = 0; i < m; i++) f[i] = (float)((const int32_t *)d)[e0 + i];
        if (f64)   /* the exact value for a float64 quotient */
            for (i = 0; i < m; i++) f64[i] = (double)((const int32_t *)d)[e0 + i];
        break;
    default:   /* float32; the operators accept no other scale type */
        memcpy(f, (const float *)d + e0, m * sizeof(float));
        break;
    }
    if (f64 && src->scale->dtype != QSIMD_INT32)   /* exact: every other type fits float32 */
        for (i = 0; i < m; i++) f64[i] = f[i];
    if (src->qk == QK_Q_F16)
        for (i = 0; i < m; i++) f[i] = qk_round_f16(f[i]);
    else if (src->qk == QK_Q_BF16)
        for (i = 0; i < m; i++) f[i] = qk_round_bf16(f[i]);
}

static void convert_zps(const qs_psrc *src, size_t e0, size_t m, int32_t *z, int64_t *z64,
                        float *zf)
{
    const qsimd_tensor *t = src->zp;
    const void *d = t->data;
    size_t i;
    if (zf) for (i = 0; i < m; i++) zf[i] = 0.0f;
    /* (8- and 16-bit zero points in the active instruction set's vectors: a zero point per
     * block of 32 elements) */
    switch (t->dtype) {
    case QSIMD_UINT8: case QSIMD_INT8: case QSIMD_UINT16: case QSIMD_INT16: {
        int w = t->dtype == QSIMD_UINT16 || t->dtype == QSIMD_INT16;
        qk_get_widen(qk_active())((const char *)d + e0 * (w ? 2u : 1u), z, m,
                                  w ? QK_D_B16 : QK_D_B8,
                                  t->dtype == QSIMD_INT8 || t->dtype == QSIMD_INT16, w ? 16 : 8);
        break;
    }
    case QSIMD_INT32: memcpy(z, (const int32_t *)d + e0, m * sizeof(int32_t)); break;
    case QSIMD_UINT32:   /* the int32 copy saturates; 32-bit kernels read z64 */
        for (i = 0; i < m; i++) {
            uint32_t v = ((const uint32_t *)d)[e0 + i];
            z[i] = v > (uint32_t)INT32_MAX ? INT32_MAX : (int32_t)v;
        }
        break;
    case QSIMD_UINT4: case QSIMD_INT4: case QSIMD_UINT2: case QSIMD_INT2:
    case QSIMD_FLOAT4E2M1: {
        /* packed or one per byte; high bits of an unpacked byte are ignored */
        unsigned bits = qs_bits(t->dtype), lp = bits == 4 ? 1u : 2u;   /* log2 per byte */
        uint32_t mask = (1u << bits) - 1u;
        int sgn = t->dtype == QSIMD_INT4 || t->dtype == QSIMD_INT2;
        i = 0;
        if (!t->packed && t->dtype != QSIMD_FLOAT4E2M1) {   /* one per byte: in vectors */
            qk_get_widen(qk_active())((const uint8_t *)d + e0, z, m, QK_D_B8, sgn, bits);
            i = m;
        } else if (t->packed && bits == 4 && t->dtype != QSIMD_FLOAT4E2M1 && e0 % 2 == 0) {
            /* both nibbles of a byte per step (int4 blocks of 32 over rows of 7: 28,672 zero
             * points a call), the sign by (c ^ 8) - 8 */
            const uint8_t *b = (const uint8_t *)d + e0 / 2;
            int32_t sx = sgn ? 8 : 0;
            for (; i + 2 <= m; i += 2) {
                int32_t c = b[i / 2];
                z[i] = ((c & 15) ^ sx) - sx;
                z[i + 1] = ((c >> 4) ^ sx) - sx;
            }
        }
        for (; i < m; i++) {   /* (shifts, not a division per entry: 2.5x faster) */
            size_t e = e0 + i;
            uint32_t c = t->packed ? (((const uint8_t *)d)[e >> lp] >>
                                      ((e & ((1u << lp) - 1u)) * bits)) & mask
                                   : ((const uint8_t *)d)[e] & mask;
            if (t->dtype == QSIMD_FLOAT4E2M1) {
                z[i] = 0;
                if (zf) zf[i] = qk_fp_to_f32((uint8_t)c, QK_FP_E2M1);
            } else {
                z[i] = sgn ? (int32_t)c - (int32_t)((c << 1) & (mask + 1u)) : (int32_t)c;
            }
        }
        break;
    }
    case QSIMD_FLOAT16: case QSIMD_BFLOAT16:
        for (i = 0; i < m; i++) {
            uint16_t h = ((const uint16_t *)d)[e0 + i];
            z[i] = 0;
            if (zf) zf[i] = t->dtype == QSIMD_FLOAT16 ? qk_f16_to_f32(h) : qk_bf16_to_f32(h);
        }
        break;
    default:   /* float8: zero (qs_params_check) */
        for (i = 0; i < m; i++) z[i] = 0;
        break;
    case QSIMD_FLOAT6E2M3: case QSIMD_FLOAT6E3M2: {
        int fmt = t->dtype == QSIMD_FLOAT6E2M3 ? QK_FP_E2M3 : QK_FP_E3M2;
        for (i = 0; i < m; i++) {
            size_t e = e0 + i;
            uint8_t c = t->packed ? (uint8_t)qk_get6((const uint8_t *)d + e / 4 * 3,
                                                     (unsigned)(e % 4))
                                  : ((const uint8_t *)d)[e];
            z[i] = 0;
            if (zf) zf[i] = qk_fp_to_f32(c, fmt);   /* the low 6 bits */
        }
        break;
    }
    }
    if (z64) {
        if (t->dtype == QSIMD_UINT32)
            for (i = 0; i < m; i++) z64[i] = ((const uint32_t *)d)[e0 + i];
        else
            for (i = 0; i < m; i++) z64[i] = z[i];
    }
}

int qs_params_check(const qs_psrc *src, qsimd_error *err)
{
    switch (src->scale->dtype) {
    case QSIMD_FLOAT: case QSIMD_FLOAT16: case QSIMD_BFLOAT16: case QSIMD_INT32:
    case QSIMD_FLOAT8E8M0: break;
    default:
        return qs_fail(err, QSIMD_ERR_TYPE, "scale must be float32, float16, bfloat16, int32 "
                       "or float8_e8m0fnu, got %s", qs_dtype_name(src->scale->dtype));
    }
    const qsimd_tensor *t = src->zp;
    if (!t) return QSIMD_OK;
    if (qs_is_float8(t->dtype)) {
        /* ONNX: a float8 zero point must be zero (+0 or -0; fnuz 0x80 is NaN) */
        int fnuz = t->dtype == QSIMD_FLOAT8E4M3FNUZ || t->dtype == QSIMD_FLOAT8E5M2FNUZ;
        for (size_t i = 0; i < src->entries; i++) {
            uint8_t c = ((const uint8_t *)t->data)[i];
            if (fnuz ? c != 0 : (c & 0x7f) != 0)
                return qs_fail(err, QSIMD_ERR_VALUE, "zero_point must be zero for float8 type "
                               "%s (entry %zu is not)", qs_dtype_name(t->dtype), i);
        }
        return QSIMD_OK;
    }
    switch (t->dtype) {
    case QSIMD_UINT8: case QSIMD_INT8: case QSIMD_UINT16: case QSIMD_INT16: case QSIMD_INT32:
    case QSIMD_UINT32: case QSIMD_UINT4: case QSIMD_INT4: case QSIMD_UINT2: case QSIMD_INT2:
    case QSIMD_FLOAT4E2M1: case QSIMD_FLOAT16: case QSIMD_BFLOAT16: case QSIMD_FLOAT6E2M3:
    case QSIMD_FLOAT6E3M2:
        return QSIMD_OK;
    default:
        return qs_fail(err, QSIMD_ERR_TYPE, "zero_point of type %s is not supported",
                       qs_dtype_name(t->dtype));
    }
}

/* Whether entries [e0, e0 + m) of an integer zero-point tensor are all 0: every byte holding
 * them is (a nonzero neighbour in a shared byte, or an ignored high bit, only answers no). */
static int zps_zero(const qsimd_tensor *t, size_t e0, size_t m)
{
    size_t bits = qs_bits(t->dtype), a, b;
    switch (t->dtype) {
    case QSIMD_UINT8: case QSIMD_INT8: case QSIMD_UINT16: case QSIMD_INT16: case QSIMD_INT32:
    case QSIMD_UINT32: case QSIMD_UINT4: case QSIMD_INT4: case QSIMD_UINT2: case QSIMD_INT2:
        break;
    default:
        return 0;
    }
    if (bits < 8 && t->packed) {
        a = e0 * bits / 8;
        b = ((e0 + m) * bits + 7) / 8;
    } else {
        size_t w = bits < 8 ? 1 : bits / 8;
        a = e0 * w;
        b = (e0 + m) * w;
    }
    const unsigned char *d = (const unsigned char *)t->data;
    uint64_t v;
    for (; a + 8 <= b; a += 8) {   /* (out at the first nonzero: usually the first word) */
        memcpy(&v, d + a, 8);
        if (v) return 0;
    }
    for (; a < b; a++)
        if (d[a]) return 0;
    return 1;
}

/* Converts [e0, e0 + m) into the arrays at base (m entries each), or points pp at the scale
 * tensor itself when it needs no conversion. */
static void convert_into(const qs_psrc *src, size_t e0, size_t m, qs_params *pp, float *fb,
                         double *f64b, int32_t *zb, int64_t *z64b, float *zfb, float *rb)
{
    int f64 = (src->need & QS_NEED_SCALE64) != 0;
    if (src->scale->dtype == QSIMD_FLOAT && src->qk == QK_Q_F32 && !f64) {
        pp->scale = (const float *)src->scale->data + e0;   /* already what kernels read */
    } else {
        convert_scales(src, e0, m, fb, f64 ? f64b : NULL);
        pp->scale = fb;
    }
    pp->scale64 = f64 ? f64b : NULL;
    pp->rscale = NULL;
    /* 1/s for every entry when the kernels want reciprocals, with one flag for the range of
     * qk_recip, and whether some scale's sign bit is set (-0 and negative NaNs too: they
     * only cost the scalar kernel, which handles every scale); in the active instruction
     * set's vectors (a call with many entries spends much of its time here) */
    {
        float *rb_ = (src->need & QS_NEED_RSCALE) ? rb : NULL;
        unsigned fl = qk_get_recip(qk_active())(pp->scale, rb_, m);
        /* kernels read a non-NULL rscale as "every entry may use the reciprocal form" */
        pp->rscale = rb_ && !(fl & QK_RECIP_OUT) ? rb_ : NULL;
        pp->negs = (fl & QK_RECIP_NEG) != 0;
    }
    pp->zp = NULL;
    pp->zp64 = NULL;
    pp->zpf = NULL;
    /* integer zero points that are all 0 (exporters write them for symmetric quantization)
     * read as none: the kernels then load and permute none */
    int z64 = (src->need & QS_NEED_ZP64) != 0, zf = (src->need & QS_NEED_ZPF) != 0;
    if (src->zp && (z64 || zf || !zps_zero(src->zp, e0, m))) {
        convert_zps(src, e0, m, zb, z64 ? z64b : NULL, zf ? zfb : NULL);
        pp->zp = zb;
        pp->zp64 = z64 ? z64b : NULL;
        pp->zpf = zf ? zfb : NULL;
    }
    pp->first = e0;
    pp->count = m;
}

/* Which arrays convert_into writes for src: 8-byte scales and zero points, converted float32
 * scales, int32 / float zero points, reciprocals. */
typedef struct forms { int f64, z64, conv, z, zf, rs; } forms;

static forms forms_of(const qs_psrc *src)
{
    forms f;
    f.f64 = (src->need & QS_NEED_SCALE64) != 0;
    f.conv = src->scale->dtype != QSIMD_FLOAT || src->qk != QK_Q_F32 || f.f64;
    f.z = src->zp != NULL;
    f.z64 = f.z && (src->need & QS_NEED_ZP64);
    f.zf = f.z && (src->need & QS_NEED_ZPF);
    f.rs = (src->need & QS_NEED_RSCALE) != 0;
    return f;
}

/* Bytes per entry of those arrays (laid out by carve_convert). */
static size_t entry_bytes(const qs_psrc *src)
{
    forms f = forms_of(src);
    return (size_t)(f.f64 + f.z64) * 8 + (size_t)(f.conv + f.z + f.zf + f.rs) * 4;
}

size_t qs_params_room(const qs_psrc *src)
{
    size_t per = entry_bytes(src);
    return per ? QS_PARAM_POOL / per : QS_PARAM_POOL;
}

/* Converts entries [e0, e0 + na) into m (entry_bytes(src) * na bytes, 8-aligned): the 8-byte
 * arrays first, each array only when it will be written. */
static void carve_convert(const qs_psrc *src, size_t e0, size_t na, char *m, qs_params *pp)
{
    forms fo = forms_of(src);
    int f64 = fo.f64, z64 = fo.z64, conv = fo.conv, z = fo.z, zf = fo.zf, rs = fo.rs;
    double *f64b = f64 ? (double *)m : NULL;
    int64_t *z64b = z64 ? (int64_t *)(m + (size_t)f64 * 8 * na) : NULL;
    char *m4 = m ? m + (size_t)(f64 + z64) * 8 * na : NULL;   /* NULL + 0 is undefined */
    float *fb = conv ? (float *)m4 : NULL;
    int32_t *zb = z ? (int32_t *)(m4 + (size_t)conv * 4 * na) : NULL;
    float *zfb = zf ? (float *)(m4 + (size_t)(conv + z) * 4 * na) : NULL;
    float *rb = rs ? (float *)(m4 + (size_t)(conv + z + zf) * 4 * na) : NULL;
    convert_into(src, e0, na, pp, fb, f64b, zb, z64b, zfb, rb);
}

void qs_params_fetch(const qs_psrc *src, size_t e, size_t m, qs_params *pp)
{
    if (pp->count && e >= pp->first && e + m <= pp->first + pp->count) return;
    size_t room = qs_params_room(src);
    carve_convert(src, e, src->entries - e < room ? src->entries - e : room, (char *)pp->pool, pp);
}

int qs_params_all(const qs_psrc *src, qs_params *pp, qsimd_error *err)
{
    size_t n = src->entries, per = entry_bytes(src);
    pp->heap = NULL;
    if (n <= qs_params_room(src)) {
        carve_convert(src, 0, n, (char *)pp->pool, pp);
        return QSIMD_OK;
    }
    if (per && n > SIZE_MAX / per) return qs_fail(err, QSIMD_ERR_NOMEM, "too many scale entries");
    char *m = (char *)malloc(n * per);
    if (!m) return qs_fail(err, QSIMD_ERR_NOMEM, "out of memory for %zu scale entries", n);
    pp->heap = m;
    carve_convert(src, 0, n, m, pp);
    return QSIMD_OK;
}

qs_pkept *qs_params_keep(const qs_psrc *src)
{
    size_t per = entry_bytes(src);
    if (per && src->entries > QS_KEPT_MAX / per) return NULL;
    qs_pkept *k = (qs_pkept *)malloc(sizeof *k);
    if (!k) return NULL;
    qsimd_error err;
    if (qs_params_all(src, &k->pp, &err) != QSIMD_OK) {
        free(k);
        return NULL;
    }
    k->qk = src->qk;
    k->need = src->need;
    k->has_zp = src->zp != NULL;
    k->entries = src->entries;
    return k;
}

const qs_params *qs_params_kept(const qs_pkept *k, const qs_psrc *src)
{
    /* without a zero point, the zero-point forms asked for are not made either way */
    unsigned zforms = QS_NEED_ZP64 | QS_NEED_ZPF, mask = src->zp ? ~0u : ~zforms;
    if (!k || k->qk != src->qk || k->has_zp != (src->zp != NULL) ||
        k->entries != src->entries || (k->need & mask) != (src->need & mask))
        return NULL;
    return &k->pp;
}

void qs_params_unkeep(qs_pkept *k)
{
    if (k) free(k->pp.heap);
    free(k);
}
