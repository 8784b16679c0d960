/*
 * e2e_plugin_ctor.c - the first CUDA call of the process comes from another
 * library's constructor (e2e_plugin_ctor_lib), before the shim's own
 * constructor: run_plugin.sh checks that the probe plugin's hooks saw it.
 */
#include "e2e_common.h"

extern int e2e_ctor_lib_result;

int main(void)
{
    e2e_init("e2e_plugin_ctor");
    E2E_CHECK(e2e_ctor_lib_result == 0, "the constructor's CUDA calls failed (%d)", e2e_ctor_lib_result);
    int v = 0;
    E2E_CU(cuDriverGetVersion(&v));
    return e2e_finish();
}
