/*
 * rp_hostfn_test.c - the rule by which the remote client runs host functions (plugins/remote/rp_hostfn.c,
 * docs/remote.md "Host functions"), with stand-ins for the server's cuStreamIsCapturing and cuStreamSynchronize
 * that record the order of the steps:
 *   - the function runs after the stream was asked about capture and synchronised, once, with its data;
 *   - a stream being captured (active or invalidated): CUDA_ERROR_NOT_SUPPORTED, logged, nothing synchronised,
 *     the function not run;
 *   - the capture question failing (an invalid stream, a batched call's error): its error, nothing else;
 *   - a failed synchronisation: cuLaunchHostFunc returns it without running the function; a callback gets it as
 *     its status and the call returns CUDA_SUCCESS;
 *   - a NULL function or callback, a callback with flags: CUDA_ERROR_INVALID_VALUE, the server not asked.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "rp_hostfn.h"

/* rc_cudart.c's part, which the hook's half of rp_hostfn.c calls (not under test here) */
int32_t rc_lib_error(uint32_t library, int32_t driver_code)
{
    (void)library;
    return driver_code;
}
int32_t rc_driver_context(void) { return 0; }
int32_t rc_note_error(int32_t r) { return r; }

enum { E_INVALID = 1, E_NOT_SUPPORTED = 801, E_LAUNCH_FAILED = 719, E_INVALID_HANDLE = 400 };

static char steps[64];
static int32_t capture_ret, capture_status, sync_ret, cb_status;
static void *seen_stream, *seen_data;

static void step(char c)
{
    size_t n = strlen(steps);
    if (n + 1 < sizeof steps)
        steps[n] = c, steps[n + 1] = '\0';
}

static int32_t capturing(void *ctx, void *stream, int32_t *status)
{
    assert_ptr_equal(ctx, &steps);
    seen_stream = stream;
    step('c');
    *status = capture_status;
    return capture_ret;
}

static int32_t sync_stream(void *ctx, void *stream)
{
    (void)ctx;
    assert_ptr_equal(stream, seen_stream);
    step('s');
    return sync_ret;
}

static void refused(void *ctx)
{
    (void)ctx;
    step('r');
}

static void fn(void *data)
{
    seen_data = data;
    step('f');
}

static void cb(void *stream, int32_t status, void *data)
{
    assert_ptr_equal(stream, seen_stream);
    seen_data = data;
    cb_status = status;
    step('b');
}

static const rp_hostfn_ops ops = { .capturing = capturing, .sync = sync_stream, .refused = refused, .ctx = &steps,
                                   .e_invalid = E_INVALID, .e_not_supported = E_NOT_SUPPORTED };

static int setup(void **state)
{
    (void)state;
    steps[0] = '\0';
    capture_ret = capture_status = sync_ret = 0;
    cb_status = -1;
    seen_stream = seen_data = NULL;
    return 0;
}

static int data;

static void test_runs_after_sync(void **state)
{
    (void)state;
    rp_hostfn_req q = { .stream = (void *)0x1234, .fn = fn, .data = &data };
    assert_int_equal(rp_hostfn_run(&ops, &q), 0);
    assert_string_equal(steps, "csf");
    assert_ptr_equal(seen_stream, (void *)0x1234);
    assert_ptr_equal(seen_data, &data);
    setup(NULL);
    q = (rp_hostfn_req){ .stream = NULL, .cb = cb, .data = &data };
    assert_int_equal(rp_hostfn_run(&ops, &q), 0);
    assert_string_equal(steps, "csb");
    assert_int_equal(cb_status, 0);
    assert_ptr_equal(seen_data, &data);
}

static void test_capture_refused(void **state)
{
    (void)state;
    for (int32_t st = 1; st <= 2; st++) {   /* CU_STREAM_CAPTURE_STATUS_ACTIVE, _INVALIDATED */
        setup(NULL);
        capture_status = st;
        rp_hostfn_req q = { .stream = (void *)0x10, .fn = fn, .data = &data };
        assert_int_equal(rp_hostfn_run(&ops, &q), E_NOT_SUPPORTED);
        assert_string_equal(steps, "cr");
        setup(NULL);
        capture_status = st;
        q = (rp_hostfn_req){ .stream = (void *)0x10, .cb = cb, .data = &data };
        assert_int_equal(rp_hostfn_run(&ops, &q), E_NOT_SUPPORTED);
        assert_string_equal(steps, "cr");
    }
}

static void test_capture_question_fails(void **state)
{
    (void)state;
    capture_ret = E_INVALID_HANDLE;
    rp_hostfn_req q = { .stream = (void *)0x10, .fn = fn };
    assert_int_equal(rp_hostfn_run(&ops, &q), E_INVALID_HANDLE);
    assert_string_equal(steps, "c");
    setup(NULL);
    capture_ret = E_INVALID_HANDLE;
    q = (rp_hostfn_req){ .stream = (void *)0x10, .cb = cb };
    assert_int_equal(rp_hostfn_run(&ops, &q), E_INVALID_HANDLE);
    assert_string_equal(steps, "c");
}

static void test_sync_fails(void **state)
{
    (void)state;
    sync_ret = E_LAUNCH_FAILED;
    rp_hostfn_req q = { .stream = (void *)0x10, .fn = fn, .data = &data };
    assert_int_equal(rp_hostfn_run(&ops, &q), E_LAUNCH_FAILED);
    assert_string_equal(steps, "cs");
    assert_null(seen_data);
    setup(NULL);
    sync_ret = E_LAUNCH_FAILED;
    q = (rp_hostfn_req){ .stream = (void *)0x10, .cb = cb, .data = &data };
    assert_int_equal(rp_hostfn_run(&ops, &q), 0);
    assert_string_equal(steps, "csb");
    assert_int_equal(cb_status, E_LAUNCH_FAILED);
}

static void test_invalid(void **state)
{
    (void)state;
    rp_hostfn_req q = { .stream = (void *)0x10, .data = &data };
    assert_int_equal(rp_hostfn_run(&ops, &q), E_INVALID);
    q = (rp_hostfn_req){ .stream = (void *)0x10, .cb = cb, .flags = 1 };
    assert_int_equal(rp_hostfn_run(&ops, &q), E_INVALID);
    assert_string_equal(steps, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_runs_after_sync, setup),
        cmocka_unit_test_setup(test_capture_refused, setup),
        cmocka_unit_test_setup(test_capture_question_fails, setup),
        cmocka_unit_test_setup(test_sync_fails, setup),
        cmocka_unit_test_setup(test_invalid, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
