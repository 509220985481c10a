/* NEON's HWC -> CHW paths of the preprocessing chain. The table walk's (chain_impl.h's
 * lookup_all, as compiled in chain.c, calls it when the active instruction set is NEON):
 * vld3q splits 48 bytes of interleaved pixels into three channel vectors, so a frame's three
 * output rows come from one pass over x, whether each channel is a line (chain_impl.h's
 * chain_affine: a widening multiply-add and a shift per 4 codes, saturating narrows) or the
 * bytes are codes to transpose. */
#include <arm_neon.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define CHAIN_TYPES_ONLY
#include "chain_impl.h"
#include "chain_neon.h"

/* 16 codes of one channel's line from 16 input bytes (xs, ys: constants of the caller's
 * loop, so each variant compiles without the tests) */
static inline uint8x16_t line16(uint8x16_t u, int16_t a, int32x4_t b, int32x4_t k, int xs,
                                int ys)
{
    if (xs) u = veorq_u8(u, vdupq_n_u8(0x80));
    int16x8_t lo = vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(u)));
    int16x8_t hi = vreinterpretq_s16_u16(vmovl_high_u8(u));
    int32x4_t q0 = vshlq_s32(vmlal_n_s16(b, vget_low_s16(lo), a), k);
    int32x4_t q1 = vshlq_s32(vmlal_high_n_s16(b, lo, a), k);
    int32x4_t q2 = vshlq_s32(vmlal_n_s16(b, vget_low_s16(hi), a), k);
    int32x4_t q3 = vshlq_s32(vmlal_high_n_s16(b, hi, a), k);
    int16x8_t w0 = vqmovn_high_s32(vqmovn_s32(q0), q1), w1 = vqmovn_high_s32(vqmovn_s32(q2), q3);
    if (ys) return vreinterpretq_u8_s8(vqmovn_high_s16(vqmovn_s16(w0), w1));
    return vqmovun_high_s16(vqmovun_s16(w0), w1);
}

/* As chain_avx2.c's frame3_avx2: y's axes ..., C = 3, H, W read from x's ..., H, W, C; with
 * tab every channel a line (f), without a transpose of codes. 0: not that layout. */
int qs_chain_frame3_neon(const geom *g, int jc, const chain_affine *f,
                         const unsigned char *tab, const uint8_t *x, uint8_t *y)
{
    size_t w, h, rows, plane;
    if (!frame3_layout(g, jc, f, tab, 16, &w, &h, &rows, &plane)) return 0;
    int32x4_t b0 = vdupq_n_s32(0), b1 = b0, b2 = b0, k0 = b0, k1 = b0, k2 = b0;
    int16_t a0 = 0, a1 = 0, a2 = 0;
    if (tab) {
        /* a negative count shifts right, arithmetically */
        a0 = (int16_t)f[0].a, b0 = vdupq_n_s32(f[0].b), k0 = vdupq_n_s32(-f[0].k);
        a1 = (int16_t)f[1].a, b1 = vdupq_n_s32(f[1].b), k1 = vdupq_n_s32(-f[1].k);
        a2 = (int16_t)f[2].a, b2 = vdupq_n_s32(f[2].b), k2 = vdupq_n_s32(-f[2].k);
    }
    for (size_t r = 0; r < rows; r++) {
        const uint8_t *xr = x + r * w * 3;
        uint8_t *y0 = y + r / h * 3 * plane + r % h * w, *y1 = y0 + plane, *y2 = y1 + plane;
        size_t i = 0;
#define CHUNKS(XS, YS)                                                                       \
        for (; i + 16 <= w; i += 16) {                                                       \
            uint8x16x3_t px = vld3q_u8(xr + 3 * i);                                          \
            vst1q_u8(y0 + i, line16(px.val[0], a0, b0, k0, XS, YS));                         \
            vst1q_u8(y1 + i, line16(px.val[1], a1, b1, k1, XS, YS));                         \
            vst1q_u8(y2 + i, line16(px.val[2], a2, b2, k2, XS, YS));                         \
        }
        if (!tab)
            for (; i + 16 <= w; i += 16) {
                uint8x16x3_t px = vld3q_u8(xr + 3 * i);
                vst1q_u8(y0 + i, px.val[0]);
                vst1q_u8(y1 + i, px.val[1]);
                vst1q_u8(y2 + i, px.val[2]);
            }
        else if (f->x_signed && f->y_signed) CHUNKS(1, 1)
        else if (f->x_signed) CHUNKS(1, 0)
        else if (f->y_signed) CHUNKS(0, 1)
        else CHUNKS(0, 0)
#undef CHUNKS
        for (; i < w; i++)
            for (int c = 0; c < 3; c++)
                y0[(size_t)c * plane + i] = tab ? tab[c * 256 + xr[3 * i + c]] : xr[3 * i + c];
    }
    return 1;
}

/* Float32 frames (chain_avx2.c's qs_chain_float3_avx2 on NEON): 16 pixels at a time, vld3q
 * splitting them into channel vectors, so every constant is one broadcast per channel. The
 * fast form where it holds (chain_fq.fast: F = x a + b in one rounding, its rounding kept when
 * every (F - rint F)^2 is at most lim2), else the chain and the quotient as defined: float32
 * operations one at a time, the IEEE quotient, rint, the zero point, the clamp. maxnm after
 * min takes NaN to qmin as the kernels do. Returns 0 when g or jc are not that layout. */
