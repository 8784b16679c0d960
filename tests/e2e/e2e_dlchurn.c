/*
 * e2e_dlchurn.c - libraries opened and closed on some threads while others look CUDA names up and call
 * through what they found. The shim's dlsym, its resolution of the real driver, runtime and NVML, its
 * cuGetProcAddress and its scans of the loaded objects all read the loader's list while it changes: nothing
 * may crash, race (the test runs under ThreadSanitizer too) or hand out a wrong function.
 *
 * USAGE: e2e_dlchurn [ROUNDS]   (default 1000 a thread)
 * Threads, each ROUNDS times:
 *   driver x2  dlopen("libcuda.so.1", RTLD_LOCAL); cuDriverGetVersion found with dlsym on that handle and
 *              through its cuGetProcAddress_v2, both called (the fake's version); dlclose
 *   runtime    the same with the tree's libcudart and cudaRuntimeGetVersion
 *   nvml       the same with libnvidia-ml.so.1: nvmlInit_v2, nvmlDeviceGetCount_v2, nvmlShutdown
 *              (when the fake NVML is built: E2E_HAVE_NVML)
 *   churn      dlopen/dlclose of a small library of no interest to the shim (E2E_DLCHURN_LIB, built in; the
 *              variable of that name overrides it): the
 *              loader's list gains and loses an object, whose name ld.so allocates and frees each time
 *   lookup x2  dlsym(RTLD_DEFAULT, ...) and dlsym(RTLD_NEXT, ...) of driver names: whatever they answer
 *              (glibc's scope rules decide whether it is NULL) must be callable and give the fake's answer
 * With the shim every function found is the shim's (dladdr: libcushim), without it the library's own.
 * Against the real libraries (the GPU check 'dlchurn': E2E_DLCHURN_REAL=1) the driver's version expected is
 * the one its cuDriverGetVersion gives the main thread first, instead of the fake's.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "e2e_common.h"

typedef CUresult (*drv_version_fn)(int *);
typedef CUresult (*gpa2_fn)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
typedef int (*rt_version_fn)(int *);
typedef int (*nv_void_fn)(void);
typedef int (*nv_count_fn)(unsigned int *);
typedef int (*churn_fn)(void);

enum { OWNER_NONE, OWNER_SHIM, OWNER_LIB };

static int rounds = 1000;
static int shim;
static int driver_version = FAKE_CUDA_VERSION;
static const char *churn_lib = E2E_DLCHURN_LIB;   /* E2E_DLCHURN_LIB in the environment overrides it */

/* Where p lives: the shim, the library whose file name contains 'lib', or elsewhere. */
static int owner(void *p, const char *lib)
{
    Dl_info di;
    if (p == NULL || dladdr(p, &di) == 0 || di.dli_fname == NULL)
        return OWNER_NONE;
    return strstr(di.dli_fname, "libcushim") ? OWNER_SHIM : strstr(di.dli_fname, lib) ? OWNER_LIB : OWNER_NONE;
}

static int want(void)
{
    return shim ? OWNER_SHIM : OWNER_LIB;
}

/* p, found by WHAT of NAME in round i, lies where it should: in the shim with the shim, else in the library whose
   file name contains 'lib'; NULL passes only when null_ok. */
static void expect_owner(void *p, const char *lib, int null_ok, int i, const char *what, const char *name)
{
    int o = owner(p, lib);
    E2E_CHECK((null_ok && p == NULL) || o == want(), "round %d: %s of %s = %p in object %d (want %d)", i, what, name,
              p, o, want());
}

/* dlopen(name) with RTLD_LOCAL; a failure is reported */
static void *open_lib(const char *name)
{
    void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    E2E_CHECK(h != NULL, "dlopen(%s): %s", name, dlerror());
    return h;
}

