/*
 * e2e_stack.c - the shim stacked with another interposer (issue #10, item 5), against the fakes.
 *
 * USAGE: e2e_stack direct|dlsym|procaddr     (built linked with the fake libcuda)
 *        e2e_stack_rt                        (the same source, linked only with the fake libcudart)
 * Environment (run_stack.sh sets it): E2E_STACK_LAYER=hami|cuonly (libe2e_layer_<layer>.so is
 * preloaded), E2E_STACK_ORDER=layer-first|shim-first (its place in LD_PRELOAD relative to the
 * shim), E2E_LAYER_LIMIT (the layer's quota in bytes).
 *
 * The program reaches the driver one way per mode - direct calls (the layer's and the shim's
 * exports), dlopen + dlsym on the libcuda handle (and RTLD_DEFAULT for two names), the pointers
 * cuGetProcAddress_v2 hands out, or the fake libcudart (which resolves everything through
 * cuGetProcAddress) - and checks, per API, with S the calls the shim's hooks saw, L the calls the
 * layer's hook received, F the calls the layer made to its real function, D the calls the fake
 * driver received, T the calls the program made:
 *   shim first: S == T (every call passes the shim once); for an API the layer hooks L == S (and
 *               each reaches it once) and F == D; else S == D.
 *   layer first: S == D (everything that reaches the driver passed the shim once, nothing
 *               else); for an API the layer hooks L == the calls that reach it and
 *               S == F + the calls that bypass it; else S == T.
 * "The calls that reach the layer": all, for the HAMi-like layer (it interposes dlsym and
 * cuGetProcAddress); for the cu*-only layer first in line, direct calls, RTLD_DEFAULT look-ups and
 * (the shim answers them with the layer's function) look-ups on the libcuda handle, but not
 * cuGetProcAddress pointers; with the shim first, the shim's real is the layer's function, so it
 * sees every call. The layer's quota must hold for the calls that reach it:
 * the third 400 KiB allocation under a 1 MiB quota fails with CUDA_ERROR_OUT_OF_MEMORY and the
 * driver never holds more than the quota.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "e2e_common.h"

enum { P_DIRECT, P_DEFAULT, P_HANDLE, P_PROCADDR, P_N };   /* how a function pointer was obtained */

static const char *const st_names[] = { "cuInit", "cuDriverGetVersion", "cuDeviceGetCount", "cuDeviceGet",
                                        "cuDevicePrimaryCtxRetain", "cuCtxSetCurrent", "cuMemAlloc_v2",
                                        "cuMemFree_v2", "cuGetProcAddress_v2", "cuGetProcAddress" };
#define ST_NAMES (sizeof st_names / sizeof st_names[0])
static uint64_t st_tally[ST_NAMES][P_N];   /* program calls per API and path */
static const char *st_layer = "hami";
static int st_layer_first = 1;

typedef uint64_t (*st_count_fn)(const char *);
typedef int (*st_hooks_fn)(const char *);
static st_count_fn st_layer_calls, st_layer_fwd;
static st_hooks_fn st_layer_hooks;

/* The fake driver's device memory in use (found however the fake was loaded). */
static size_t st_driver_bytes(void)
{
    size_t (*f)(int) = (size_t(*)(int))e2e_fake_sym("fake_cuda_bytes_allocated");
    E2E_CHECK(f != NULL, "fake_cuda_bytes_allocated not found");
    return f ? f(0) : 0;
}

static int st_index(const char *name)
{
    for (size_t i = 0; i < ST_NAMES; i++)
        if (strcmp(st_names[i], name) == 0)
            return (int)i;
    return -1;
}

static void st_note(const char *name, int path)
{
    int i = st_index(name);
    if (i >= 0)
        st_tally[i][path]++;
}

/* Does a call made through 'path' reach the layer? A cu*-only layer before the shim gets what
   is bound to its exports (direct calls, RTLD_DEFAULT) and what the shim routes to it (look-ups
   on the libcuda handle), not cuGetProcAddress pointers (docs/runtime.md says why). */
static int st_layer_sees(int path)
{
    if (strcmp(st_layer, "hami") == 0 || !st_layer_first)
        return 1;
    return path != P_PROCADDR;
}

static uint64_t st_total(int i, int only_layer_seen)
{
    uint64_t t = 0;
    for (int p = 0; p < P_N; p++)
        if (!only_layer_seen || st_layer_sees(p))
            t += st_tally[i][p];
    return t;
}

