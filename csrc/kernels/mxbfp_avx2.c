/* MX / BFP quantize-dequantize, compiled for the avx2 tier (flags in csrc/sources.txt). */
#define MXB_NAME qk_mxbfp_avx2
#define MXB_SCALES qk_mxscales_avx2
#include "mxbfp_impl.h"
