/* What every operator file includes: errors and dtype facts (types.h), the granularity plan
 * (plan.h), the thread pool over a plan (pool.h), the parameter widening (params.h), the
 * elementwise run loop (exec.h) and the kernel tables (dispatch.h). Each of those depends
 * only on ones before it. */
#ifndef QSIMD_OPS_COMMON_H
#define QSIMD_OPS_COMMON_H

#include "types.h"
#include "plan.h"
#include "pool.h"
#include "params.h"
#include "exec.h"
#include "../dispatch.h"

#endif
