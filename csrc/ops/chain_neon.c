/* NEON's HWC -> CHW path for the preprocessing chain's table walk (chain_impl.h's
 * lookup_all, as compiled in chain.c, calls it when the active instruction set is NEON):
 * vld3q splits 48 bytes of interleaved pixels into three channel vectors, so a frame's three
 * output rows come from one pass over x, whether each channel is a line (chain_impl.h's
 * chain_affine: a widening multiply-add and a shift per 4 codes, saturating narrows) or the
 * bytes are codes to transpose. */
#include <arm_neon.h>
#include <stddef.h>
#include <stdint.h>

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