#ifndef E2E_STACK_CUDART
/* The driver functions the program uses, as obtained in one mode. */
struct st_fns {
    CUresult (*init)(unsigned int);
    CUresult (*version)(int *);
    CUresult (*count)(int *);
    CUresult (*device_get)(CUdevice *, int);
    CUresult (*retain)(CUcontext *, CUdevice);
    CUresult (*set_current)(CUcontext);
    CUresult (*alloc)(CUdeviceptr *, size_t);
    CUresult (*free_)(CUdeviceptr);
    int path[8];   /* per field, how it was obtained */
};

static void *st_get(const char *mode, void *h, const char *export, const char *base, int *path)
{
    void *p = NULL;
    if (strcmp(mode, "direct") == 0) {
        *path = P_DIRECT;
        return NULL;   /* caller uses the linked symbol */
    }
    if (strcmp(mode, "dlsym") == 0) {
        /* Two names through RTLD_DEFAULT, the others on the libcuda handle. */
        int def = strcmp(export, "cuDriverGetVersion") == 0 || strcmp(export, "cuMemFree_v2") == 0;
        *path = def ? P_DEFAULT : P_HANDLE;
        p = dlsym(def ? RTLD_DEFAULT : h, export);
        E2E_CHECK(p != NULL, "dlsym(%s) = NULL", export);
        return p;
    }
    *path = P_PROCADDR;
    CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    st_note("cuGetProcAddress_v2", P_DIRECT);
    E2E_CU(cuGetProcAddress_v2(base, &p, FAKE_CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &st));
    E2E_CHECK(p != NULL && st == CU_GET_PROC_ADDRESS_SUCCESS, "cuGetProcAddress_v2(%s): %p status %d", base, p,
              (int)st);
    return p;
}

