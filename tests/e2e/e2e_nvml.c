/*
 * e2e_nvml.c - NVML through the shim, against the fake libnvidia-ml.so.1
 * (tests/fake/fake_nvml.c): what nvidia-smi, PyTorch and a memory-quota
 * plugin do.
 *
 *   e2e_nvml link    built linked with the fake NVML: calls reach the shim's exports
 *   e2e_nvml dlsym   dlopen("libnvidia-ml.so.1") + dlsym/dlvsym on its handle
 *   e2e_nvml never   never loads NVML: the shim must not load it either, nor make
 *                    its names appear (RTLD_DEFAULT), and the host's real() finds nothing
 * With the shim (E2E_EXPECT_SHIM=1) every NVML call is seen by a hook on
 * "lib:nvml", as often as the fake received it, and a post hook on
 * nvmlDeviceGetMemoryInfo shows the program a smaller total (a quota). With
 * E2E_NVML_OFF=1 (the test sets CUSHIM_LIBS=driver,runtime) NVML is not
 * interposed: dlsym hands out the fake's own functions and no hook sees a call.
 */
#define _GNU_SOURCE
#include "cushim_nvml_params.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "e2e_common.h"

#define QUOTA (4ull << 30)

typedef nvmlReturn_t (*fn_void)(void);
typedef nvmlReturn_t (*fn_count)(unsigned int *);
typedef nvmlReturn_t (*fn_handle)(unsigned int, nvmlDevice_t *);
typedef nvmlReturn_t (*fn_mem)(nvmlDevice_t, nvmlMemory_t *);
typedef nvmlReturn_t (*fn_mem2)(nvmlDevice_t, nvmlMemory_v2_t *);
typedef nvmlReturn_t (*fn_procs)(nvmlDevice_t, unsigned int *, nvmlProcessInfo_t *);
typedef nvmlReturn_t (*fn_drv)(char *, unsigned int);
typedef const char *(*fn_errstr)(nvmlReturn_t);

static struct {
    fn_void init_v2, init, shutdown;
    fn_count count_v2;
    fn_handle handle_v2;
    fn_mem mem;
    fn_mem2 mem_v2;
    fn_procs procs_v3;
    fn_drv drv;
    fn_errstr errstr;
} nv;

static const char *const names[] = {
    "nvmlInit_v2", "nvmlInit", "nvmlShutdown", "nvmlDeviceGetCount_v2", "nvmlDeviceGetHandleByIndex_v2",
    "nvmlDeviceGetMemoryInfo", "nvmlDeviceGetMemoryInfo_v2", "nvmlDeviceGetComputeRunningProcesses_v3",
    "nvmlSystemGetDriverVersion", "nvmlErrorString",
};
#define NNAMES (sizeof names / sizeof names[0])
static atomic_ullong seen[CUSHIM_API_ID_LIMIT];

static int on_pre(cushim_call *call, void *user, uint64_t *slot)
{
    (void)user, (void)slot;
    if (call->api_id < CUSHIM_API_ID_LIMIT)
        atomic_fetch_add(&seen[call->api_id], 1);
    return CUSHIM_CONTINUE;
}

/* The quota view: the program sees QUOTA as the device's total memory. */
static void on_mem_post(cushim_call *call, void *user, uint64_t *slot)
{
    (void)user, (void)slot;
    const cushim_params_nvmlDeviceGetMemoryInfo *p = call->params;
    if (cushim_call_result(call) == NVML_SUCCESS && p->memory != NULL && p->memory->total > QUOTA) {
        p->memory->total = QUOTA;
        p->memory->free = QUOTA - p->memory->used;
    }
}

#ifdef E2E_NVML_LINKED
nvmlReturn_t nvmlInit(void);   /* the legacy export (nvml.h declares it only without auto-upgrades) */
static void bind_linked(void)
{
    nv.init_v2 = nvmlInit_v2, nv.init = nvmlInit, nv.shutdown = nvmlShutdown, nv.count_v2 = nvmlDeviceGetCount_v2;
    nv.handle_v2 = nvmlDeviceGetHandleByIndex_v2, nv.mem = nvmlDeviceGetMemoryInfo;
    nv.mem_v2 = nvmlDeviceGetMemoryInfo_v2, nv.procs_v3 = nvmlDeviceGetComputeRunningProcesses_v3;
    nv.drv = nvmlSystemGetDriverVersion, nv.errstr = nvmlErrorString;
}
#endif

