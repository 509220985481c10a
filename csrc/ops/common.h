/* What every operator file includes: errors and dtype facts (types.h), the granularity plan
 * and its thread-pool driver (plan.h), the parameter widening (params.h), and the kernel
 * tables (dispatch.h). Each of those depends only on the ones before it. */
#ifndef QSIMD_OPS_COMMON_H
#define QSIMD_OPS_COMMON_H

#include "types.h"
#include "plan.h"
#include "params.h"
#include "../dispatch.h"

#endif
