/*
 * rp_blaserr.c - cuBLAS's words for the remoting's errors (rp_blaserr.h): the driver codes the client returns
 * for a call it could not forward, each with the cublasStatus_t a cuBLAS caller gets instead, both read by name
 * from the metadata at init.
 */
#include "rp_blaserr.h"
#include "rm_names.h"

#define RPE_N 6
static const char *const rpe_names[RPE_N][2] = {
    { "CUDA_ERROR_NOT_SUPPORTED", "CUBLAS_STATUS_NOT_SUPPORTED" },
    { "CUDA_ERROR_INVALID_VALUE", "CUBLAS_STATUS_INVALID_VALUE" },
    { "CUDA_ERROR_NOT_FOUND", "CUBLAS_STATUS_NOT_SUPPORTED" },          /* the server has no such function */
    { "CUDA_ERROR_DEVICE_UNAVAILABLE", "CUBLAS_STATUS_NOT_INITIALIZED" }, /* the server is gone */
    { "CUDA_ERROR_OUT_OF_MEMORY", "CUBLAS_STATUS_ALLOC_FAILED" },
    { "CUDA_ERROR_UNKNOWN", "CUBLAS_STATUS_INTERNAL_ERROR" },           /* and every other code */
};

static struct {
    int ready;                    /* rp_blaserr_init ran */
    int32_t drv[RPE_N];           /* driver codes ... */
    int32_t st[RPE_N];            /* ... and their cuBLAS statuses */
} rpe;

void rp_blaserr_init(const cushim_host *host)
{
    for (int i = 0; i < RPE_N; i++) {
        rpe.drv[i] = rm_result_code(host, rpe_names[i][0], -1);
        rpe.st[i] = rm_result_code(host, rpe_names[i][1], 14 /* CUBLAS_STATUS_INTERNAL_ERROR */);
    }
    rpe.ready = 1;
}

int32_t rp_cublas_error(int32_t driver_code)
{
    if (driver_code == 0 || !rpe.ready)
        return driver_code;   /* before rp_blaserr_init: no table yet (never the case for a forwarded call) */
    for (int i = 0; i < RPE_N; i++)
        if (rpe.drv[i] == driver_code)
            return rpe.st[i];
    return rpe.st[RPE_N - 1];
}
