/* AMD Quark's MXQuantizeDequantize / BFPQuantizeDequantize: the active instruction set's
 * kernel (kernels/mxbfp.h) over the tensor, on the thread pool for large inputs. */
#include "common.h"
#include "mxbfp.h"

static qk_mxbfp_fn mxbfp_kernel(void)
{
    const qk_table *t = qk_active();
#if defined(QSIMD_HAVE_X86) && !defined(QSIMD_NO_AVX512)
    if (t == &qk_avx512_table) return qk_mxbfp_avx512;
#endif
#if defined(QSIMD_HAVE_X86) && !defined(QSIMD_NO_AVX2)
    if (t == &qk_avx2_table) return qk_mxbfp_avx2;
#endif
    /* SSE4.1 (no AVX2) takes the scalar build: 18 KB of code for CPUs that rarely run it */
#if defined(QSIMD_HAVE_NEON)
    if (t == &qk_neon_table) return qk_mxbfp_neon;
#endif
    (void)t;
    return qk_mxbfp_scalar;
}

void qs_mxscales_run(const float *x, uint8_t *s, size_t outer, size_t len, size_t inner,
                        size_t block, int shift)
{
    const qk_table *t = qk_active();
    qk_mxscales_fn fn = qk_mxscales_scalar;
#if defined(QSIMD_HAVE_X86) && !defined(QSIMD_NO_AVX512)
    if (t == &qk_avx512_table) fn = qk_mxscales_avx512;
#endif
#if defined(QSIMD_HAVE_X86) && !defined(QSIMD_NO_AVX2)
    if (t == &qk_avx2_table) fn = qk_mxscales_avx2;
#endif
#if defined(QSIMD_HAVE_NEON)
    if (t == &qk_neon_table) fn = qk_mxscales_neon;
#endif
    (void)t;
    size_t nb = (len + block - 1) / block;
    for (size_t o = 0; o < outer; o++)
        fn(x + o * len * inner, s + o * nb * inner, len, inner, block, shift);
}

typedef struct {
    qk_mxbfp_fn fn;
    const float *x;
    float *y;
    size_t len, inner;
    const qk_mxbfp *c;
} mxbfp_job;

/* Elements [a, b): whole blocks of rows of one or more slabs (the cuts are block starts). */
static void mxbfp_piece(void *ctx, int index, size_t a, size_t b)
{
    const mxbfp_job *j = (const mxbfp_job *)ctx;
    size_t slab = j->len * j->inner;
    (void)index;
    while (a < b) {
        size_t base = a / slab * slab, end = base + slab < b ? base + slab : b;
        j->fn(j->x + a, j->y + a, (end - a) / j->inner, j->inner, j->c);
        a = end;
    }
}

void qs_mxbfp_run(const float *x, float *y, size_t outer, size_t len, size_t inner,
                     const qk_mxbfp *c, int threads)
{
    mxbfp_job j;
    qs_plan plan;
    if (outer == 0 || len == 0 || inner == 0) return;
    j.fn = mxbfp_kernel();
    j.x = x;
    j.y = y;
    j.len = len;
    j.inner = inner;
    j.c = c;
    /* cuts only where a block starts in its slab: the blocked plan over rows of len * inner
     * elements with blocks of block * inner */
    plan.kind = QS_BLOCKED;
    plan.outer = outer;
    plan.d = len * inner;
    plan.inner = 1;
    plan.n = outer * len * inner;
    plan.b = c->block < len ? c->block * inner : len * inner;
    plan.s = (len + c->block - 1) / c->block;
    plan.entries = outer * plan.s * inner;
    qs_parallel(&plan, threads, 1, mxbfp_piece, &j);
}
