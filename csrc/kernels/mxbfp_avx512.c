/* MX / BFP quantize-dequantize, compiled for the avx512 tier (flags in csrc/sources.txt). */
#define MXB_NAME qk_mxbfp_avx512
#define MXB_SCALES qk_mxscales_avx512
#include "mxbfp_impl.h"
