/* MX / BFP quantize-dequantize, compiled for the sse41 tier (flags in csrc/sources.txt). */
#define MXB_NAME qk_mxbfp_sse41
#define MXB_SCALES qk_mxscales_sse41
#include "mxbfp_impl.h"
