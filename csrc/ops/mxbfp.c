/* AMD Quark's MXQuantizeDequantize / BFPQuantizeDequantize: the slab loop over the outer
 * index, on the active instruction set's kernel (kernels/mxbfp.h). */
#include "../kernels/mxbfp.h"
#include "../dispatch.h"

static qk_mxbfp_fn mxbfp_kernel(void)
{
    const qk_table *t = qk_active();
#if defined(QSIMD_HAVE_X86) && !defined(QSIMD_NO_AVX512)
    if (t == &qk_avx512_table) return qk_mxbfp_avx512;
#endif
#if defined(QSIMD_HAVE_X86) && !defined(QSIMD_NO_AVX2)
    if (t == &qk_avx2_table) return qk_mxbfp_avx2;
#endif
#if defined(QSIMD_HAVE_X86) && !defined(QSIMD_NO_SSE41)
    if (t == &qk_sse41_table) return qk_mxbfp_sse41;
#endif
    (void)t;
    return qk_mxbfp_scalar;
}

void qsimd_mxbfp_run(const float *x, float *y, size_t outer, size_t len, size_t inner,
                     const qk_mxbfp *c, int threads)
{
    qk_mxbfp_fn fn = mxbfp_kernel();
    size_t slab = len * inner;
    (void)threads;
    for (size_t o = 0; o < outer; o++) fn(x + o * slab, y + o * slab, len, inner, c);
}