#define ST_FN(field, idx, sym, base)                                                              \
    do {                                                                                          \
        void *p_ = st_get(mode, h, #sym, base, &f->path[idx]);                                    \
        *(void **)&f->field = p_ ? p_ : (void *)sym;                                              \
    } while (0)

static void st_resolve(const char *mode, struct st_fns *f)
{
    void *h = NULL;
    if (strcmp(mode, "dlsym") == 0) {
        h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        E2E_CHECK(h != NULL, "dlopen(libcuda.so.1): %s", dlerror());
    }
    ST_FN(init, 0, cuInit, "cuInit");
    ST_FN(version, 1, cuDriverGetVersion, "cuDriverGetVersion");
    ST_FN(count, 2, cuDeviceGetCount, "cuDeviceGetCount");
    ST_FN(device_get, 3, cuDeviceGet, "cuDeviceGet");
    ST_FN(retain, 4, cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    ST_FN(set_current, 5, cuCtxSetCurrent, "cuCtxSetCurrent");
    ST_FN(alloc, 6, cuMemAlloc_v2, "cuMemAlloc");
    ST_FN(free_, 7, cuMemFree_v2, "cuMemFree");
}
#undef ST_FN
#endif

static int st_alloc_path;   /* how cuMemAlloc_v2 is reached */

static void st_calls(void)
{
#ifdef E2E_STACK_CUDART
    int v = 0, n = 0;
    E2E_CU(cudaDriverGetVersion(&v));
    E2E_CU(cudaGetDeviceCount(&n));
    E2E_CU(cudaSetDevice(0));
    void *a = NULL, *b = NULL, *c = NULL;
    /* The runtime reaches the driver through cuGetProcAddress pointers: one cuMemAlloc_v2 per
       cudaMalloc, one cuMemFree_v2 per cudaFree (tests/fake/fake_cudart.c). */
    st_alloc_path = P_PROCADDR;
    E2E_CU(cudaMalloc(&a, 400 << 10)); st_note("cuMemAlloc_v2", P_PROCADDR);
    E2E_CU(cudaMalloc(&b, 400 << 10)); st_note("cuMemAlloc_v2", P_PROCADDR);
    cudaError_t want = st_layer_sees(P_PROCADDR) ? cudaErrorMemoryAllocation : cudaSuccess;
    E2E_CALL(want, cudaMalloc(&c, 400 << 10)); st_note("cuMemAlloc_v2", P_PROCADDR);
    E2E_CHECK(want != cudaSuccess || st_driver_bytes() == 1200u << 10, "driver holds %zu bytes",
              st_driver_bytes());
    E2E_CHECK(want == cudaSuccess || st_driver_bytes() == 800u << 10, "driver holds %zu bytes",
              st_driver_bytes());
    E2E_CU(cudaFree(a)); st_note("cuMemFree_v2", P_PROCADDR);
    E2E_CU(cudaFree(b)); st_note("cuMemFree_v2", P_PROCADDR);
    if (want == cudaSuccess) {
        E2E_CU(cudaFree(c));
        st_note("cuMemFree_v2", P_PROCADDR);
    }
    E2E_CU(cudaMalloc(&a, 400 << 10)); st_note("cuMemAlloc_v2", P_PROCADDR);
    E2E_CU(cudaFree(a)); st_note("cuMemFree_v2", P_PROCADDR);
#else
    const char *mode = getenv("E2E_STACK_MODE");
    struct st_fns f;
    memset(&f, 0, sizeof f);
    st_resolve(mode, &f);
    st_alloc_path = f.path[6];
    int v = 0, n = 0;
    CUdevice dev = -1;
    CUcontext ctx = NULL;
    CUdeviceptr a = 0, b = 0, c = 0;
    E2E_CU(f.init(0)); st_note("cuInit", f.path[0]);
    E2E_CU(f.version(&v)); st_note("cuDriverGetVersion", f.path[1]);
    E2E_CU(f.version(&v)); st_note("cuDriverGetVersion", f.path[1]);
    E2E_CHECK(v == FAKE_CUDA_VERSION, "driver version %d", v);
    E2E_CU(f.count(&n)); st_note("cuDeviceGetCount", f.path[2]);
    E2E_CU(f.device_get(&dev, 0)); st_note("cuDeviceGet", f.path[3]);
    E2E_CU(f.retain(&ctx, dev)); st_note("cuDevicePrimaryCtxRetain", f.path[4]);
    E2E_CU(f.set_current(ctx)); st_note("cuCtxSetCurrent", f.path[5]);
    E2E_CU(f.alloc(&a, 400 << 10)); st_note("cuMemAlloc_v2", f.path[6]);
    E2E_CU(f.alloc(&b, 400 << 10)); st_note("cuMemAlloc_v2", f.path[6]);
    CUresult want = st_layer_sees(f.path[6]) ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_SUCCESS;
    E2E_CALL(want, f.alloc(&c, 400 << 10)); st_note("cuMemAlloc_v2", f.path[6]);
    E2E_CHECK(st_driver_bytes() == (want == CUDA_SUCCESS ? 1200u : 800u) << 10, "driver holds %zu bytes",
              st_driver_bytes());
    E2E_CU(f.free_(a)); st_note("cuMemFree_v2", f.path[7]);
    E2E_CU(f.free_(b)); st_note("cuMemFree_v2", f.path[7]);
    if (want == CUDA_SUCCESS) {
        E2E_CU(f.free_(c));
        st_note("cuMemFree_v2", f.path[7]);
    }
    E2E_CU(f.alloc(&a, 400 << 10)); st_note("cuMemAlloc_v2", f.path[6]);   /* the quota was given back */
    E2E_CU(f.free_(a)); st_note("cuMemFree_v2", f.path[7]);
#endif
}

static void st_check(void)
{
    if (!e2e_shim() || st_layer_calls == NULL)
        return;
    uint64_t layer_total = 0;
    for (size_t i = 0; i < ST_NAMES; i++) {
        const char *x = st_names[i];
        uint64_t S = e2e_pre(x), D = e2e_fake_count(x), L = st_layer_calls(x), F = st_layer_fwd(x);
        int hooked = st_layer_hooks(x);
        layer_total += L;
#ifdef E2E_STACK_CUDART
        /* Of the runtime's own driver calls, the program knows only its allocations and frees. */
        int know_t = strcmp(x, "cuMemAlloc_v2") == 0 || strcmp(x, "cuMemFree_v2") == 0;
#else
        int know_t = 1;
#endif
        uint64_t T = st_total((int)i, 0), Tl = st_total((int)i, 1);
        if (!st_layer_first) {
            if (know_t)
                E2E_CHECK(S == T, "%s: the shim saw %llu calls, the program made %llu", x, (unsigned long long)S,
                          (unsigned long long)T);
            if (hooked) {
                E2E_CHECK(L == S, "%s: the layer received %llu calls, the shim passed %llu", x,
                          (unsigned long long)L, (unsigned long long)S);
                E2E_CHECK(F == D, "%s: the layer forwarded %llu calls, the driver received %llu", x,
                          (unsigned long long)F, (unsigned long long)D);
            } else {
                E2E_CHECK(S == D, "%s: the shim saw %llu calls, the driver received %llu", x, (unsigned long long)S,
                          (unsigned long long)D);
            }
        } else {
            E2E_CHECK(S == D, "%s: the shim saw %llu calls, the driver received %llu", x, (unsigned long long)S,
                      (unsigned long long)D);
            if (hooked && know_t) {
                E2E_CHECK(L == Tl, "%s: the layer received %llu calls, %llu reach it", x, (unsigned long long)L,
                          (unsigned long long)Tl);
                E2E_CHECK(S == F + (T - Tl), "%s: the shim saw %llu calls; the layer forwarded %llu, %llu bypass it", x,
                          (unsigned long long)S, (unsigned long long)F, (unsigned long long)(T - Tl));
            } else if (hooked && st_layer_sees(P_PROCADDR)) {   /* the runtime's calls all reach the layer */
                E2E_CHECK(S == F, "%s: the shim saw %llu calls, the layer forwarded %llu", x, (unsigned long long)S,
                          (unsigned long long)F);
            } else if (!hooked && know_t) {
                E2E_CHECK(S == T, "%s: the shim saw %llu calls, the program made %llu", x, (unsigned long long)S,
                          (unsigned long long)T);
            }
        }
    }
    /* Never vacuous: 4 allocations were made; the layer saw them all where they reach it. */
    uint64_t want_layer = st_layer_sees(st_alloc_path) ? 4 : 0;
    E2E_CHECK(st_layer_calls("cuMemAlloc_v2") == want_layer, "the layer saw %llu cuMemAlloc_v2 calls, expected %llu",
              (unsigned long long)st_layer_calls("cuMemAlloc_v2"), (unsigned long long)want_layer);
    E2E_CHECK(layer_total > 0 || want_layer == 0, "the layer saw nothing");
}

int main(int argc, char **argv)
{
    e2e_init("e2e_stack");
    e2e_record(E2E_LIB_DRIVER | E2E_LIB_RUNTIME);
    const char *l = getenv("E2E_STACK_LAYER"), *o = getenv("E2E_STACK_ORDER");
    st_layer = l ? l : "none";
    st_layer_first = o == NULL || strcmp(o, "shim-first") != 0;
    if (argc > 1)
        setenv("E2E_STACK_MODE", argv[1], 1);
    st_layer_calls = (st_count_fn)dlsym(RTLD_DEFAULT, "e2e_layer_calls");
    st_layer_fwd = (st_count_fn)dlsym(RTLD_DEFAULT, "e2e_layer_forwarded");
    st_layer_hooks = (st_hooks_fn)dlsym(RTLD_DEFAULT, "e2e_layer_hooks");
    E2E_CHECK(l == NULL || (st_layer_calls && st_layer_fwd && st_layer_hooks), "layer %s not preloaded", st_layer);
    /* A layer that interposes dlsym sees non-CUDA look-ups too (HAMi answers nvml* names itself). */
    void *(*nvml_hook)(void) = (void *(*)(void))dlsym(RTLD_DEFAULT, "e2e_layer_nvml_hook");
    if (nvml_hook != NULL) {
        void *p = dlsym(RTLD_DEFAULT, "nvmlDeviceGetCount_v2");
        E2E_CHECK(p == nvml_hook(), "dlsym(RTLD_DEFAULT, nvmlDeviceGetCount_v2) = %p, the layer's is %p", p,
                  nvml_hook());
    }
    st_calls();
    st_check();
    printf("e2e_stack %s, layer %s %s: layer saw %llu cuMemAlloc_v2, shim %llu, driver %llu\n",
#ifdef E2E_STACK_CUDART
           "cudart",
#else
           getenv("E2E_STACK_MODE"),
#endif
           st_layer, st_layer_first ? "first" : "second",
           (unsigned long long)(st_layer_calls ? st_layer_calls("cuMemAlloc_v2") : 0),
           (unsigned long long)e2e_pre("cuMemAlloc_v2"), (unsigned long long)e2e_fake_count("cuMemAlloc_v2"));
    return e2e_finish();
}