typedef struct f3n {
    float32x4_t a[3], b[3], s[3], zf[3], k[CHAIN_FQ_OPS][3], lo, hi;
    int32_t kind[CHAIN_FQ_OPS];
    int n_ops, fast, y_signed;
    float lim2;
} f3n;

static inline float32x4_t clamp_nan_lo(float32x4_t v, const f3n *e)
{
    return vmaxnmq_f32(vminq_f32(v, e->hi), e->lo);
}

static void float3_chunk_neon(const f3n *e, const float *p, uint8_t *y, size_t plane)
{
    float32x4x3_t v[4];
    int32x4_t c[3][4];
    for (int j = 0; j < 4; j++) v[j] = vld3q_f32(p + 12 * j);
    int done = 0;
    if (e->fast) {
        float32x4_t acc = vdupq_n_f32(0.0f);
        for (int ch = 0; ch < 3; ch++)
            for (int j = 0; j < 4; j++) {
                float32x4_t f = clamp_nan_lo(vfmaq_f32(e->b[ch], v[j].val[ch], e->a[ch]), e);
                float32x4_t r = vrndnq_f32(f), d = vsubq_f32(f, r);   /* exact */
                acc = vmaxq_f32(acc, vmulq_f32(d, d));
                c[ch][j] = vcvtq_s32_f32(r);
            }
        done = vmaxvq_f32(acc) <= e->lim2;
    }
    if (!done)
        for (int ch = 0; ch < 3; ch++)
            for (int j = 0; j < 4; j++) {
                float32x4_t t = v[j].val[ch];
                for (int i = 0; i < e->n_ops; i++) {
                    float32x4_t k = e->k[i][ch];
                    switch (e->kind[i]) {
                    case QSIMD_PRE_ADD: t = vaddq_f32(t, k); break;
                    case QSIMD_PRE_SUB: t = vsubq_f32(t, k); break;
                    case QSIMD_PRE_MUL: t = vmulq_f32(t, k); break;
                    default: t = vdivq_f32(t, k); break;
                    }
                }
                /* rint(q) + zp is exact below 2^24 and beyond the range above it */
                float32x4_t r = vaddq_f32(vrndnq_f32(vdivq_f32(t, e->s[ch])), e->zf[ch]);
                c[ch][j] = vcvtq_s32_f32(clamp_nan_lo(r, e));
            }
    for (int ch = 0; ch < 3; ch++) {
        int16x8_t w0 = vqmovn_high_s32(vqmovn_s32(c[ch][0]), c[ch][1]);
        int16x8_t w1 = vqmovn_high_s32(vqmovn_s32(c[ch][2]), c[ch][3]);
        uint8x16_t b = e->y_signed ? vreinterpretq_u8_s8(vqmovn_high_s16(vqmovn_s16(w0), w1))
                                   : vqmovun_high_s16(vqmovun_s16(w0), w1);
        vst1q_u8(y + (size_t)ch * plane, b);
    }
}

int qs_chain_float3_neon(const chain_op *ops, int n_ops, const geom *g, int jc,
                         const chain_fq *q, const float *x, uint8_t *y)
{
    size_t w, h, rows, plane;
    if (n_ops > CHAIN_FQ_OPS || !frame3_layout(g, -1, NULL, NULL, 1, &w, &h, &rows, &plane) ||
        (jc >= 0 && jc != g->nd - 3))
        return 0;
    f3n e;
    e.n_ops = n_ops;
    e.fast = q->fast;
    e.y_signed = q->y_signed;
    e.lim2 = q->lim2;
    e.lo = vdupq_n_f32(q->y_signed ? -128.0f : 0.0f);
    e.hi = vdupq_n_f32(q->y_signed ? 127.0f : 255.0f);
    for (int ch = 0; ch < 3; ch++) {
        e.a[ch] = vdupq_n_f32(q->a[ch]);
        e.b[ch] = vdupq_n_f32(q->b[ch]);
        e.s[ch] = vdupq_n_f32(q->s[ch]);
        e.zf[ch] = vdupq_n_f32((float)q->z[ch]);
        for (int i = 0; i < n_ops; i++)
            e.k[i][ch] = vdupq_n_f32(ops[i].count > 1 ? ops[i].v[ch] : ops[i].v[0]);
    }
    for (int i = 0; i < n_ops; i++) e.kind[i] = ops[i].kind;
    /* HWC images are contiguous runs of pixels in x and in each of y's planes */
    for (size_t img = 0; img < rows / h; img++) {
        const float *xi = x + img * 3 * plane;
        uint8_t *yi = y + img * 3 * plane;
        size_t i = 0;
        for (; i + 16 <= plane; i += 16) float3_chunk_neon(&e, xi + 3 * i, yi + i, plane);
        if (i < plane) {   /* the last pixels through a zero-padded chunk */
            float pad[48] = {0};
            uint8_t out[48];
            size_t m = plane - i;
            memcpy(pad, xi + 3 * i, 3 * m * sizeof(float));
            float3_chunk_neon(&e, pad, out, 16);
            for (int c = 0; c < 3; c++) memcpy(yi + (size_t)c * plane + i, out + 16 * c, m);
        }
    }
    return 1;
}
