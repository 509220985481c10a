/* The preprocessing chain's loops (chain_impl.h) compiled for AVX2 with loop vectorisation:
 * the float32 operations eight at a time (divisions stay divisions: exact, as the scalar
 * loops), integer-to-float conversion and the table lookups. chain.c calls these only when
 * the active instruction set is AVX2 or AVX-512. */
#include "chain_impl.h"
#include "chain_avx2.h"

void qs_chain_gather_avx2(const chain_op *ops, int n_ops, const geom *g, int jc, const char *x,
                          int32_t xt, size_t o0, size_t o1, float *t)
{
    gather_chain(ops, n_ops, g, jc, x, xt, o0, o1, t);
}

void qs_chain_lookup_avx2(size_t esize, const geom *g, int jc, const unsigned char *tab,
                          size_t nv, int xbytes, const char *x, char *y)
{
    lookup_all(esize, g, jc, tab, nv, xbytes, x, y);
}
