/*
 * e2e_exit.c - CUDA calls until the very end of the process are counted, and
 * plugins flush after the last of them (issue #10 item 4).
 *
 * Linked with e2e_exit_lib, whose destructor and an atexit handler registered
 * before the shim initialised make CUDA calls; this program registers another
 * handler after the shim initialised. run_exit.sh runs it with the counter on
 * and the probe plugin loaded, then checks that the counts file equals the
 * fake driver's own counts as the probe read them at flush, and that the
 * probe's hooks had seen every one of those calls.
 */
#include <stdlib.h>

#include "e2e_common.h"

int e2e_exit_lib_setup(void);

static void late_handler(void)
{
    int n = 0;
    for (int i = 0; i < 5; i++)
        if (cuDeviceGetCount(&n) != CUDA_SUCCESS) {
            fprintf(stderr, "e2e_exit: FAIL: cuDeviceGetCount in the late atexit handler\n");
            _Exit(1);
        }
}

int main(void)
{
    e2e_init("e2e_exit");
    E2E_CHECK(e2e_exit_lib_setup() == 0, "the library's CUDA set-up failed");
    atexit(late_handler);
    int v = 0;
    E2E_CU(cuDriverGetVersion(&v));
    return e2e_finish();
}
