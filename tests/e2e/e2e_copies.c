/*
 * e2e_copies.c - two majors of the runtime loaded in one process, each reached
 * correctly (docs/runtime.md, "Several loaded copies of one library").
 *
 * The shim is generated from CUDA 13 headers; its runtime exports carry the
 * version node libcudart.so.13, as the real library's do. Two programs:
 *   e2e_copies_a  linked against libcudart.so.13; dlopen()s (RTLD_LOCAL) a
 *                 library linked against libcudart.so.12.
 *   e2e_copies_b  linked against libcudart.so.12; dlopen()s a library linked
 *                 against libcudart.so.13.
 * Each copy answers cudaRuntimeGetVersion with its own version (13000, 12090).
 * Checked: calls of the 13 copy's callers go through the shim (hooks see them)
 * and reach the 13 copy - also when that copy is loaded RTLD_LOCAL behind a
 * global 12 (b); calls of the 12 copy's callers bind past the shim to the 12
 * copy (never through a wrapper built from 13's prototypes); dlsym on each
 * copy's handle hands out the right function; the driver calls both copies
 * make are seen; the shim says once that several copies are loaded.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "e2e_common.h"

typedef int (*int_fn)(void);
typedef void *(*ptr_fn)(void);
typedef cudaError_t (*version_fn)(int *);

static int in_shim(const void *p)
{
    Dl_info di;
    return p != NULL && dladdr(p, &di) != 0 && di.dli_fname != NULL && strstr(di.dli_fname, "libcushim") != NULL;
}

static int in_file(const void *p, const char *part)
{
    Dl_info di;
    return p != NULL && dladdr(p, &di) != 0 && di.dli_fname != NULL && strstr(di.dli_fname, part) != NULL;
}

static int call_version(version_fn f)
{
    int v = 0;
    return f != NULL && f(&v) == cudaSuccess ? v : -1;
}

/* Lines of this process in the shim's log (CUSHIM_LOG_FILE, appended to by every run) containing 'needle'. */
static int log_lines_with(const char *needle)
{
    const char *path = getenv("CUSHIM_LOG_FILE");
    FILE *f = path ? fopen(path, "r") : NULL;
    char line[4096], me[64];
    int n = 0;
    if (f == NULL)
        return -1;
    snprintf(me, sizeof me, "cushim[%d] ", (int)getpid());
    while (fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, me, strlen(me)) == 0 && strstr(line, needle) != NULL)
            n++;
    fclose(f);
    return n;
}

