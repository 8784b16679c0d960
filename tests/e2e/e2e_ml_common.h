/*
 * e2e_ml_common.h - what memlimit's self-checking end-to-end programs (e2e_memlimit.c, e2e_oversub.c,
 * e2e_oversub_vmm.c) share: a check that prints "FAIL ..." and counts, the device's primary context made
 * current, a budget region's figures, and a mode's verdict. Header only, included once by each program (they
 * are single files, built with plugins/memlimit's ml_budget.c, without e2e_common.c's recorder).
 */
#ifndef E2E_ML_COMMON_H
#define E2E_ML_COMMON_H

#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ml_budget.h"

static int failures;

#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        if (!(cond)) {                                                     \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                    \
            printf(__VA_ARGS__);                                           \
            printf("\n");                                                  \
            failures++;                                                    \
        }                                                                  \
    } while (0)

#define MiB ((size_t)1 << 20)

/* cuInit, then device 0's primary context retained and made current. */
static inline void e2e_ml_init(void)
{
    CUdevice d;
    CUcontext c;
    CHECK(cuInit(0) == CUDA_SUCCESS, "cuInit");
    CHECK(cuDeviceGet(&d, 0) == CUDA_SUCCESS, "cuDeviceGet");
    CHECK(cuDevicePrimaryCtxRetain(&c, d) == CUDA_SUCCESS, "retain");
    CHECK(cuCtxSetCurrent(c) == CUDA_SUCCESS, "set current");
}

/* The budget's device-resident and host-backed bytes on device 0, read from its region (UINT64_MAX and a
   failed check when it cannot be attached). */
static inline void e2e_ml_region_figures(const char *region, uint64_t *used, uint64_t *spilled)
{
    ml_budget b;
    char err[256];
    memset(&b, 0, sizeof b);
    *used = *spilled = UINT64_MAX;
    if (ml_budget_attach(&b, region, err, sizeof err) != 0) {
        CHECK(0, "attach %s: %s", region, err);
        return;
    }
    *used = ml_budget_used(&b, 0);
    *spilled = ml_budget_spilled(&b, 0);
    ml_budget_close(&b);
}

/* The end of a mode: its failures printed; the exit status. */
static inline int e2e_ml_verdict(const char *mode)
{
    printf("%s: %d failures\n", mode, failures);
    return failures ? 1 : 0;
}

#endif /* E2E_ML_COMMON_H */
