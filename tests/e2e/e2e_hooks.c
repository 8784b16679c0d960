/*
 * e2e_hooks.c - hooks registered through the shim's API change what the driver sees and what the
 * program gets.
 *
 * A pre hook that rewrites a parameter (the fake allocates the new size); a
 * pre hook that skips the call with CUDA_ERROR_OUT_OF_MEMORY (the fake never
 * sees it, the program gets the error, the skipping hook's post still runs and
 * sees the skip, hooks after it see nothing);
 * a post hook that overrides a result; priorities (pre in ascending, post in
 * descending order); removal; and a hook that calls CUDA itself: that call
 * goes straight to the driver (no hook sees it, no recursion) yet still
 * reaches the fake exactly once.
 */
#include <string.h>

#include "e2e_common.h"

static size_t (*fake_last_size)(void);
static size_t (*fake_live)(void);

static int grow_1000(cushim_call *c, void *user, uint64_t *slot)
{
    (void)user, (void)slot;
    cushim_params_cuMemAlloc_v2 *p = c->params;
    if (p->bytesize == 1000)
        p->bytesize = 2000;
    return CUSHIM_CONTINUE;
}

static int refuse_666(cushim_call *c, void *user, uint64_t *slot)
{
    (void)user, (void)slot;
    cushim_params_cuMemAlloc_v2 *p = c->params;
    if (p->bytesize != 666)
        return CUSHIM_CONTINUE;
    cushim_call_set_result(c, CUDA_ERROR_OUT_OF_MEMORY);
    return CUSHIM_SKIP;
}

static int skipped_seen;
static void see_skip(cushim_call *c, void *user, uint64_t *slot)
{
    (void)user, (void)slot;
    if ((c->flags & CUSHIM_CALL_SKIPPED) && cushim_call_result(c) == CUDA_ERROR_OUT_OF_MEMORY)
        skipped_seen++;
}

static void forgive_free(cushim_call *c, void *user, uint64_t *slot)
{
    (void)user, (void)slot;
    cushim_params_cuMemFree_v2 *p = c->params;
    if (p->dptr == (CUdeviceptr)0x1234 && cushim_call_result(c) == CUDA_ERROR_INVALID_VALUE)
        cushim_call_set_result(c, CUDA_SUCCESS);
}

/* Calls CUDA from inside a hook: must go straight to the driver. */
static int nested_calls, nested_ok;
static int query_inside(cushim_call *c, void *user, uint64_t *slot)
{
    (void)c, (void)user, (void)slot;
    size_t f = 0, t = 0;
    nested_calls++;
    if (cuMemGetInfo_v2(&f, &t) == CUDA_SUCCESS && t > 0)
        nested_ok++;
    return CUSHIM_CONTINUE;
}

static char order[64];
static int pre_a(cushim_call *c, void *u, uint64_t *s) { (void)c, (void)u; *s = 7; strcat(order, "a<"); return 0; }
static int pre_b(cushim_call *c, void *u, uint64_t *s) { (void)c, (void)u; *s = 9; strcat(order, "b<"); return 0; }
static void post_a(cushim_call *c, void *u, uint64_t *s) { (void)c, (void)u; strcat(order, *s == 7 ? "a>" : "a?"); }
static void post_b(cushim_call *c, void *u, uint64_t *s) { (void)c, (void)u; strcat(order, *s == 9 ? "b>" : "b?"); }