/* One call through f of the driver's version query: the fake's answer. */
static int driver_answers(drv_version_fn f, const char *how)
{
    int v = 0;
    CUresult r = f(&v);
    E2E_CHECK(r == CUDA_SUCCESS && v == driver_version, "%s: cuDriverGetVersion = %d, version %d (want %d)",
              how, (int)r, v, driver_version);
    return r == CUDA_SUCCESS && v == driver_version;
}

static void *driver_thread(void *arg)
{
    (void)arg;
    for (int i = 0; i < rounds && e2e_failures() == 0; i++) {
        void *h = open_lib("libcuda.so.1");
        if (h == NULL)
            break;
        drv_version_fn f = (drv_version_fn)dlsym(h, "cuDriverGetVersion");
        expect_owner((void *)f, "libcuda", 0, i, "dlsym(libcuda)", "cuDriverGetVersion");
        if (f != NULL)
            driver_answers(f, "dlsym");
        gpa2_fn gpa = (gpa2_fn)dlsym(h, "cuGetProcAddress_v2");
        E2E_CHECK(gpa != NULL, "round %d: dlsym(libcuda, cuGetProcAddress_v2) = NULL", i);
        if (gpa != NULL) {
            void *p = NULL;
            CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
            CUresult r = gpa("cuDriverGetVersion", &p, driver_version, CU_GET_PROC_ADDRESS_DEFAULT, &st);
            E2E_CHECK(r == CUDA_SUCCESS && st == CU_GET_PROC_ADDRESS_SUCCESS,
                      "round %d: cuGetProcAddress_v2(cuDriverGetVersion) = %d, status %d", i, (int)r, (int)st);
            expect_owner(p, "libcuda", 0, i, "cuGetProcAddress_v2", "cuDriverGetVersion");
            if (p != NULL)
                driver_answers((drv_version_fn)p, "cuGetProcAddress_v2");
        }
        E2E_CHECK(dlclose(h) == 0, "dlclose(libcuda): %s", dlerror());
    }
    return NULL;
}

static void *runtime_thread(void *arg)
{
    (void)arg;
    for (int i = 0; i < rounds && e2e_failures() == 0; i++) {
        void *h = open_lib(E2E_CUDART_SONAME);
        if (h == NULL)
            break;
        rt_version_fn f = (rt_version_fn)dlsym(h, "cudaRuntimeGetVersion");
        expect_owner((void *)f, "libcudart", 0, i, "dlsym(libcudart)", "cudaRuntimeGetVersion");
        if (f != NULL) {
            int v = 0;
            int r = f(&v);
            E2E_CHECK(r == 0 && v > 0, "round %d: cudaRuntimeGetVersion = %d, version %d", i, r, v);
        }
        E2E_CHECK(dlclose(h) == 0, "dlclose(libcudart): %s", dlerror());
    }
    return NULL;
}

#ifdef E2E_HAVE_NVML
static void *nvml_thread(void *arg)
{
    (void)arg;
    for (int i = 0; i < rounds && e2e_failures() == 0; i++) {
        void *h = open_lib("libnvidia-ml.so.1");
        if (h == NULL)
            break;
        nv_void_fn init = (nv_void_fn)dlsym(h, "nvmlInit_v2");
        nv_count_fn count = (nv_count_fn)dlsym(h, "nvmlDeviceGetCount_v2");
        nv_void_fn fini = (nv_void_fn)dlsym(h, "nvmlShutdown");
        expect_owner((void *)init, "libnvidia-ml", 0, i, "dlsym(libnvidia-ml)", "nvmlInit_v2");
        expect_owner((void *)count, "libnvidia-ml", 0, i, "dlsym(libnvidia-ml)", "nvmlDeviceGetCount_v2");
        expect_owner((void *)fini, "libnvidia-ml", 0, i, "dlsym(libnvidia-ml)", "nvmlShutdown");
        if (init != NULL && count != NULL && fini != NULL) {
            unsigned int n = 0;
            int r1 = init(), r2 = count(&n), r3 = fini();
            E2E_CHECK(r1 == 0 && r2 == 0 && n > 0 && r3 == 0, "round %d: nvmlInit_v2 %d, GetCount_v2 %d (%u), "
                      "Shutdown %d", i, r1, r2, n, r3);
        }
        E2E_CHECK(dlclose(h) == 0, "dlclose(libnvidia-ml): %s", dlerror());
    }
    return NULL;
}
#endif

