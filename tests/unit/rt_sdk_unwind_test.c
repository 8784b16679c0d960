/*
 * rt_sdk_unwind_test.c - issue #10 item 6b: a hooked call left without
 * returning must not leave the thread marked "inside a hook" (then no hook
 * ever ran again on it) nor inside an epoch section (then hooks_sync says
 * ESTATE and nothing is reclaimed).
 *
 * Cases: a pre hook longjmps out; a post hook longjmps out; the next call made
 * from a deeper stack than the abandoned one (what an address check alone
 * cannot tell); a nested hooked call (made by a real function) longjmps past
 * both frames; a signal handler siglongjmps out of a blocked real function;
 * a handler on an alternate signal stack calls CUDA while the thread is in a
 * hook (the interrupted frame is live: the handler's call goes straight
 * through and the hook carries on normally). C++ exceptions: rt_sdk_unwind_cxx_test.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <cmocka.h>

#include "cushim_params.h"
#include "rt_internal.h"
#include "rt_test_host.h"

static const cushim_host *host;
static cushim_plugin *plug;
static sigjmp_buf env;
static int pre_calls, post_calls, jump_in_pre, jump_in_post;

static CUresult fake_get_version(int *v)
{
    *v = 13000;
    return CUDA_SUCCESS;
}

/* cuInit's "real" calls the driver like cudart does: a nested hooked call. */
static CUresult fake_init(unsigned int flags)
{
    (void)flags;
    int v;
    return cuDriverGetVersion(&v);
}

static int raise_in_real;
static CUresult fake_ctx(CUcontext *c)
{
    *c = NULL;
    if (raise_in_real)
        raise(SIGUSR1);   /* "blocked" here; the handler siglongjmps out */
    return CUDA_SUCCESS;
}

static void on_usr1(int sig)
{
    (void)sig;
    siglongjmp(env, 2);
}

static int jumping_pre(cushim_call *c, void *u, uint64_t *s)
{
    (void)c, (void)u, (void)s;
    pre_calls++;
    if (jump_in_pre)
        siglongjmp(env, 1);
    return CUSHIM_CONTINUE;
}

static void jumping_post(cushim_call *c, void *u, uint64_t *s)
{
    (void)c, (void)u, (void)s;
    post_calls++;
    if (jump_in_post)
        siglongjmp(env, 1);
}

/* The thread is outside any hooked call again: hooks run, no frame, no section. */
static void assert_clean(void)
{
    assert_false(ep_poisoned());   /* seen exactly, not by the dead-frame fallback */
    assert_null(host->current_call());
    assert_false(rt_in_hook());
    assert_false(ep_inside(rt_tls.rec));
    assert_true(rt_tls.rec == NULL || atomic_load(&rt_tls.rec->in_cb) == 0);
    assert_int_equal(host->hooks_sync(), CUSHIM_OK);   /* ESTATE if still "inside" */
    int before = pre_calls, v;
    jump_in_pre = jump_in_post = 0;
    assert_int_equal(cuDriverGetVersion(&v), CUDA_SUCCESS);
    assert_int_equal(pre_calls, before + 1);
}

static int group_setup(void **state)
{
    (void)state;
    host = rt_host();
    plug = rt_test_plugin("unwind-test");
    rt_record_real(CUSHIM_API_cuDriverGetVersion, (void *)fake_get_version);
    rt_record_real(CUSHIM_API_cuInit, (void *)fake_init);
    rt_record_real(CUSHIM_API_cuCtxGetCurrent, (void *)fake_ctx);
    uint64_t g;
    return rt_hook_sel(plug, "cuDriverGetVersion,cuInit,cuCtxGetCurrent", 0, jumping_pre, jumping_post, NULL, &g);
}

static void test_longjmp_from_pre(void **state)
{
    (void)state;
    int v;
    jump_in_pre = 1;
    if (sigsetjmp(env, 0) == 0) {
        cuDriverGetVersion(&v);
        fail_msg("the hook did not jump");
    }
    assert_clean();
}

static void test_longjmp_from_post(void **state)
{
    (void)state;
    int v;
    jump_in_post = 1;
    if (sigsetjmp(env, 0) == 0) {
        cuDriverGetVersion(&v);
        fail_msg("the hook did not jump");
    }
    assert_clean();
}

/* The next call comes from deeper down the stack than the abandoned frame. */
static __attribute__((noinline)) int deeper(int depth)
{
    volatile char pad[2048];
    pad[0] = (char)depth;
    if (depth > 0) {
        int r = deeper(depth - 1);
        pad[1] = pad[0];   /* keeps the frame (and its depth) alive across the call */
        return r;
    }
    int before = pre_calls, v;
    cuDriverGetVersion(&v);
    return pre_calls - before;
}

static void test_next_call_deeper(void **state)
{
    (void)state;
    int v;
    jump_in_pre = 1;
    if (sigsetjmp(env, 0) == 0)
        cuDriverGetVersion(&v);
    jump_in_pre = 0;
    assert_int_equal(deeper(4), 1);   /* hooked, not taken for a call made by a hook */
    assert_clean();
}

