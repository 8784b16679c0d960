/*
 * e2e_foreign_only.c - a program whose only runtime is of another major than the shim's (the fake runtime's
 * other copy: libcudart.so.12 beside a 13.x tree), as a CUDA 12 PyTorch under a shim built from 13.0. Its
 * runtime calls bind to its copy past the shim, unobserved; the driver calls that copy makes are seen; and the
 * shim says so once, naming the copy (reallib.c, rl_scan_copies), since nothing else would tell the user why
 * a trace holds no runtime calls.
 */
#include "e2e_common.h"

int main(void)
{
    e2e_init("e2e_foreign_only");
    e2e_record(E2E_LIB_DRIVER | E2E_LIB_RUNTIME);
    int v = 0;
    void *p = NULL;
    E2E_CU(cudaRuntimeGetVersion(&v));
    E2E_CHECK(v == FOREIGN_VERSION, "the runtime answered %d, expected %d", v, FOREIGN_VERSION);
    E2E_CU(cudaMalloc(&p, 4096));
    E2E_CU(cudaFree(p));
    if (e2e_shim()) {
        E2E_CHECK(e2e_pre("cudaMalloc") == 0 && e2e_pre("cudaRuntimeGetVersion") == 0,
                  "hooks saw the other major's runtime calls (cudaMalloc %llu)", (unsigned long long)e2e_pre("cudaMalloc"));
        E2E_CHECK(e2e_pre("cuMemAlloc_v2") == 1, "the driver allocation of the other major's cudaMalloc was seen %llu "
                  "times, expected 1", (unsigned long long)e2e_pre("cuMemAlloc_v2"));
        int w = e2e_log_lines("of another major than this build's");
        E2E_CHECK(w == 1, "the shim said %d times that the runtime is of another major (expected once)", w);
        E2E_CHECK(e2e_log_lines(FOREIGN_SONAME) >= 1, "the warning does not name %s", FOREIGN_SONAME);
    }
    return e2e_finish();
}
