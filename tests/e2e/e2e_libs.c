/*
 * e2e_libs.c - NCCL, cuBLAS and cuBLASLt through the shim, against their
 * small fakes (tests/fake/fake_nccl.c, fake_cublas.c). These libraries are
 * opt-in: with E2E_LIBS_ON=1 (the test sets CUSHIM_LIBS to name them) every
 * call is seen by hooks on lib:nccl, lib:cublas and lib:cublaslt, as often as
 * the fakes received it, and dlsym on their handles answers the shim's
 * wrappers; without, the fakes' own functions are handed out and no hook
 * sees a call.
 *   e2e_libs dlsym   dlopen each library by soname, dlsym on its handle
 *   e2e_libs link    built linked with the fakes: calls reach the shim's exports
 */
#define _GNU_SOURCE
#include "cushim_cublas_params.h"
#include "cushim_cublaslt_params.h"
#include "cushim_nccl_params.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "e2e_common.h"

/* libcublas.so.<major>, the tree's CUDA major (tests/e2e/CMakeLists.txt) */
#ifndef E2E_CUBLAS_SONAME
#error "E2E_CUBLAS_SONAME not defined"
#endif

static struct {
    ncclResult_t (*version)(int *);
    ncclResult_t (*uid)(ncclUniqueId *);
    ncclResult_t (*init)(ncclComm_t *, int, ncclUniqueId, int);
    ncclResult_t (*allreduce)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t);
    ncclResult_t (*destroy)(ncclComm_t);
    const char *(*errstr)(ncclResult_t);
    cublasStatus_t (*create)(cublasHandle_t *);
    cublasStatus_t (*bdestroy)(cublasHandle_t);
    cublasStatus_t (*bversion)(cublasHandle_t, int *);
    cublasStatus_t (*sgemm)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const float *,
                            const float *, int, const float *, int, const float *, float *, int);
    cublasStatus_t (*ltcreate)(cublasLtHandle_t *);
    cublasStatus_t (*ltdestroy)(cublasLtHandle_t);
    size_t (*ltversion)(void);
} f;

static const struct {
    const char *lib, *name, *counter;
} names[] = {
    {"libnccl.so.2", "ncclGetVersion", "fake_nccl_count"}, {"libnccl.so.2", "ncclGetUniqueId", "fake_nccl_count"},
    {"libnccl.so.2", "ncclCommInitRank", "fake_nccl_count"}, {"libnccl.so.2", "ncclAllReduce", "fake_nccl_count"},
    {"libnccl.so.2", "ncclCommDestroy", "fake_nccl_count"}, {"libnccl.so.2", "ncclGetErrorString", "fake_nccl_count"},
    {E2E_CUBLAS_SONAME, "cublasCreate_v2", "fake_cublas_count"},
    {E2E_CUBLAS_SONAME, "cublasDestroy_v2", "fake_cublas_count"},
    {E2E_CUBLAS_SONAME, "cublasGetVersion_v2", "fake_cublas_count"},
    {E2E_CUBLAS_SONAME, "cublasSgemm_v2", "fake_cublas_count"},
    {E2E_CUBLASLT_SONAME, "cublasLtCreate", "fake_cublaslt_count"},
    {E2E_CUBLASLT_SONAME, "cublasLtDestroy", "fake_cublaslt_count"},
    {E2E_CUBLASLT_SONAME, "cublasLtGetVersion", "fake_cublaslt_count"},
};
#define NNAMES (sizeof names / sizeof names[0])
static atomic_ullong seen[CUSHIM_API_ID_LIMIT];

static int on_pre(cushim_call *call, void *user, uint64_t *slot)
{
    (void)user, (void)slot;
    atomic_fetch_add(&seen[call->api_id], 1);
    return CUSHIM_CONTINUE;
}

static int owner_is_shim(void *p)
{
    Dl_info di;
    return p != NULL && dladdr(p, &di) != 0 && di.dli_fname != NULL && strstr(di.dli_fname, "libcushim") != NULL;
}

#ifdef E2E_LIBS_LINKED
static void bind_linked(void)
{
    f.version = ncclGetVersion, f.uid = ncclGetUniqueId, f.init = ncclCommInitRank, f.allreduce = ncclAllReduce;
    f.destroy = ncclCommDestroy, f.errstr = ncclGetErrorString, f.create = cublasCreate_v2;
    f.bdestroy = cublasDestroy_v2, f.bversion = cublasGetVersion_v2, f.sgemm = cublasSgemm_v2;
    f.ltcreate = cublasLtCreate, f.ltdestroy = cublasLtDestroy, f.ltversion = cublasLtGetVersion;
}
#endif