static int nested_jump_pre(cushim_call *c, void *u, uint64_t *s)
{
    (void)u, (void)s;
    if (c->depth == 1) {
        assert_non_null(c->parent);
        assert_int_equal(c->parent->api_id, CUSHIM_API_cuInit);
        siglongjmp(env, 3);
    }
    return CUSHIM_CONTINUE;
}

static void test_longjmp_out_of_two_frames(void **state)
{
    (void)state;
    cushim_hook_spec spec = { .size = sizeof spec, .select = "cuDriverGetVersion,cuInit", .priority = -10,
                              .pre = nested_jump_pre };
    uint64_t g;
    assert_int_equal(host->hooks_add(plug, &spec, &g), CUSHIM_OK);
    int r = sigsetjmp(env, 0);
    if (r == 0) {
        cuInit(0);
        fail_msg("the nested hook did not jump");
    }
    assert_int_equal(r, 3);
    assert_int_equal(host->hooks_remove(plug, g), CUSHIM_OK);
    assert_clean();
}

static void test_siglongjmp_out_of_real(void **state)
{
    (void)state;
    struct sigaction sa = { .sa_handler = on_usr1 }, old;
    sigaction(SIGUSR1, &sa, &old);
    raise_in_real = 1;
    CUcontext ctx;
    int r = sigsetjmp(env, 1);
    if (r == 0) {
        cuCtxGetCurrent(&ctx);
        fail_msg("the handler did not jump");
    }
    raise_in_real = 0;
    sigaction(SIGUSR1, &old, NULL);
    assert_int_equal(r, 2);
    assert_clean();
}

/* A handler on an alternate stack, while this thread runs a hook. */
static int alt_handler_direct, alt_handler_depth_ok, in_alt_pre;
static void on_usr2(int sig)
{
    (void)sig;
    int before = pre_calls, v;
    cuDriverGetVersion(&v);   /* the thread is inside a hook: straight through */
    alt_handler_direct = pre_calls == before;
    alt_handler_depth_ok = rt_in_hook();
}

static int alt_pre(cushim_call *c, void *u, uint64_t *s)
{
    (void)c, (void)u, (void)s;
    if (!in_alt_pre) {
        in_alt_pre = 1;
        raise(SIGUSR2);
        /* Back from the handler: still in this hook. */
        assert_true(rt_in_hook());
        assert_ptr_equal(host->current_call(), c);
    }
    return CUSHIM_CONTINUE;
}

static void *alt_stack_mem;
static void *alt_thread(void *arg)
{
    (void)arg;
    stack_t ss = { .ss_sp = alt_stack_mem, .ss_size = 1 << 16 };
    if (sigaltstack(&ss, NULL) != 0)
        return (void *)1;
    struct sigaction sa = { .sa_handler = on_usr2, .sa_flags = SA_ONSTACK };
    sigaction(SIGUSR2, &sa, NULL);
    int v;
    cuDriverGetVersion(&v);
    return NULL;
}

static void test_altstack_handler(void **state)
{
    (void)state;
    cushim_hook_spec spec = { .size = sizeof spec, .api_id = CUSHIM_API_cuDriverGetVersion, .priority = -20,
                              .pre = alt_pre };
    uint64_t g;
    assert_int_equal(host->hooks_add(plug, &spec, &g), CUSHIM_OK);
    /* The thread's stack mapped low, the alternate stack high: the interrupted
       call's frames lie below the handler's stack pointer, as with an
       alternate stack that happens to be mapped above the thread's. */
    size_t sz = 1 << 20;
    void *a = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    void *b = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(a != MAP_FAILED && b != MAP_FAILED);
    void *stk = (uintptr_t)a < (uintptr_t)b ? a : b;
    alt_stack_mem = stk == a ? b : a;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setstack(&at, stk, sz);
    pthread_t t;
    void *r;
    assert_int_equal(pthread_create(&t, &at, alt_thread, NULL), 0);
    pthread_join(t, &r);
    assert_null(r);
    assert_true(in_alt_pre);
    assert_true(alt_handler_direct);
    assert_true(alt_handler_depth_ok);
    assert_false(ep_poisoned());   /* the live frame was not taken for a dead one */
    assert_int_equal(host->hooks_remove(plug, g), CUSHIM_OK);
    munmap(a, sz);
    munmap(b, sz);
    assert_clean();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_longjmp_from_pre),
        cmocka_unit_test(test_longjmp_from_post),
        cmocka_unit_test(test_next_call_deeper),
        cmocka_unit_test(test_longjmp_out_of_two_frames),
        cmocka_unit_test(test_siglongjmp_out_of_real),
        cmocka_unit_test(test_altstack_handler),
    };
    return cmocka_run_group_tests(tests, group_setup, NULL);
}
