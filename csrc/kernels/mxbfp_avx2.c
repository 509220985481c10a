/* MX / BFP quantize-dequantize, compiled for the avx2 tier (flags in csrc/sources.txt). */
#define MXB_NAME qk_mxbfp_avx2
#include "mxbfp_impl.h"