int main(void)
{
    e2e_init(COPIES_NAME);
    e2e_record(E2E_LIB_DRIVER | E2E_LIB_RUNTIME);
    const int mine = COPIES_MAIN_VERSION, other = COPIES_LIB_VERSION;
    const int shim = e2e_shim();

    /* The program's own copy. */
    int v = 0;
    E2E_CU(cudaRuntimeGetVersion(&v));
    E2E_CHECK(v == mine, "the program's runtime answered %d, expected %d", v, mine);
    if (shim)
        E2E_CHECK(e2e_pre("cudaRuntimeGetVersion") == (mine == 13000 ? 1u : 0u),
                  "hooks saw %llu calls of the program's cudaRuntimeGetVersion (its copy: %d)",
                  (unsigned long long)e2e_pre("cudaRuntimeGetVersion"), mine);
    uint64_t seen = shim ? e2e_pre("cudaRuntimeGetVersion") : 0;

    /* The library linked against the other copy, RTLD_LOCAL. */
    void *h = dlopen(COPIES_LIB_PATH, RTLD_NOW | RTLD_LOCAL);
    E2E_CHECK(h != NULL, "dlopen %s: %s", COPIES_LIB_PATH, dlerror());
    int_fn version = (int_fn)dlsym(h, "copies_runtime_version");
    int_fn malloc_free = (int_fn)dlsym(h, "copies_malloc_free");
    ptr_fn bound = (ptr_fn)dlsym(h, "copies_bound");
    E2E_CHECK(version && malloc_free && bound, "helper symbols");
    for (int i = 0; i < 3; i++)
        E2E_CHECK(version() == other, "the library's runtime answered %d, expected %d", version(), other);
    if (shim) {
        uint64_t now = e2e_pre("cudaRuntimeGetVersion");
        E2E_CHECK(now == seen + (other == 13000 ? 3u : 0u),
                  "hooks saw %llu more calls of the library's cudaRuntimeGetVersion (its copy: %d)",
                  (unsigned long long)(now - seen), other);
        seen = now;
        /* Its reference bound to the shim (13: the wrapper) or past it (12: its own copy). */
        if (other == 13000)
            E2E_CHECK(in_shim(bound()), "the 13 library's cudaRuntimeGetVersion is not the shim's wrapper");
        else
            E2E_CHECK(in_file(bound(), "cudart12/libcudart.so.12"),
                      "the 12 library's cudaRuntimeGetVersion is not the 12 copy's own function");
    }
    /* The driver calls of the other copy's cudaMalloc are seen, whichever copy it is. */
    uint64_t allocs = e2e_pre("cuMemAlloc_v2");
    E2E_CHECK(malloc_free() == 0, "the library's cudaMalloc/cudaFree failed");
    if (shim)
        E2E_CHECK(e2e_pre("cuMemAlloc_v2") == allocs + 1, "the driver allocation of the library's copy was not seen");

    /* dlsym on each copy's handle: the 13 copy's gives the wrapper (reaching 13), the 12 copy's its own. */
    void *h13 = dlopen("libcudart.so.13", RTLD_NOW | RTLD_NOLOAD);
    void *h12 = dlopen("libcudart.so.12", RTLD_NOW | RTLD_NOLOAD);
    E2E_CHECK(h13 != NULL && h12 != NULL, "both copies loaded (13 %p, 12 %p)", h13, h12);
    version_fn f13 = (version_fn)dlsym(h13, "cudaRuntimeGetVersion");
    version_fn f12 = (version_fn)dlsym(h12, "cudaRuntimeGetVersion");
    E2E_CHECK(call_version(f13) == 13000, "dlsym(libcudart.so.13) reached %d", call_version(f13));
    E2E_CHECK(call_version(f12) == 12090, "dlsym(libcudart.so.12) reached %d", call_version(f12));
    if (shim) {
        E2E_CHECK(in_shim((void *)f13), "dlsym(libcudart.so.13, ...) did not hand out the shim's wrapper");
        E2E_CHECK(!in_shim((void *)f12) && in_file((void *)f12, "cudart12/libcudart.so.12"),
                  "dlsym(libcudart.so.12, ...) did not hand out the 12 copy's own function");
        uint64_t now = e2e_pre("cudaRuntimeGetVersion");
        E2E_CHECK(now == seen + 1, "hooks saw %llu calls through dlsym'ed pointers, expected 1 (the 13 copy's)",
                  (unsigned long long)(now - seen));
        seen = now;
        /* RTLD_DEFAULT: the global copy's answer (a: 13 -> wrapper, b: 12 -> its own). */
        version_fn fd = (version_fn)dlsym(RTLD_DEFAULT, "cudaRuntimeGetVersion");
        E2E_CHECK(call_version(fd) == mine, "dlsym(RTLD_DEFAULT) reached %d, expected %d", call_version(fd), mine);
        E2E_CHECK(in_shim((void *)fd) == (mine == 13000), "dlsym(RTLD_DEFAULT) wrapper: %d", in_shim((void *)fd));
        int w = log_lines_with("copies of the runtime library are loaded");
        E2E_CHECK(w == 1 || w == -1, "the shim warned %d times about several copies (expected once)", w);
        E2E_CHECK(w != -1 || getenv("CUSHIM_LOG_FILE") == NULL, "cannot read the shim's log");
    }
    dlclose(h13);
    dlclose(h12);
    dlclose(h);
    return e2e_finish();
}
