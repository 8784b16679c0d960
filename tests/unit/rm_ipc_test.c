/*
 * rm_ipc_test.c - the table of CUDA IPC handles one cushim-serve keeps for its back ends (remote/rm_ipc.c,
 * docs/remote.md "IPC"): an export is found under its identity and only that one; a handle not exported, or whose
 * exporter ended, is unknown; forgetting a back end forgets its handles only; the table shared with forked
 * children (the back ends) both ways; a full table takes the entries of dead exporters; a back end that dies
 * holding the lock does not stop the others (robust mutex).
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "rm_ipc.h"

static void fill(uint8_t *b, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (uint8_t)(seed * 131 + i * 7);
}

static pid_t dead_pid(void)   /* a pid that was a process and has been reaped */
{
    pid_t p = fork();
    if (p == 0)
        _exit(0);
    waitpid(p, NULL, 0);
    return p;
}

static void test_identity(void **state)
{
    (void)state;
    rm_ipc *t = rm_ipc_create();
    uint8_t h[RM_IPC_HANDLE], h2[RM_IPC_HANDLE], a[RM_IPC_ID], b[RM_IPC_ID];
    assert_non_null(t);
    fill(h, sizeof h, 1), fill(h2, sizeof h2, 2), fill(a, sizeof a, 3), fill(b, sizeof b, 4);
    assert_int_equal(rm_ipc_check(t, RM_IPC_MEM, h, a), RM_IPC_UNKNOWN);
    assert_int_equal(rm_ipc_export(t, RM_IPC_MEM, h, a, getpid()), 0);
    assert_int_equal(rm_ipc_check(t, RM_IPC_MEM, h, a), RM_IPC_SAME);
    assert_int_equal(rm_ipc_check(t, RM_IPC_MEM, h, b), RM_IPC_OTHER);
    assert_int_equal(rm_ipc_check(t, RM_IPC_EVENT, h, a), RM_IPC_UNKNOWN);   /* the kinds are apart */
    assert_int_equal(rm_ipc_check(t, RM_IPC_MEM, h2, a), RM_IPC_UNKNOWN);
    /* exported again by another identity: the first exporter stays */
    assert_int_equal(rm_ipc_export(t, RM_IPC_MEM, h, b, getpid()), 0);
    assert_int_equal(rm_ipc_check(t, RM_IPC_MEM, h, b), RM_IPC_OTHER);
    /* an exporter that ended: unknown, and its bytes may be exported anew */
    pid_t gone = dead_pid();
    assert_int_equal(rm_ipc_export(t, RM_IPC_MEM, h2, a, gone), 0);
    assert_int_equal(rm_ipc_check(t, RM_IPC_MEM, h2, a), RM_IPC_UNKNOWN);
    assert_int_equal(rm_ipc_export(t, RM_IPC_MEM, h2, b, getpid()), 0);
    assert_int_equal(rm_ipc_check(t, RM_IPC_MEM, h2, b), RM_IPC_SAME);
    /* forgetting one back end forgets its handles only */
    uint8_t h3[RM_IPC_HANDLE];
    fill(h3, sizeof h3, 5);
    pid_t child = fork();
    if (child == 0) {   /* a back end: exports into the inherited table, then waits to be killed */
        rm_ipc_export(t, RM_IPC_EVENT, h3, a, getpid());
        pause();
        _exit(0);
    }
    for (int i = 0; i < 5000 && rm_ipc_check(t, RM_IPC_EVENT, h3, a) != RM_IPC_SAME; i++)
        usleep(1000);
    assert_int_equal(rm_ipc_check(t, RM_IPC_EVENT, h3, a), RM_IPC_SAME);   /* seen by the parent: shared */
    rm_ipc_forget(t, child);
    assert_int_equal(rm_ipc_check(t, RM_IPC_EVENT, h3, a), RM_IPC_UNKNOWN);
    assert_int_equal(rm_ipc_check(t, RM_IPC_MEM, h, a), RM_IPC_SAME);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
}

static void test_full(void **state)
{
    (void)state;
    rm_ipc *t = rm_ipc_create();
    uint8_t h[RM_IPC_HANDLE], a[RM_IPC_ID];
    assert_non_null(t);
    fill(a, sizeof a, 9);
    pid_t gone = dead_pid();
    for (unsigned i = 0; i < RM_IPC_SLOTS; i++) {
        memset(h, 0, sizeof h);
        memcpy(h, &i, sizeof i);
        assert_int_equal(rm_ipc_export(t, RM_IPC_MEM, h, a, i < 10 ? gone : getpid()), 0);
    }
    /* full: 10 entries of a dead exporter are taken, then no more */
    for (unsigned i = RM_IPC_SLOTS; i < RM_IPC_SLOTS + 10; i++) {
        memset(h, 0, sizeof h);
        memcpy(h, &i, sizeof i);
        assert_int_equal(rm_ipc_export(t, RM_IPC_MEM, h, a, getpid()), 0);
        assert_int_equal(rm_ipc_check(t, RM_IPC_MEM, h, a), RM_IPC_SAME);
    }
    unsigned i = RM_IPC_SLOTS + 10;
    memset(h, 0, sizeof h);
    memcpy(h, &i, sizeof i);
    assert_int_equal(rm_ipc_export(t, RM_IPC_MEM, h, a, getpid()), -1);
    assert_int_equal(rm_ipc_check(t, RM_IPC_MEM, h, a), RM_IPC_UNKNOWN);
}

static void test_owner_died(void **state)
{
    (void)state;
    rm_ipc *t = rm_ipc_create();
    uint8_t h[RM_IPC_HANDLE], a[RM_IPC_ID];
    assert_non_null(t);
    fill(h, sizeof h, 11), fill(a, sizeof a, 12);
    pid_t child = fork();
    if (child == 0) {   /* dies holding the table's lock: its first member is the mutex */
        pthread_mutex_lock((pthread_mutex_t *)(void *)t);
        _exit(0);
    }
    waitpid(child, NULL, 0);
    assert_int_equal(rm_ipc_export(t, RM_IPC_MEM, h, a, getpid()), 0);   /* would hang without ROBUST */
    assert_int_equal(rm_ipc_check(t, RM_IPC_MEM, h, a), RM_IPC_SAME);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_identity),
        cmocka_unit_test(test_full),
        cmocka_unit_test(test_owner_died),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