int main(void)
{
    if (!e2e_init("e2e_hooks")) {
        fprintf(stderr, "e2e_hooks: needs the shim (hooks are the subject)\n");
        e2e_fail(__FILE__, __LINE__, "no shim");
        return e2e_finish();
    }
    fake_last_size = (size_t(*)(void))e2e_fake_sym("fake_cuda_last_alloc_size");
    fake_live = (size_t(*)(void))e2e_fake_sym("fake_cuda_live_allocations");
    E2E_CHECK(fake_last_size && fake_live, "fake inspection functions");
    if (!fake_last_size || !fake_live)
        return e2e_finish();

    uint64_t h_grow, h_refuse, h_forgive, h_nested, h_a, h_b;
    E2E_CU(e2e_hook("cuMemAlloc_v2", 10, grow_1000, NULL, NULL, &h_grow));
    E2E_CU(e2e_hook("cuMemAlloc_v2", 20, refuse_666, see_skip, NULL, &h_refuse));
    E2E_CU(e2e_hook("cuMemFree_v2", 10, NULL, forgive_free, NULL, &h_forgive));
    E2E_CU(e2e_hook("cuMemcpyHtoD_v2", 10, query_inside, NULL, NULL, &h_nested));
    E2E_CU(e2e_hook("cuDeviceGetCount", 20, pre_b, post_b, NULL, &h_b));
    E2E_CU(e2e_hook("cuDeviceGetCount", 10, pre_a, post_a, NULL, &h_a));
    E2E_CALL(CUSHIM_EINVAL, e2e_hook("cuMemAlloc_v2", 0, NULL, NULL, NULL, &h_a));
    e2e_record(E2E_LIB_DRIVER);   /* priority 1000: sees the parameters as the driver will */

    CUdevice dev;
    CUcontext ctx;
    int n = 0;
    E2E_CU(cuInit(0));
    E2E_CU(cuDeviceGetCount(&n));
    E2E_CHECK(strcmp(order, "a<b<b>a>") == 0, "hook order '%s'", order);
    E2E_CU(cuDeviceGet(&dev, 0));
    E2E_CU(cuDevicePrimaryCtxRetain(&ctx, dev));
    E2E_CU(cuCtxSetCurrent(ctx));

    /* Modified parameter. */
    CUdeviceptr d = 0;
    E2E_CU(cuMemAlloc_v2(&d, 1000));
    E2E_CHECK(fake_last_size() == 2000, "the fake allocated %zu bytes, the hook asked for 2000", fake_last_size());
    const cushim_params_cuMemAlloc_v2 *p = e2e_last_params("cuMemAlloc_v2");
    E2E_CHECK(p && p->bytesize == 2000 && p->dptr == &d, "a later hook saw bytesize %zu", p ? p->bytesize : 0);

    /* Skipped call. */
    size_t live = fake_live();
    uint64_t fake_allocs = e2e_fake_count("cuMemAlloc_v2");
    CUdeviceptr untouched = 0xfeed;
    E2E_CALL(CUDA_ERROR_OUT_OF_MEMORY, cuMemAlloc_v2(&untouched, 666));
    E2E_CHECK(untouched == 0xfeed && fake_live() == live && e2e_fake_count("cuMemAlloc_v2") == fake_allocs,
              "skipped allocation reached the fake");
    E2E_CHECK(skipped_seen == 1, "post hook saw %d skipped calls", skipped_seen);
    /* Hooks after the skipping one (the recorder, priority 1000) never saw the call, pre or post. */
    E2E_CHECK(e2e_pre("cuMemAlloc_v2") == 1 && e2e_post("cuMemAlloc_v2") == 1, "recorder saw %llu/%llu",
              (unsigned long long)e2e_pre("cuMemAlloc_v2"), (unsigned long long)e2e_post("cuMemAlloc_v2"));

    /* Overridden result. */
    E2E_CU(cuMemFree_v2((CUdeviceptr)0x1234));
    E2E_CALL(CUDA_ERROR_INVALID_VALUE, cuMemFree_v2((CUdeviceptr)0x4321));

    /* CUDA inside a hook: seen by no hook, reaches the driver once, no recursion. */
    char buf[64] = {0};
    size_t f = 0, t = 0;
    E2E_CU(cuMemcpyHtoD_v2(d, buf, sizeof buf));
    E2E_CU(cuMemcpyHtoD_v2(d, buf, sizeof buf));
    E2E_CU(cuMemGetInfo_v2(&f, &t));
    E2E_CHECK(nested_calls == 2 && nested_ok == 2, "nested %d/%d", nested_ok, nested_calls);
    E2E_CHECK(e2e_pre("cuMemGetInfo_v2") == 1, "hooks saw %llu cuMemGetInfo_v2 calls, expected 1 (the program's)",
              (unsigned long long)e2e_pre("cuMemGetInfo_v2"));
    E2E_CHECK(e2e_fake_count("cuMemGetInfo_v2") == 3, "the fake received %llu cuMemGetInfo_v2 calls, expected 3",
              (unsigned long long)e2e_fake_count("cuMemGetInfo_v2"));

    /* Removal: the size is no longer rewritten; removing twice fails. */
    E2E_CU(e2e_unhook(h_grow));
    E2E_CALL(CUSHIM_ENOENT, e2e_unhook(h_grow));
    CUdeviceptr d2 = 0;
    E2E_CU(cuMemAlloc_v2(&d2, 1000));
    E2E_CHECK(fake_last_size() == 1000, "after removal the fake allocated %zu", fake_last_size());
    E2E_CU(cuMemFree_v2(d2));
    E2E_CU(cuMemFree_v2(d));
    E2E_CU(cuDevicePrimaryCtxRelease_v2(dev));

    e2e_expect("cuMemcpyHtoD_v2", 2);
    e2e_expect("cuDeviceGetCount", 1);
    E2E_CHECK(e2e_pre("cuMemAlloc_v2") == 2 && e2e_fake_count("cuMemAlloc_v2") == 2, "allocs: hooks %llu, fake %llu",
              (unsigned long long)e2e_pre("cuMemAlloc_v2"), (unsigned long long)e2e_fake_count("cuMemAlloc_v2"));
    return e2e_finish();
}