/* Where 'p' lives: 1 the shim, 2 the fake NVML, 0 elsewhere. */
static int owner(void *p)
{
    Dl_info di;
    if (p == NULL || dladdr(p, &di) == 0 || di.dli_fname == NULL)
        return 0;
    return strstr(di.dli_fname, "libcushim") ? 1 : strstr(di.dli_fname, "libnvidia-ml") ? 2 : 0;
}

static void bind_dlsym(int interposed)
{
    void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    E2E_CHECK(h != NULL, "dlopen(libnvidia-ml.so.1): %s", dlerror());
    if (h == NULL)
        return;
    void **slots[] = {(void **)&nv.init_v2, (void **)&nv.init, (void **)&nv.shutdown, (void **)&nv.count_v2,
                      (void **)&nv.handle_v2, (void **)&nv.mem, (void **)&nv.mem_v2, (void **)&nv.procs_v3,
                      (void **)&nv.drv, (void **)&nv.errstr};
    for (size_t i = 0; i < NNAMES; i++) {
        *slots[i] = dlsym(h, names[i]);
        E2E_CHECK(*slots[i] != NULL, "dlsym(nvml, %s) = NULL", names[i]);
        E2E_CHECK(owner(*slots[i]) == (interposed ? 1 : 2), "dlsym(nvml, %s) lies in object %d, want %d", names[i],
                  owner(*slots[i]), interposed ? 1 : 2);
    }
    /* Not in this (old) NVML: NULL with an error message, as without the shim. */
    E2E_CHECK(dlsym(h, "nvmlDeviceGetName") == NULL, "dlsym of a function the library lacks is not NULL");
    const char *err = dlerror();
    E2E_CHECK(err != NULL, "no dlerror() after a failed dlsym");
    /* glibc's message names the library asked, not the shim: "<path>/libnvidia-ml.so.1: undefined symbol: ..." */
    E2E_CHECK(err == NULL || (strstr(err, "libnvidia-ml.so.1: undefined symbol: nvmlDeviceGetName") != NULL &&
                              strstr(err, "cushim") == NULL),
              "dlerror() after a failed dlsym: '%s'", err ? err : "");
    /* NVML's exports carry no symbol version: dlvsym with one finds nothing, as in glibc. */
    E2E_CHECK(dlvsym(h, "nvmlInit_v2", "GLIBC_2.2.5") == NULL, "dlvsym with a version NVML lacks found something");
}