static void *churn_thread(void *arg)
{
    (void)arg;
    for (int i = 0; i < 4 * rounds && e2e_failures() == 0; i++) {
        void *h = open_lib(churn_lib);
        if (h == NULL)
            break;
        churn_fn f = (churn_fn)dlsym(h, "e2e_dlchurn_answer");
        E2E_CHECK(f != NULL && f() == 42, "round %d: e2e_dlchurn_answer missing or wrong", i);
        /* a name the shim wraps, asked of a library that has none: NULL, as without the shim */
        E2E_CHECK(dlsym(h, "cuDriverGetVersion") == NULL,
                  "round %d: dlsym(unrelated library, cuDriverGetVersion) found something", i);
        E2E_CHECK(dlclose(h) == 0, "dlclose(%s): %s", churn_lib, dlerror());
    }
    return NULL;
}

static void *lookup_thread(void *arg)
{
    (void)arg;
    static const char *const names[] = {"cuDriverGetVersion", "cuInit", "cuGetProcAddress_v2", "cuMemAlloc_v2"};
    for (int i = 0; i < 4 * rounds && e2e_failures() == 0; i++) {
        const char *name = names[i % 4];
        void *d = dlsym(RTLD_DEFAULT, name);
        void *n = dlsym(RTLD_NEXT, name);
        /* NULL is allowed (libcuda is loaded RTLD_LOCAL here; whether anything is found is glibc's rule,
           e2e_dlsym pins those answers); anything found must be the shim's (or the library's without it) */
        expect_owner(d, "libcuda", 1, i, "dlsym(RTLD_DEFAULT)", name);
        expect_owner(n, "libcuda", 1, i, "dlsym(RTLD_NEXT)", name);
        if (i % 4 == 0) {
            if (d != NULL)
                driver_answers((drv_version_fn)d, "dlsym(RTLD_DEFAULT)");
            if (n != NULL)
                driver_answers((drv_version_fn)n, "dlsym(RTLD_NEXT)");
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    shim = e2e_init("e2e_dlchurn");
    if (argc > 1)
        rounds = atoi(argv[1]);
    if (rounds <= 0)
        rounds = 1;
    if (getenv("E2E_DLCHURN_LIB") != NULL)
        churn_lib = getenv("E2E_DLCHURN_LIB");
    const char *real = getenv("E2E_DLCHURN_REAL");
    if (real != NULL && strcmp(real, "1") == 0) {
        void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        drv_version_fn f = h ? (drv_version_fn)dlsym(h, "cuDriverGetVersion") : NULL;
        int v = 0;
        E2E_CHECK(f != NULL && f(&v) == CUDA_SUCCESS && v >= 11000, "the real driver's version: %d (%s)", v,
                  h ? "found" : dlerror());
        driver_version = v;
        if (h != NULL)
            dlclose(h);
    }
    void *(*const fns[])(void *) = {
        driver_thread, driver_thread, runtime_thread, churn_thread, lookup_thread, lookup_thread,
#ifdef E2E_HAVE_NVML
        nvml_thread,
#endif
    };
    enum { N = sizeof fns / sizeof fns[0] };
    pthread_t th[N];
    for (int i = 0; i < N; i++)
        E2E_CHECK(pthread_create(&th[i], NULL, fns[i], NULL) == 0, "pthread_create %d", i);
    for (int i = 0; i < N; i++)
        pthread_join(th[i], NULL);
    e2e_note("%d threads, %d rounds each (lookups and churn 4x)", N, rounds);
    return e2e_finish();
}
