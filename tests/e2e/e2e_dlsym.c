/*
 * e2e_dlsym.c - driver symbols looked up at run time: dlopen + dlsym on the handle, RTLD_DEFAULT,
 * RTLD_NEXT from the program and from a helper library, dlvsym.
 *
 * Prints one line per look-up ("<how> <name> -> <where>", see e2e_classify.h).
 * run_compare.sh runs it without and with the shim: every answer must be the
 * same, except that the shim's wrapper of the same name stands where the fake
 * driver's function stood. Non-CUDA names (malloc, the helper's own functions)
 * must not change at all: in particular dlsym(RTLD_NEXT, ...) from the helper
 * must answer relative to the helper, not to the shim that overrides dlsym.
 * A plugin that links libcuda itself, loaded with dlopen(RTLD_LOCAL)
 * (e2e_dlplugin.c), looks names up from its own scope. With the shim, the
 * pointers obtained are then called and every call must be seen by the hooks
 * exactly once.
 */
#define _GNU_SOURCE
#include <dlfcn.h>

#include "e2e_classify.h"
#include "e2e_common.h"

void *dlhelper_next(const char *name);
void *dlhelper_default(const char *name);
void *dlhelper_vnext(const char *name, const char *version);

/* e2e_dlplugin.c, dlopen()ed: links libcuda.so.1 itself. */
typedef void *(*lookup_fn)(const char *);
static lookup_fn plugin_default, plugin_next;
static int (*plugin_driver_version)(void);

static const char *const names[] = {
    "cuInit", "cuDriverGetVersion", "cuDeviceGetCount", "cuMemAlloc", "cuMemAlloc_v2", "cuMemFree_v2",
    "cuGetProcAddress", "cuGetProcAddress_v2", "cuCtxCreate_v4", "cuLaunchKernel_ptsz", "cuGetExportTable",
    "cuProfilerStart", "cuNoSuchFunction", "cudaMalloc", "fake_cuda_call_count", "malloc", "dlhelper_default",
};
#define NNAMES (sizeof names / sizeof names[0])

static void show(const char *how, const char *name, const void *p)
{
    char buf[512];
    printf("%s %s -> %s\n", how, name, e2e_classify(p, buf, sizeof buf));
}

int main(int argc, char **argv)
{
    /* --next-local: also RTLD_NEXT probes while the driver is loaded RTLD_LOCAL (test e2e_dlsym_next_local). */
    int next_local = argc > 1 && strcmp(argv[1], "--next-local") == 0;
    e2e_init("e2e_dlsym");
    e2e_record(E2E_LIB_DRIVER);

    show("default-before-dlopen", "cuInit", dlsym(RTLD_DEFAULT, "cuInit"));
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    E2E_CHECK(h != NULL, "dlopen(libcuda.so.1): %s", dlerror());
    if (h == NULL)
        return e2e_finish();

    for (size_t i = 0; i < NNAMES; i++) {
        show("handle", names[i], dlsym(h, names[i]));
        show("default-local", names[i], dlsym(RTLD_DEFAULT, names[i]));
        if (next_local) {
            show("next-program-local", names[i], dlsym(RTLD_NEXT, names[i]));
            show("next-helper-local", names[i], dlhelper_next(names[i]));
        }
    }
    /* A plugin loaded RTLD_LOCAL that links the driver: its own scope has libcuda. */
    void *plugin = dlopen(E2E_DLPLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
    E2E_CHECK(plugin != NULL, "dlopen(%s): %s", E2E_DLPLUGIN_PATH, dlerror());
    if (plugin != NULL) {
        plugin_default = (lookup_fn)dlsym(plugin, "dlplugin_default");
        plugin_next = (lookup_fn)dlsym(plugin, "dlplugin_next");
        plugin_driver_version = (int (*)(void))dlsym(plugin, "dlplugin_driver_version");
    }
    E2E_CHECK(plugin_default && plugin_next && plugin_driver_version, "plugin functions");
    for (size_t i = 0; plugin_default && plugin_next && i < NNAMES; i++) {
        show("plugin-default", names[i], plugin_default(names[i]));
        if (next_local || strcmp(names[i], "cudaMalloc") != 0)
            show("plugin-next", names[i], plugin_next(names[i]));
    }
    show("vsym-handle", "cuInit", dlvsym(h, "cuInit", "libcuda.so.1"));
    show("vsym-default", "malloc@GLIBC_2.2.5", dlvsym(RTLD_DEFAULT, "malloc", "GLIBC_2.2.5"));
    show("vsym-next-helper", "malloc@GLIBC_2.2.5", dlhelper_vnext("malloc", "GLIBC_2.2.5"));
    show("vsym-next-program", "malloc@GLIBC_2.2.5", dlvsym(RTLD_NEXT, "malloc", "GLIBC_2.2.5"));

    /* Make the driver global: RTLD_DEFAULT and RTLD_NEXT now find it. */
    void *g = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
    E2E_CHECK(g == h, "RTLD_NOLOAD gave %p, first dlopen %p", g, h);
    for (size_t i = 0; i < NNAMES; i++) {
        show("default-global", names[i], dlsym(RTLD_DEFAULT, names[i]));
        show("default-global-helper", names[i], dlhelper_default(names[i]));
        /* A wrapped name that nothing defines (no runtime is loaded): RTLD_NEXT of it belongs to
           the --next-local test, which collects the RTLD_NEXT answers that have no real definition. */
        if (!next_local && strcmp(names[i], "cudaMalloc") == 0)
            continue;
        show("next-program-global", names[i], dlsym(RTLD_NEXT, names[i]));
        show("next-helper-global", names[i], dlhelper_next(names[i]));
    }

    /* Call what we were given: each call reaches the hooks and the fake once. */
    CUresult (*init)(unsigned) = (CUresult(*)(unsigned))dlsym(h, "cuInit");
    CUresult (*version)(int *) = (CUresult(*)(int *))dlsym(RTLD_DEFAULT, "cuDriverGetVersion");
    CUresult (*count)(int *) = (CUresult(*)(int *))dlhelper_next("cuDeviceGetCount");
    CUresult (*count_next)(int *) = (CUresult(*)(int *))dlsym(RTLD_NEXT, "cuDeviceGetCount");
    CUresult (*count_v)(int *) = (CUresult(*)(int *))dlvsym(h, "cuDeviceGetCount", "libcuda.so.1");
    int v = 0, n = 0;
    E2E_CHECK(init && version && count && count_next, "a look-up failed");
    if (init && version && count && count_next) {
        E2E_CU(init(0));
        E2E_CU(version(&v));
        E2E_CHECK(plugin_driver_version == NULL || plugin_driver_version() == FAKE_CUDA_VERSION, "the plugin's call failed");
        E2E_CU(count(&n));
        E2E_CU(count_next(&n));
        E2E_CHECK(v == FAKE_CUDA_VERSION && n == 2, "version %d count %d", v, n);
        e2e_expect("cuInit", 1);
        e2e_expect("cuDriverGetVersion", plugin_driver_version ? 2 : 1);
        uint64_t extra = 0;
        if (count_v != NULL) {
            E2E_CU(count_v(&n));
            extra = 1;
        }
        e2e_expect("cuDeviceGetCount", 2 + extra);
    }
    e2e_expect_hooks_match_fake(E2E_LIB_DRIVER);
    fflush(stdout);
    return e2e_finish();
}