static void bind_dlsym(int interposed)
{
    void **slots[] = {(void **)&f.version, (void **)&f.uid, (void **)&f.init, (void **)&f.allreduce,
                      (void **)&f.destroy, (void **)&f.errstr, (void **)&f.create, (void **)&f.bdestroy,
                      (void **)&f.bversion, (void **)&f.sgemm, (void **)&f.ltcreate, (void **)&f.ltdestroy,
                      (void **)&f.ltversion};
    for (size_t i = 0; i < NNAMES; i++) {
        void *h = dlopen(names[i].lib, RTLD_NOW | RTLD_LOCAL);
        E2E_CHECK(h != NULL, "dlopen(%s): %s", names[i].lib, dlerror());
        if (h == NULL)
            continue;
        *slots[i] = dlsym(h, names[i].name);
        E2E_CHECK(*slots[i] != NULL, "dlsym(%s) = NULL", names[i].name);
        E2E_CHECK(owner_is_shim(*slots[i]) == interposed, "dlsym(%s): the shim's wrapper %d, want %d", names[i].name,
                  owner_is_shim(*slots[i]), interposed);
    }
    void *h = dlopen("libnccl.so.2", RTLD_NOW | RTLD_NOLOAD);
    E2E_CHECK(h == NULL || dlsym(h, "ncclCommSplit") == NULL, "dlsym of a function the fake lacks is not NULL");
}

static void run_calls(int interposed)
{
    const cushim_host *host = e2e_host();
    uint64_t g[3] = {0, 0, 0};
    const char *sel[3] = {"lib:nccl", "lib:cublas", "lib:cublaslt"};
    for (int i = 0; interposed && i < 3; i++) {
        cushim_hook_spec s = { .size = sizeof s, .select = sel[i], .priority = 100, .pre = on_pre };
        E2E_CALL(CUSHIM_OK, host->hooks_add(e2e_self(), &s, &g[i]));
    }
    int v = 0;
    E2E_CALL(ncclSuccess, f.version(&v));
    E2E_CHECK(v == NCCL_VERSION_CODE, "ncclGetVersion %d", v);
    ncclUniqueId id;
    E2E_CALL(ncclSuccess, f.uid(&id));
    ncclComm_t comm = NULL;
    E2E_CALL(ncclSuccess, f.init(&comm, 1, id, 0));
    float send[4] = {1, 2, 3, 4}, recv[4] = {0, 0, 0, 0};
    E2E_CALL(ncclSuccess, f.allreduce(send, recv, 4, ncclFloat32, ncclSum, comm, NULL));
    E2E_CHECK(recv[3] == 4.0f, "all-reduce of one rank: %g", (double)recv[3]);
    E2E_CALL(ncclSuccess, f.destroy(comm));
    const char *es = f.errstr(ncclSystemError);
    E2E_CHECK(es != NULL && strcmp(es, "unhandled system error") == 0, "ncclGetErrorString '%s'", es ? es : "");

    cublasHandle_t h = NULL;
    E2E_CALL(CUBLAS_STATUS_SUCCESS, f.create(&h));
    E2E_CALL(CUBLAS_STATUS_SUCCESS, f.bversion(h, &v));
    E2E_CHECK(v == CUBLAS_VERSION, "cublasGetVersion %d", v);
    float A[4] = {1, 2, 3, 4}, B[4] = {1, 0, 0, 1}, C[4] = {9, 9, 9, 9}, one = 1, zero = 0;
    E2E_CALL(CUBLAS_STATUS_SUCCESS, f.sgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, A, 2, B, 2, &zero, C, 2));
    E2E_CHECK(C[0] == 1 && C[1] == 2 && C[2] == 3 && C[3] == 4, "sgemm A*I: %g %g %g %g", (double)C[0],
              (double)C[1], (double)C[2], (double)C[3]);
    E2E_CALL(CUBLAS_STATUS_SUCCESS, f.bdestroy(h));
    cublasLtHandle_t lt = NULL;
    E2E_CALL(CUBLAS_STATUS_SUCCESS, f.ltcreate(&lt));
    E2E_CHECK(f.ltversion() == CUBLAS_VERSION, "cublasLtGetVersion (a size_t return)");
    E2E_CALL(CUBLAS_STATUS_SUCCESS, f.ltdestroy(lt));

    for (size_t i = 0; host != NULL && i < NNAMES; i++) {
        void *hl = dlopen(names[i].lib, RTLD_NOW | RTLD_NOLOAD);
        unsigned long long (*count)(const char *) =
            hl ? (unsigned long long (*)(const char *))dlsym(hl, names[i].counter) : NULL;
        E2E_CHECK(count != NULL, "%s not found", names[i].counter);
        if (count == NULL)
            continue;
        uint32_t aid = e2e_id(names[i].name);
        unsigned long long got = count(names[i].name), hooked = aid ? atomic_load(&seen[aid]) : 0;
        E2E_CHECK(got == 1, "the fake received %s %llu times", names[i].name, got);
        E2E_CHECK(hooked == (interposed ? got : 0), "%s: hooks saw %llu, the fake received %llu", names[i].name,
                  hooked, got);
    }
    for (int i = 0; interposed && i < 3; i++)
        E2E_CALL(CUSHIM_OK, host->hooks_remove(e2e_self(), g[i]));
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "dlsym";
    int shim = e2e_init("e2e_libs");
    const char *on = getenv("E2E_LIBS_ON");
    int interposed = shim && on != NULL && strcmp(on, "1") == 0;
    if (strcmp(mode, "link") == 0) {
#ifdef E2E_LIBS_LINKED
        bind_linked();
#else
        e2e_fail(__FILE__, __LINE__, "mode 'link' needs the program built with E2E_LIBS_LINKED");
        return e2e_finish();
#endif
    } else {
        bind_dlsym(interposed);
    }
    if (f.version && f.create && f.ltcreate && f.sgemm && f.allreduce)
        run_calls(interposed);
    return e2e_finish();
}
