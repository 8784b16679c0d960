/*
 * e2e_fork.c - a CUDA program that forks, and one that execs itself.
 *
 * After the driver is initialised the process forks: the child's calls are
 * still caught by the hooks (inherited with the address space) and by the
 * shim's counter, which writes '<CUSHIM_COUNTS>.<pid>' for the child;
 * run_counts.sh compares each child's file with what the fake received in that
 * child. The parent's counts are not disturbed by the child. Then it execs
 * itself ("--exec-child"): the new image gets the shim again from the
 * inherited environment (LD_PRELOAD), so its calls are caught too.
 */
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "e2e_common.h"

static CUcontext setup(void)
{
    CUdevice dev;
    CUcontext ctx = NULL;
    E2E_CU(cuInit(0));
    E2E_CU(cuDeviceGet(&dev, 0));
    E2E_CU(cuDevicePrimaryCtxRetain(&ctx, dev));
    E2E_CU(cuCtxSetCurrent(ctx));
    return ctx;
}

static void some_work(int n)
{
    for (int i = 0; i < n; i++) {
        CUdeviceptr d;
        E2E_CU(cuMemAlloc_v2(&d, 64));
        E2E_CU(cuMemFree_v2(d));
    }
}

static int child_status(pid_t pid)
{
    int st = 0;
    if (waitpid(pid, &st, 0) != pid)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--exec-child") == 0) {
        e2e_init("e2e_fork(exec child)");
        e2e_record(E2E_LIB_DRIVER);
        setup();
        some_work(5);
        e2e_expect("cuMemAlloc_v2", 5);
        e2e_expect_hooks_match_fake(E2E_LIB_DRIVER);
        return e2e_finish();
    }

    e2e_init("e2e_fork");
    e2e_record(E2E_LIB_DRIVER);
    CUcontext ctx = setup();
    some_work(3);
    fflush(stdout);

    pid_t pid = fork();
    if (pid == 0) {
        /* The child: same hooks, same context; counts continue from the parent's in the recorder. */
        uint64_t before = e2e_pre("cuMemAlloc_v2");
        uint64_t fake_before = e2e_fake_count("cuMemAlloc_v2");
        CUcontext cur = NULL;
        E2E_CU(cuCtxGetCurrent(&cur));
        E2E_CHECK(cur == ctx, "child context %p, parent's %p", (void *)cur, (void *)ctx);
        some_work(7);
        E2E_CHECK(e2e_pre("cuMemAlloc_v2") - before == 7, "child: hooks saw %llu allocations, expected 7",
                  (unsigned long long)(e2e_pre("cuMemAlloc_v2") - before));
        E2E_CHECK(e2e_fake_count("cuMemAlloc_v2") - fake_before == 7, "child: the fake received %llu",
                  (unsigned long long)(e2e_fake_count("cuMemAlloc_v2") - fake_before));
        _exit(e2e_finish());   /* _exit: the parent's atexit handlers stay the parent's */
    }
    E2E_CHECK(pid > 0, "fork failed");
    E2E_CHECK(child_status(pid) == 0, "forked child failed");

    pid = fork();
    if (pid == 0) {
        execl("/proc/self/exe", argv[0], "--exec-child", (char *)NULL);
        _exit(127);
    }
    E2E_CHECK(pid > 0 && child_status(pid) == 0, "exec'd child failed");

    /* The parent is unaffected by its children. */
    some_work(2);
    e2e_expect("cuMemAlloc_v2", 5);
    e2e_expect("cuMemFree_v2", 5);
    e2e_expect_hooks_match_fake(E2E_LIB_DRIVER);
    return e2e_finish();
}
