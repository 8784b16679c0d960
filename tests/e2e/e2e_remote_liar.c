/*
 * e2e_remote_liar.c - a hostile client of cushim-serve that lies about cuBLAS's pointer-mode scalars
 * (docs/remote.md, "cuBLAS and cuBLASLt"): it speaks the wire itself (the codec of remote/, the generated plans)
 * and sends an SGEMM whose alpha it calls a device address while the handle is in host mode - an address the
 * library would read in the back end's memory - and the other way round, and a cuBLASLt matmul whose descriptor
 * is in host mode with device-claimed scalars; then a cuBLASLt descriptor that is not a number the back end gave
 * (a pointer-like value, a number not given yet, a number of another kind, an attribute value naming an emulation
 * descriptor). The back end must refuse each (RM_ST_MALFORMED) before the call runs (the matrices are bogus
 * addresses: a call that ran would crash the back end), and keep serving. A cuBLAS or cuBLASLt handle that is not
 * a live number the back end gave (made up, destroyed) is answered CUBLAS_STATUS_NOT_INITIALIZED, not run; so are
 * cublasLtDestroy of a cuBLAS handle (which may be cast to a cuBLASLt handle, not ended as one) and a cuBLASLt
 * handle as a cublasHandle_t. NCCL: a pre-multiplied sum's scalar claimed the other way than its residence, and a
 * made-up communicator, are refused.
 * Usage: e2e_remote_liar unix:/path   (prints one line per step; exit 0 when every step went as expected)
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rm_auth.h"
#include "rm_codec.h"
#include "rm_ltid.h"
#include "rm_sock.h"

void rm_meta_generated(rm_meta *m);

static rm_plans *plans;
static int fd, failures;
static uint32_t seq;
static int lie_how;   /* the way every scalar is claimed to go */
static uint8_t *rbuf;
static size_t rcap;

static int lie(void *user, const rm_plan *pl, uint32_t param, const void *params, uint32_t *bytes)
{
    (void)user, (void)pl, (void)param, (void)params;
    *bytes = 4;
    return lie_how;
}

static const rm_ctx cx = { .scalar = lie };

static const rm_plan *plan(const char *name)
{
    for (uint32_t i = 0; i < plans->count; i++)
        if (strcmp(plans->all[i].info->name, name) == 0)
            return &plans->all[i];
    fprintf(stderr, "e2e_remote_liar: no plan for %s\n", name);
    exit(2);
}

static void put(const rm_plan *pl, uint8_t *params, const char *name, const void *v, size_t n)
{
    for (uint32_t i = 0; i < pl->nparams; i++)
        if (strcmp(pl->info->params[i].name, name) == 0) {
            memcpy(params + pl->p[i].offset, v, n);
            return;
        }
    fprintf(stderr, "e2e_remote_liar: %s has no %s\n", pl->info->name, name);
    exit(2);
}

/* One call; its reply's status (RM_ST_*), the result in *ret, outputs into the params' pointers. -1: lost. */
static int call(const rm_plan *pl, uint8_t *params, int32_t *ret)
{
    rm_wr w;
    rm_call c;
    rm_hdr h;
    uint32_t status = 0;
    rm_wr_init(&w, 0);
    if (rm_encode_call(pl, params, &cx, &w, &c) != RM_OK || rm_send_wr(fd, RM_MSG_CALL, ++seq, &w) != RM_OK ||
        rm_recv(fd, &h, &rbuf, &rcap) != RM_OK || h.kind != RM_MSG_REPLY) {
        rm_wr_free(&w);
        return -1;
    }
    rm_wr_free(&w);
    *ret = -1;
    if (rm_decode_reply(&c, ret, rbuf, h.length, NULL, &status) != RM_OK)
        return -1;
    return (int)status;
}

static void expect(const char *what, int got, int want)
{
    printf("%s: %s\n", what, got == want ? "as expected" : "UNEXPECTED");
    if (got != want) {
        fprintf(stderr, "e2e_remote_liar: %s: status %d, expected %d\n", what, got, want);
        failures++;
    }
}

