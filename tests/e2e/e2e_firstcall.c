/*
 * e2e_firstcall.c - many threads make the first calls of APIs at the same
 * instant (runtime/first_entry.c: an API's first call goes through its first
 * entry, which resolves the real function with the registers saved and jumps
 * on). Linked against the fake libcuda, the shim preloaded: the calls bind to
 * the shim's exports, whose rt_fast starts at the first entry.
 *   phase 1: no hooks - every thread races the first calls of cuInit,
 *            cuDriverGetVersion, cuDeviceGetCount, cuDeviceGet, cuDeviceGetName,
 *            cuDeviceTotalMem_v2 (the fast path takes over after them);
 *   phase 2: the recorder's hooks on every driver API, then the first calls of
 *            cuDeviceGetAttribute and cuDeviceGetUuid_v2 race (first entry ->
 *            slow path with hooks).
 * Every call must return the right answer, and the fake and the hooks must
 * count exactly the calls made. Run under TSan as well (label concurrency).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "e2e_common.h"

#define NT 16
#define ROUNDS 50

static pthread_barrier_t go;
static _Atomic int bad;

static void *phase1(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&go);
    for (int i = 0; i < ROUNDS; i++) {
        int v = 0, n = 0;
        CUdevice d = -1;
        char name[64] = "";
        size_t mem = 0;
        if (cuInit(0) != CUDA_SUCCESS || cuDriverGetVersion(&v) != CUDA_SUCCESS || v != FAKE_CUDA_VERSION ||
            cuDeviceGetCount(&n) != CUDA_SUCCESS || n < 1 || cuDeviceGet(&d, 0) != CUDA_SUCCESS || d != 0 ||
            cuDeviceGetName(name, (int)sizeof name, d) != CUDA_SUCCESS || name[0] == '\0' ||
            cuDeviceTotalMem_v2(&mem, d) != CUDA_SUCCESS || mem == 0)
            atomic_fetch_add(&bad, 1);
    }
    return NULL;
}

static void *phase2(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&go);
    for (int i = 0; i < ROUNDS; i++) {
        int major = 0;
        CUuuid u;
        memset(&u, 0, sizeof u);
        if (cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0) != CUDA_SUCCESS ||
            major <= 0 || cuDeviceGetUuid_v2(&u, 0) != CUDA_SUCCESS)
            atomic_fetch_add(&bad, 1);
    }
    return NULL;
}

static void race(void *(*fn)(void *))
{
    pthread_t t[NT];
    pthread_barrier_init(&go, NULL, NT);
    for (int i = 0; i < NT; i++)
        E2E_CHECK(pthread_create(&t[i], NULL, fn, NULL) == 0, "pthread_create");
    for (int i = 0; i < NT; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&go);
}

int main(void)
{
    e2e_init("e2e_firstcall");
    race(phase1);
    E2E_CHECK(atomic_load(&bad) == 0, "%d wrong answers in phase 1", atomic_load(&bad));
    const uint64_t n = (uint64_t)NT * ROUNDS;
    E2E_CHECK(e2e_fake_count("cuInit") == n && e2e_fake_count("cuDriverGetVersion") == n &&
              e2e_fake_count("cuDeviceGetName") == n && e2e_fake_count("cuDeviceTotalMem_v2") == n,
              "the fake counted cuInit %llu, cuDriverGetVersion %llu, cuDeviceGetName %llu, cuDeviceTotalMem_v2 %llu; "
              "expected %llu each", (unsigned long long)e2e_fake_count("cuInit"),
              (unsigned long long)e2e_fake_count("cuDriverGetVersion"),
              (unsigned long long)e2e_fake_count("cuDeviceGetName"),
              (unsigned long long)e2e_fake_count("cuDeviceTotalMem_v2"), (unsigned long long)n);
    e2e_record(E2E_LIB_DRIVER);
    race(phase2);
    E2E_CHECK(atomic_load(&bad) == 0, "%d wrong answers in phase 2", atomic_load(&bad));
    e2e_expect("cuDeviceGetAttribute", n);
    e2e_expect("cuDeviceGetUuid_v2", n);
    return e2e_finish();
}
