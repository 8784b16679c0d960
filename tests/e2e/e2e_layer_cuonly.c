/*
 * e2e_layer_cuonly.c - the plainest CUDA interposer, for the stacking tests: it exports its own
 * cuInit, cuDriverGetVersion, cuDeviceGetCount, cuMemAlloc_v2 (with the same quota as the
 * HAMi-like layer, E2E_LAYER_LIMIT) and cuMemFree_v2, each forwarding to dlsym(RTLD_NEXT, name),
 * and nothing else: no dlsym, no cuGetProcAddress. Without the shim it sees only calls bound to
 * its exports (direct calls, RTLD_DEFAULT look-ups). Counters as e2e_layer_common.h says.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define __CUDA_API_VERSION_INTERNAL 1   /* declare the exported names (cuMemAlloc_v2, cuGetProcAddress) */
#include <cuda.h>

#define LX __attribute__((visibility("default")))
#define LY_HOOKED LY_cuGetProcAddress   /* not cuGetProcAddress(_v2) */

#include "e2e_layer_common.h"

static void *lc_real(int i)
{
    void *f = __atomic_load_n(&ly_real[i], __ATOMIC_ACQUIRE);
    if (f == NULL) {
        f = dlsym(RTLD_NEXT, ly_names[i]);
        __atomic_store_n(&ly_real[i], f, __ATOMIC_RELEASE);
        ly_write_at_exit();
    }
    atomic_fetch_add(&ly_fwd[i], 1);
    return f;
}

LY_COMMON_HOOKS(lc_real)
