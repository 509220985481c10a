/* MX / BFP quantize-dequantize, compiled for the scalar tier (flags in csrc/sources.txt). */
#define MXB_NAME qk_mxbfp_scalar
#define MXB_SCALES qk_mxscales_scalar
#include "mxbfp_impl.h"
