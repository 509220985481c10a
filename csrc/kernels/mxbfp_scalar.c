/* MX / BFP quantize-dequantize, compiled for the scalar tier (flags in csrc/sources.txt):
 * the rules of kernels/mxbfp_impl.h element by element, which the vector kernels also call
 * for the few layouts they leave out (qk_mxbfp_scalar_cols). */
#define MXB_NAME qk_mxbfp_scalar
#define MXB_SCALES qk_mxscales_scalar
#define MXB_COLS qk_mxbfp_scalar_cols
#include "mxbfp_impl.h"