static void run_calls(int interposed)
{
    const cushim_host *host = e2e_host();
    uint64_t g1 = 0, g2 = 0;
    if (interposed) {
        cushim_hook_spec all = { .size = sizeof all, .select = "lib:nvml", .priority = 100, .pre = on_pre };
        E2E_CALL(CUSHIM_OK, host->hooks_add(e2e_self(), &all, &g1));
        E2E_CALL(CUSHIM_OK, e2e_hook("nvmlDeviceGetMemoryInfo", 10, NULL, on_mem_post, NULL, &g2));
    }
    E2E_CALL(NVML_SUCCESS, nv.init_v2());
    E2E_CALL(NVML_SUCCESS, nv.init());
    unsigned n = 0;
    E2E_CALL(NVML_SUCCESS, nv.count_v2(&n));
    E2E_CHECK(n == 2, "device count %u, want 2", n);
    nvmlDevice_t d = NULL;
    E2E_CALL(NVML_SUCCESS, nv.handle_v2(0, &d));
    nvmlMemory_t m;
    memset(&m, 0, sizeof m);
    E2E_CALL(NVML_SUCCESS, nv.mem(d, &m));
    unsigned long long want_total = interposed ? QUOTA : 16ull << 30;
    E2E_CHECK(m.total == want_total, "nvmlDeviceGetMemoryInfo total %llu, want %llu", m.total, want_total);
    nvmlMemory_v2_t m2;
    memset(&m2, 0, sizeof m2);
    m2.version = nvmlMemory_v2;
    E2E_CALL(NVML_SUCCESS, nv.mem_v2(d, &m2));
    E2E_CHECK(m2.total == 16ull << 30, "nvmlDeviceGetMemoryInfo_v2 total %llu (no hook on it)", m2.total);
    unsigned cnt = 0;
    E2E_CALL(NVML_ERROR_INSUFFICIENT_SIZE, nv.procs_v3(d, &cnt, NULL));
    E2E_CHECK(cnt == 1, "process count %u, want 1", cnt);
    nvmlProcessInfo_t pi[2];
    cnt = 2;
    E2E_CALL(NVML_SUCCESS, nv.procs_v3(d, &cnt, pi));
    E2E_CHECK(cnt == 1 && pi[0].pid == (unsigned)getpid(), "process list: %u entries, pid %u", cnt, pi[0].pid);
    char ver[32] = "";
    E2E_CALL(NVML_SUCCESS, nv.drv(ver, sizeof ver));
    E2E_CHECK(strcmp(ver, "580.95.05") == 0, "driver version '%s'", ver);
    const char *s = nv.errstr(NVML_ERROR_UNINITIALIZED);   /* a const char * return (CUSHIM_RET_OTHER) */
    E2E_CHECK(s != NULL && strcmp(s, "Uninitialized") == 0, "nvmlErrorString: '%s'", s ? s : "(null)");
    E2E_CALL(NVML_SUCCESS, nv.shutdown());
    E2E_CALL(NVML_SUCCESS, nv.shutdown());

    unsigned long long (*fake_count)(const char *) =
        (unsigned long long (*)(const char *))dlsym(RTLD_DEFAULT, "fake_nvml_count");
    if (fake_count == NULL) {
        void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_NOLOAD);
        fake_count = h ? (unsigned long long (*)(const char *))dlsym(h, "fake_nvml_count") : NULL;
    }
    E2E_CHECK(fake_count != NULL, "fake_nvml_count not found");
    for (size_t i = 0; host != NULL && fake_count != NULL && i < NNAMES; i++) {
        uint32_t id = e2e_id(names[i]);
        unsigned long long hooked = id ? atomic_load(&seen[id]) : 0, got = fake_count(names[i]);
        E2E_CHECK(got >= 1, "the fake never received %s", names[i]);
        E2E_CHECK(hooked == (interposed ? got : 0), "%s: hooks saw %llu calls, the fake received %llu", names[i],
                  hooked, got);
    }
    if (interposed) {
        E2E_CALL(CUSHIM_OK, host->hooks_remove(e2e_self(), g1));
        E2E_CALL(CUSHIM_OK, e2e_unhook(g2));
    }
}

static void never(void)
{
    E2E_CHECK(dlsym(RTLD_DEFAULT, "nvmlInit_v2") == NULL, "RTLD_DEFAULT finds nvmlInit_v2 without NVML loaded");
    const cushim_host *host = e2e_host();
    if (host != NULL)
        E2E_CHECK(host->real(e2e_id("nvmlInit_v2")) == NULL, "the shim found a real nvmlInit_v2");
    void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_NOLOAD);
    E2E_CHECK(h == NULL, "libnvidia-ml.so.1 was loaded although the program never loaded it");
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "link";
    int shim = e2e_init("e2e_nvml");
    const char *off = getenv("E2E_NVML_OFF");
    int interposed = shim && !(off != NULL && strcmp(off, "1") == 0);
    if (strcmp(mode, "never") == 0) {
        never();
        return e2e_finish();
    }
    if (strcmp(mode, "dlsym") == 0) {
        bind_dlsym(interposed);
    } else {
#ifdef E2E_NVML_LINKED
        bind_linked();
#else
        e2e_fail(__FILE__, __LINE__, "mode 'link' needs the program built with E2E_NVML_LINKED");
        return e2e_finish();
#endif
    }
    if (nv.init_v2 != NULL)
        run_calls(interposed);
    return e2e_finish();
}
