/* MX / BFP quantize-dequantize, compiled for the neon tier (flags in csrc/sources.txt). */
#define MXB_NAME qk_mxbfp_neon
#define MXB_SCALES qk_mxscales_neon
#include "mxbfp_impl.h"
