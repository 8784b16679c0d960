/*
 * e2e_copies.c - two majors of the runtime loaded in one process, each reached
 * correctly (docs/runtime.md, "Several loaded copies of one library").
 *
 * The shim's runtime exports carry its tree's version node (libcudart.so.13 for a
 * 13.x tree, .12 for 12.9), as the real library's do: below, "the shim's major"
 * and "the other major" (12 or 13; tests/fake/CMakeLists.txt). Two programs:
 *   e2e_copies_a  linked against the shim's major; dlopen()s (RTLD_LOCAL) a
 *                 library linked against the other major.
 *   e2e_copies_b  linked against the other major; dlopen()s a library linked
 *                 against the shim's major.
 * Each copy answers cudaRuntimeGetVersion with its own version (13000, 12090).
 * Checked: calls of the shim's major's callers go through the shim (hooks see
 * them) and reach that copy - also when that copy is loaded RTLD_LOCAL behind a
 * global other (b); calls of the other copy's callers bind past the shim to the
 * other copy (never through a wrapper built from another major's prototypes); dlsym
 * on each copy's handle hands out the right function; the driver calls both copies
 * make are seen; the shim says once that several copies are loaded.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "e2e_common.h"

#define COPIES_SHIM_VERSION FAKE_CUDA_VERSION   /* what the copy of the shim's major answers */

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

int main(void)
{
    e2e_init(COPIES_NAME);
    e2e_record(E2E_LIB_DRIVER | E2E_LIB_RUNTIME);
    /* a: linked against the shim's major, b: against the other */
    const int mine = COPIES_MAIN_IS_OTHER ? COPIES_OTHER_VERSION : COPIES_SHIM_VERSION;
    const int other = COPIES_MAIN_IS_OTHER ? COPIES_SHIM_VERSION : COPIES_OTHER_VERSION;
    const int shim = e2e_shim();

    /* The program's own copy. */
    int v = 0;
    E2E_CU(cudaRuntimeGetVersion(&v));
    E2E_CHECK(v == mine, "the program's runtime answered %d, expected %d", v, mine);
    if (shim)
        E2E_CHECK(e2e_pre("cudaRuntimeGetVersion") == (mine == COPIES_SHIM_VERSION ? 1u : 0u),
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
        E2E_CHECK(now == seen + (other == COPIES_SHIM_VERSION ? 3u : 0u),
                  "hooks saw %llu more calls of the library's cudaRuntimeGetVersion (its copy: %d)",
                  (unsigned long long)(now - seen), other);
        seen = now;
        /* Its reference bound to the shim (the shim's major: the wrapper) or past it (the other: its own copy). */
        if (other == COPIES_SHIM_VERSION)
            E2E_CHECK(in_shim(bound()), "the shim major's library's cudaRuntimeGetVersion is not the shim's wrapper");
        else
            E2E_CHECK(in_file(bound(), COPIES_OTHER_FILE),
                      "the other major's library's cudaRuntimeGetVersion is not that copy's own function");
    }
    /* The driver calls of the other copy's cudaMalloc are seen, whichever copy it is. */
    uint64_t allocs = e2e_pre("cuMemAlloc_v2");
    E2E_CHECK(malloc_free() == 0, "the library's cudaMalloc/cudaFree failed");
    if (shim)
        E2E_CHECK(e2e_pre("cuMemAlloc_v2") == allocs + 1, "the driver allocation of the library's copy was not seen");

    /* dlsym on each copy's handle: the shim major's gives the wrapper (reaching that copy), the other's its own. */
    void *h13 = dlopen(COPIES_SHIM_SONAME, RTLD_NOW | RTLD_NOLOAD);
    void *h12 = dlopen(COPIES_OTHER_SONAME, RTLD_NOW | RTLD_NOLOAD);
    E2E_CHECK(h13 != NULL && h12 != NULL, "both copies loaded (%s %p, %s %p)", COPIES_SHIM_SONAME, h13,
              COPIES_OTHER_SONAME, h12);
    version_fn f13 = (version_fn)dlsym(h13, "cudaRuntimeGetVersion");
    version_fn f12 = (version_fn)dlsym(h12, "cudaRuntimeGetVersion");
    E2E_CHECK(call_version(f13) == COPIES_SHIM_VERSION, "dlsym(%s) reached %d", COPIES_SHIM_SONAME,
              call_version(f13));
    E2E_CHECK(call_version(f12) == COPIES_OTHER_VERSION, "dlsym(%s) reached %d", COPIES_OTHER_SONAME,
              call_version(f12));
    if (shim) {
        E2E_CHECK(in_shim((void *)f13), "dlsym(%s, ...) did not hand out the shim's wrapper", COPIES_SHIM_SONAME);
        E2E_CHECK(!in_shim((void *)f12) && in_file((void *)f12, COPIES_OTHER_FILE),
                  "dlsym(%s, ...) did not hand out the other copy's own function", COPIES_OTHER_SONAME);
        uint64_t now = e2e_pre("cudaRuntimeGetVersion");
        E2E_CHECK(now == seen + 1, "hooks saw %llu calls through dlsym'ed pointers, expected 1 (the shim major's)",
                  (unsigned long long)(now - seen));
        seen = now;
        /* RTLD_DEFAULT: the global copy's answer (a: the shim's major -> wrapper, b: the other -> its own). */
        version_fn fd = (version_fn)dlsym(RTLD_DEFAULT, "cudaRuntimeGetVersion");
        E2E_CHECK(call_version(fd) == mine, "dlsym(RTLD_DEFAULT) reached %d, expected %d", call_version(fd), mine);
        E2E_CHECK(in_shim((void *)fd) == (mine == COPIES_SHIM_VERSION), "dlsym(RTLD_DEFAULT) wrapper: %d", in_shim((void *)fd));
        int w = e2e_log_lines("copies of the runtime library are loaded");
        E2E_CHECK(w == 1 || w == -1, "the shim warned %d times about several copies (expected once)", w);
        E2E_CHECK(w != -1 || getenv("CUSHIM_LOG_FILE") == NULL, "cannot read the shim's log");
    }
    dlclose(h13);
    dlclose(h12);
    dlclose(h);
    return e2e_finish();
}