int main(int argc, char **argv)
{
    char err[256];
    rm_meta m;
    rm_hello mine, theirs;
    if (argc != 2)
        return 2;
    rm_meta_generated(&m);
    plans = rm_plans_build(&m);
    if (plans == NULL || (fd = rm_connect(argv[1], err, sizeof err)) < 0) {
        fprintf(stderr, "e2e_remote_liar: %s\n", plans ? err : "no plans");
        return 2;
    }
    rm_hello_make(&mine, plans, "e2e_remote_liar", (uint32_t)getpid());
    if (rm_client_hello(fd, &mine, NULL, argv[1], NULL, &theirs, &rbuf, &rcap, err, sizeof err) != 0) {
        fprintf(stderr, "e2e_remote_liar: hello: %s\n", err);
        return 2;
    }
    int32_t ret;
    uint8_t p[512] __attribute__((aligned(16)));
    void *handle = NULL, *out = &handle;
    const rm_plan *create = plan("cublasCreate_v2"), *sgemm = plan("cublasSgemm_v2"),
                  *mode = plan("cublasSetPointerMode_v2"), *version = plan("cublasGetVersion_v2");
    memset(p, 0, sizeof p);
    put(create, p, "handle", &out, sizeof out);
    expect("cublasCreate_v2", call(create, p, &ret) == RM_ST_OK && ret == 0 && handle != NULL, 1);

    /* an SGEMM whose matrices are bogus addresses: it must never run */
    float alpha = 2;
    void *pa = &alpha, *bogus = (void *)(uintptr_t)0x40;
    int dim = 1;
    memset(p, 0, sizeof p);
    put(sgemm, p, "handle", &handle, sizeof handle);
    put(sgemm, p, "m", &dim, sizeof dim);
    put(sgemm, p, "n", &dim, sizeof dim);
    put(sgemm, p, "k", &dim, sizeof dim);
    put(sgemm, p, "lda", &dim, sizeof dim);
    put(sgemm, p, "ldb", &dim, sizeof dim);
    put(sgemm, p, "ldc", &dim, sizeof dim);
    put(sgemm, p, "A", &bogus, sizeof bogus);
    put(sgemm, p, "B", &bogus, sizeof bogus);
    put(sgemm, p, "C", &bogus, sizeof bogus);
    put(sgemm, p, "alpha", &bogus, sizeof bogus);   /* "a device address" of a host-mode handle */
    put(sgemm, p, "beta", &bogus, sizeof bogus);
    lie_how = RM_SCALAR_DEVICE;
    expect("sgemm, device scalars claimed on a host-mode handle", call(sgemm, p, &ret), RM_ST_MALFORMED);

    int32_t dev = 1;   /* CUBLAS_POINTER_MODE_DEVICE */
    uint8_t q[64] __attribute__((aligned(16))) = {0};
    put(mode, q, "handle", &handle, sizeof handle);
    put(mode, q, "mode", &dev, sizeof dev);
    expect("cublasSetPointerMode_v2 device", call(mode, q, &ret) == RM_ST_OK && ret == 0, 1);
    put(sgemm, p, "alpha", &pa, sizeof pa);   /* host bytes for a device-mode handle */
    put(sgemm, p, "beta", &pa, sizeof pa);
    lie_how = RM_SCALAR_HOST;
    expect("sgemm, host scalars claimed on a device-mode handle", call(sgemm, p, &ret), RM_ST_MALFORMED);

    /* cuBLASLt: a host-mode descriptor, device-claimed scalars */
    const rm_plan *ltcreate = plan("cublasLtCreate"), *dcreate = plan("cublasLtMatmulDescCreate"),
                  *matmul = plan("cublasLtMatmul");
    void *lt = NULL, *desc = NULL, *plt = &lt, *pdesc = &desc;
    int32_t compute = 68 /* CUBLAS_COMPUTE_32F */, scale = 0 /* CUDA_R_32F */;
    memset(q, 0, sizeof q);
    put(ltcreate, q, "lightHandle", &plt, sizeof plt);
    expect("cublasLtCreate", call(ltcreate, q, &ret) == RM_ST_OK && ret == 0 && lt != NULL, 1);
    memset(q, 0, sizeof q);
    put(dcreate, q, "matmulDesc", &pdesc, sizeof pdesc);
    put(dcreate, q, "computeType", &compute, sizeof compute);
    put(dcreate, q, "scaleType", &scale, sizeof scale);
    expect("cublasLtMatmulDescCreate", call(dcreate, q, &ret) == RM_ST_OK && ret == 0 && desc != NULL, 1);
    memset(p, 0, sizeof p);
    put(matmul, p, "lightHandle", &lt, sizeof lt);
    put(matmul, p, "computeDesc", &desc, sizeof desc);
    put(matmul, p, "alpha", &bogus, sizeof bogus);
    put(matmul, p, "beta", &bogus, sizeof bogus);
    put(matmul, p, "A", &bogus, sizeof bogus);
    lie_how = RM_SCALAR_DEVICE;
    expect("lt matmul, device scalars claimed on a host-mode descriptor", call(matmul, p, &ret), RM_ST_MALFORMED);

    /* cuBLASLt descriptors are numbers the back end gave (rm_ltid.h): any other value is refused before the call
       runs (the fake cuBLASLt would read through it) */
    expect("the descriptor is the back end's number", rm_ltid_is((uint64_t)(uintptr_t)desc), 1);
    const rm_plan *dset = plan("cublasLtMatmulDescSetAttribute");
    int32_t trans = 1;
    const void *ptrans = &trans;
    size_t tsize = sizeof trans;
    void *fakes[2] = { (void *)(uintptr_t)0x7f0000001000ull, (void *)(uintptr_t)((uint64_t)(uintptr_t)desc + 1000) };
    const char *what[2] = { "a descriptor value the back end did not give", "a descriptor number not given yet" };
    for (int i = 0; i < 2; i++) {
        memset(q, 0, sizeof q);
        put(dset, q, "matmulDesc", &fakes[i], sizeof fakes[i]);
        put(dset, q, "attr", &trans, sizeof trans);   /* CUBLASLT_MATMUL_DESC_SCALE_TYPE is 1 too: any */
        put(dset, q, "buf", &ptrans, sizeof ptrans);
        put(dset, q, "sizeInBytes", &tsize, sizeof tsize);
        expect(what[i], call(dset, q, &ret), RM_ST_MALFORMED);
    }

    /* handles are numbers the back end gave too (rm_num.h): a made-up one, or one destroyed, is answered as cuBLAS
       answers a bad handle (CUBLAS_STATUS_NOT_INITIALIZED, 1) before the library sees it - the fake would read
       through the made-up value and crash, and answers a destroyed one CUBLAS_STATUS_INVALID_VALUE */
    const rm_plan *destroy = plan("cublasDestroy_v2"), *heur = plan("cublasLtMatmulAlgoGetHeuristic");
    void *madeup = (void *)(uintptr_t)0x7f0000001000ull, *h2 = NULL, *ph2 = &h2;
    int v = 0, *pv = &v;
    expect("the handle is the back end's number", rm_ltid_is((uint64_t)(uintptr_t)handle), 1);
    memset(q, 0, sizeof q);
    put(version, q, "handle", &madeup, sizeof madeup);
    put(version, q, "version", &pv, sizeof pv);
    expect("a made-up cublasHandle_t", call(version, q, &ret) == RM_ST_OK && ret == 1, 1);
    memset(q, 0, sizeof q);
    put(create, q, "handle", &ph2, sizeof ph2);
    expect("a second cublasCreate_v2", call(create, q, &ret) == RM_ST_OK && ret == 0 && h2 != NULL, 1);
    memset(q, 0, sizeof q);
    put(destroy, q, "handle", &h2, sizeof h2);
    expect("cublasDestroy_v2 of it", call(destroy, q, &ret) == RM_ST_OK && ret == 0, 1);
    memset(q, 0, sizeof q);
    put(version, q, "handle", &h2, sizeof h2);
    put(version, q, "version", &pv, sizeof pv);
    expect("a destroyed cublasHandle_t", call(version, q, &ret) == RM_ST_OK && ret == 1, 1);
    memset(q, 0, sizeof q);
    put(destroy, q, "handle", &h2, sizeof h2);
    expect("cublasDestroy_v2 of it again", call(destroy, q, &ret) == RM_ST_OK && ret == 1, 1);
    memset(p, 0, sizeof p);
    put(heur, p, "lightHandle", &madeup, sizeof madeup);
    put(heur, p, "operationDesc", &desc, sizeof desc);
    expect("a made-up cublasLtHandle_t", call(heur, p, &ret) == RM_ST_OK && ret == 1, 1);
    /* a cuBLAS handle may be cast to a cuBLASLt handle (cuBLAS's documentation; PyTorch does), but cublasLtDestroy
       of one is a bad handle: the cuBLAS handle is its own Destroy's to end, and works after it; the reverse cast
       (a cuBLASLt handle as a cublasHandle_t) is not allowed */
    const rm_plan *ltdestroy = plan("cublasLtDestroy");
    memset(q, 0, sizeof q);
    put(ltdestroy, q, "lightHandle", &handle, sizeof handle);
    expect("cublasLtDestroy of a cuBLAS handle", call(ltdestroy, q, &ret) == RM_ST_OK && ret == 1, 1);
    memset(q, 0, sizeof q);
    put(version, q, "handle", &handle, sizeof handle);
    put(version, q, "version", &pv, sizeof pv);
    expect("the cuBLAS handle after it", call(version, q, &ret) == RM_ST_OK && ret == 0, 1);
    memset(q, 0, sizeof q);
    put(version, q, "handle", &lt, sizeof lt);
    put(version, q, "version", &pv, sizeof pv);
    expect("a cublasLtHandle_t as a cublasHandle_t", call(version, q, &ret) == RM_ST_OK && ret == 1, 1);

    /* a number of another kind: a layout, or a cuBLAS handle, named as a matmul descriptor (the library would take
       one object for another) */
    const rm_plan *lcreate = plan("cublasLtMatrixLayoutCreate");
    void *layout = NULL, *playout = &layout;
    uint64_t rows = 4;
    memset(q, 0, sizeof q);
    put(lcreate, q, "matLayout", &playout, sizeof playout);
    put(lcreate, q, "type", &scale, sizeof scale);
    put(lcreate, q, "rows", &rows, sizeof rows);
    put(lcreate, q, "cols", &rows, sizeof rows);
    put(lcreate, q, "ld", &rows, sizeof rows);
    expect("cublasLtMatrixLayoutCreate", call(lcreate, q, &ret) == RM_ST_OK && ret == 0 && layout != NULL, 1);
    void *others[2] = { layout, handle };
    const char *other[2] = { "a layout's number as a matmul descriptor", "a handle's number as a matmul descriptor" };
    for (int i = 0; i < 2; i++) {
        memset(q, 0, sizeof q);
        put(dset, q, "matmulDesc", &others[i], sizeof others[i]);
        put(dset, q, "attr", &trans, sizeof trans);
        put(dset, q, "buf", &ptrans, sizeof ptrans);
        put(dset, q, "sizeInBytes", &tsize, sizeof tsize);
        expect(other[i], call(dset, q, &ret), RM_ST_MALFORMED);
    }
    /* an attribute whose value is a cuBLASLt object (CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR: an emulation
       descriptor) must hold a live number of its kind too */
    if (dset->num_attr_kind != 0) {
        int32_t eattr = (int32_t)dset->num_attr_value;
        const void *pmade = &madeup;
        size_t esize = sizeof madeup;
        memset(q, 0, sizeof q);
        put(dset, q, "matmulDesc", &desc, sizeof desc);
        put(dset, q, "attr", &eattr, sizeof eattr);
        put(dset, q, "buf", &pmade, sizeof pmade);
        put(dset, q, "sizeInBytes", &esize, sizeof esize);
        expect("a made-up emulation descriptor as an attribute value", call(dset, q, &ret), RM_ST_MALFORMED);
    } else {
        expect("no emulation descriptor attribute in this tree", 1, 1);
    }

    /* NCCL (docs/remote.md, "NCCL"): ncclRedOpCreatePreMulSum's scalar must go the way its residence says, and a
       communicator must be a live number; refused before libnccl runs (where the tree has NCCL) */
    const cushim_api_info *pms = NULL;
    for (uint32_t i = 0; i < plans->count; i++)
        if (strcmp(plans->all[i].info->name, "ncclRedOpCreatePreMulSum") == 0)
            pms = plans->all[i].info;
    if (pms != NULL) {
        const rm_plan *premul = plan("ncclRedOpCreatePreMulSum"), *count = plan("ncclCommCount");
        int32_t op = 0, *pop = &op, residence[2] = { 1, 0 };   /* ncclScalarHostImmediate, ncclScalarDevice */
        int how[2] = { RM_SCALAR_DEVICE, RM_SCALAR_HOST }, saved = lie_how;
        const char *claim[2] = { "a host-resident NCCL scalar claimed a device address",
                                 "a device-resident NCCL scalar claimed a host value" };
        float factor = 2;
        void *pf = &factor;
        for (int i = 0; i < 2; i++) {
            lie_how = how[i];
            memset(q, 0, sizeof q);
            put(premul, q, "op", &pop, sizeof pop);
            put(premul, q, "scalar", &pf, sizeof pf);
            put(premul, q, "residence", &residence[i], sizeof residence[i]);
            expect(claim[i], call(premul, q, &ret), RM_ST_MALFORMED);
        }
        lie_how = saved;
        int n = 0, *pn = &n;
        memset(q, 0, sizeof q);
        put(count, q, "comm", &madeup, sizeof madeup);
        put(count, q, "count", &pn, sizeof pn);
        expect("a made-up ncclComm_t", call(count, q, &ret), RM_ST_MALFORMED);
    } else {
        for (int i = 0; i < 3; i++)
            expect("no NCCL in this tree", 1, 1);
    }

    /* the back end still serves */
    memset(q, 0, sizeof q);
    put(version, q, "handle", &handle, sizeof handle);
    put(version, q, "version", &pv, sizeof pv);
    expect("cublasGetVersion_v2 afterwards", call(version, q, &ret) == RM_ST_OK && ret == 0 && v > 0, 1);
    close(fd);
    free(rbuf);
    rm_plans_free(plans);
    return failures != 0;
}
