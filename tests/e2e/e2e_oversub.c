/*
 * e2e_oversub.c - memlimit's oversubscription and wait policy end to end, against the fake driver and runtime
 * (run by tests/e2e/memlimit.cmake with the shim preloaded). Self-checking: each failed check prints "FAIL ..."
 * and the exit status is 1.
 *
 *   e2e_oversub quota REGION          limit=8MiB,oversubscribe=2 on budget REGION: past the quota cuMemAlloc and
 *                                     cudaMalloc succeed with host-backed managed memory (the fake's placement:
 *                                     host-resident, preferred location CPU, accessed by device 0); the total is
 *                                     bounded at 16 MiB; frees credit the right pool (the region's used and
 *                                     host-backed figures, the fake's residency); cuMemGetInfo reports the quota
 *                                     less device-resident use; stream-ordered, pitched and VMM allocations are
 *                                     refused past the quota as before
 *   e2e_oversub devfull REGION QUOTA BOUND [off]
 *                                     the device (FAKE_CUDA_MEM) is smaller than QUOTA: an allocation past its free
 *                                     memory, refused by the driver, is host-backed when oversubscription is on
 *                                     (BOUND the total allowed), refused with 'off'
 *   e2e_oversub devmap REGION         CUDA_VISIBLE_DEVICES=1,0, limit=1:8MiB: past physical device 1's quota on
 *                                     ordinal 0, host-backed memory accessed by ordinal 0 and charged to physical 1
 *   e2e_oversub usage REGION TOOL     4 MiB host-backed past limit=8MiB: 'cushim-usage REGION' (TOOL) shows them in
 *                                     this process's host_backed column, '--prometheus' as
 *                                     cushim_memlimit_host_backed_bytes; freed, both say 0
 *   e2e_oversub hold REGION BYTES MS  allocate BYTES on device 0, print "held", free them MS ms after a line on
 *                                     standard input (the waiter's "go": its own start-up does not count), exit
 *   e2e_oversub wait REGION SELF BYTES WAIT_MS HOLD_MS EXPECT
 *                                     start 'SELF hold' (another process) holding most of the shared budget for
 *                                     HOLD_MS, then allocate BYTES with on_full=wait: EXPECT 'ok' (it waited until
 *                                     the other freed) or 'oom' (it gave up at the deadline, WAIT_MS)
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fake_cuda.h"
#include "e2e_ml_common.h"
#include "ml_budget.h"


static void expect_pools(const char *what, const char *region, size_t used, size_t spilled)
{
    uint64_t u, s;
    e2e_ml_region_figures(region, &u, &s);
    CHECK(u == used, "%s: the budget charges %llu device bytes, expected %zu", what, (unsigned long long)u, used);
    CHECK(s == spilled, "%s: the budget has %llu host-backed bytes, expected %zu", what, (unsigned long long)s,
          spilled);
    CHECK(fake_cuda_managed_bytes(0, 1) == spilled, "%s: the fake holds %zu managed bytes in host memory, expected %zu",
          what, fake_cuda_managed_bytes(0, 1), spilled);
    CHECK(fake_cuda_bytes_allocated(0) == used, "%s: the fake holds %zu device-resident bytes, expected %zu", what,
          fake_cuda_bytes_allocated(0), used);
}

static void expect_host_backed(const char *what, const void *p)
{
    int pref = 0;
    unsigned acc = 0;
    CHECK(fake_cuda_mem_advice(p, &pref, &acc) == 0, "%s: %p is not managed memory", what, p);
    CHECK(pref == (int)CU_DEVICE_CPU, "%s: preferred location %d, expected the CPU", what, pref);
    CHECK(acc == 1u, "%s: accessed-by mask %#x, expected device 0 alone", what, acc);
}

static int mode_quota(const char *region)
{
    CUdeviceptr a = 0, b = 0, d = 0, e = 0, x = 0;
    void *c = NULL;
    size_t f = 0, t = 0, pitch = 0;
    uint64_t managed_calls;
    e2e_ml_init();
    CHECK(cuMemAlloc(&a, 6 * MiB) == CUDA_SUCCESS, "6 MiB within the quota");
    expect_pools("6 MiB on the device", region, 6 * MiB, 0);
    CHECK(fake_cuda_managed_bytes(0, 0) == 0, "no managed memory yet");

    CHECK(cuMemAlloc(&b, 4 * MiB) == CUDA_SUCCESS, "4 MiB past the 8 MiB quota: host-backed");
    CHECK(b != 0, "a pointer for the host-backed allocation");
    expect_host_backed("cuMemAlloc past the quota", (void *)(uintptr_t)b);
    expect_pools("6 MiB on the device + 4 MiB host-backed", region, 6 * MiB, 4 * MiB);
    CHECK(cuMemsetD8(b, 0x5a, 4 * MiB) == CUDA_SUCCESS, "the host-backed pointer is usable as device memory");

    CHECK(cuMemGetInfo(&f, &t) == CUDA_SUCCESS, "cuMemGetInfo");
    CHECK(t == 8 * MiB && f == 2 * MiB, "cuMemGetInfo: total %zu free %zu, expected the quota and 2 MiB", t, f);

    CHECK(cudaMalloc(&c, 4 * MiB) == cudaSuccess, "cudaMalloc of 4 MiB past the quota: host-backed");
    CHECK(cudaGetLastError() == cudaSuccess, "no error left behind by the runtime");
    expect_host_backed("cudaMalloc past the quota", c);
    expect_pools("6 + 8 host-backed", region, 6 * MiB, 8 * MiB);

    managed_calls = fake_cuda_call_count("cuMemAllocManaged");
    CHECK(cuMemAlloc(&d, 4 * MiB) == CUDA_ERROR_OUT_OF_MEMORY, "past quota x 2 (6 + 8 + 4 > 16 MiB): refused");
    CHECK(fake_cuda_call_count("cuMemAllocManaged") == managed_calls, "the refusal reached no driver allocation");
    {
        void *c2 = NULL;
        CHECK(cudaMalloc(&c2, 4 * MiB) == cudaErrorMemoryAllocation, "cudaMalloc past the bound: refused");
    }
    expect_pools("refused: unchanged", region, 6 * MiB, 8 * MiB);
    (void)cudaGetLastError();

    CHECK(cuMemAlloc(&d, 2 * MiB) == CUDA_SUCCESS, "2 MiB within the quota: on the device");
    expect_pools("the quota full, 8 MiB host-backed", region, 8 * MiB, 8 * MiB);
    CHECK(cuMemAlloc(&x, 1 * MiB) == CUDA_ERROR_OUT_OF_MEMORY, "past quota x 2 (8 + 8 + 1 > 16 MiB): refused");

    /* kinds managed memory cannot stand for keep the refusal */
    CHECK(cuMemAllocAsync(&x, 4 * MiB, NULL) == CUDA_ERROR_OUT_OF_MEMORY, "cuMemAllocAsync past the quota");
    CHECK(cuMemAllocPitch(&x, &pitch, 2048, 2048, 4) == CUDA_ERROR_OUT_OF_MEMORY, "cuMemAllocPitch past the quota");
    {
        CUmemAllocationProp prop;
        CUmemGenericAllocationHandle h = 0;
        memset(&prop, 0, sizeof prop);
        prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
        prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        prop.location.id = 0;
        CHECK(cuMemCreate(&h, 4 * MiB, &prop, 0) == CUDA_ERROR_OUT_OF_MEMORY, "cuMemCreate past the quota");
    }
    expect_pools("other kinds refused", region, 8 * MiB, 8 * MiB);

    /* frees credit the pool each came from */
    CHECK(cuMemFree(b) == CUDA_SUCCESS, "free host-backed");
    expect_pools("host-backed 4 MiB freed", region, 8 * MiB, 4 * MiB);
    CHECK(cuMemFree(a) == CUDA_SUCCESS, "free device");
    expect_pools("device 6 MiB freed", region, 2 * MiB, 4 * MiB);
    CHECK(cuMemAlloc(&e, 6 * MiB) == CUDA_SUCCESS, "6 MiB within the quota again");
    CHECK(fake_cuda_mem_advice((void *)(uintptr_t)e, &(int){0}, &(unsigned){0}) != 0, "within the quota: device memory");
    expect_pools("8 MiB on the device", region, 8 * MiB, 4 * MiB);
    CHECK(cudaFree(c) == cudaSuccess, "cudaFree host-backed");
    CHECK(cuMemFree(d) == CUDA_SUCCESS, "free device 2 MiB");
    CHECK(cuMemFree(e) == CUDA_SUCCESS, "free device 6 MiB");
    expect_pools("all freed", region, 0, 0);
    CHECK(fake_cuda_managed_bytes(0, 0) == 0, "no managed memory left on the device");
    return e2e_ml_verdict("quota");
}

static int mode_devfull(const char *region, size_t quota, size_t bound, int off)
{
    CUdeviceptr a = 0, b = 0, c = 0;
    size_t total = 0;
    e2e_ml_init();
    CHECK(cuDeviceTotalMem(&total, 0) == CUDA_SUCCESS, "cuDeviceTotalMem");
    CHECK(total <= quota, "the device (%zu bytes, FAKE_CUDA_MEM) is smaller than the quota %zu", total, quota);
    CHECK(cuMemAlloc(&a, total / 4 * 3) == CUDA_SUCCESS, "three quarters of the device");
    if (off) {
        CHECK(cuMemAlloc(&b, total / 2) == CUDA_ERROR_OUT_OF_MEMORY, "past the device's free memory: refused");
        expect_pools("refused by the device", region, total / 4 * 3, 0);
    } else {
        CHECK(cuMemAlloc(&b, total / 2) == CUDA_SUCCESS, "past the device's free memory: host-backed");
        expect_host_backed("past the device's free memory", (void *)(uintptr_t)b);
        expect_pools("host-backed after the driver's refusal", region, total / 4 * 3, total / 2);
        /* what is left to the bound, and one page more: refused; then exactly the bound (on the device or in host
           memory, as the device's free memory has it) */
        size_t left = bound - total / 4 * 3 - total / 2;
        uint64_t u, sp;
        CHECK(cuMemAlloc(&c, left + 4096) == CUDA_ERROR_OUT_OF_MEMORY, "past the bound %zu: refused", bound);
        CHECK(cuMemAlloc(&c, left) == CUDA_SUCCESS, "up to the bound %zu", bound);
        e2e_ml_region_figures(region, &u, &sp);
        CHECK(u + sp == bound, "at the bound: %llu + %llu bytes, expected %zu", (unsigned long long)u,
              (unsigned long long)sp, bound);
        CHECK(fake_cuda_bytes_allocated(0) + fake_cuda_managed_bytes(0, 1) == bound, "the fake holds the bound");
        CHECK(cuMemFree(c) == CUDA_SUCCESS && cuMemFree(b) == CUDA_SUCCESS, "free host-backed");
    }
    CHECK(cuMemFree(a) == CUDA_SUCCESS, "free");
    expect_pools("all freed", region, 0, 0);
    return e2e_ml_verdict("devfull");
}

/* TOOL's output for REGION: the last field of this process's row on device 0 (the table), or the value of its
   cushim_memlimit_host_backed_bytes line (--prometheus); "" when absent. */
static void usage_figure(const char *tool, const char *region, int prom, char *out, size_t cap)
{
    char cmd[1024], line[1024], pidlabel[64];
    FILE *f;
    out[0] = '\0';
    snprintf(cmd, sizeof cmd, "env -u LD_PRELOAD -u CUSHIM_PLUGINS '%s' %s '%s'", tool, prom ? "--prometheus" : "",
             region);
    snprintf(pidlabel, sizeof pidlabel, "pid=\"%d\"", (int)getpid());
    if ((f = popen(cmd, "r")) == NULL)
        return;
    while (fgets(line, sizeof line, f) != NULL) {
        char *last = strrchr(line, ' ');
        unsigned slot;
        long pid;
        int dev;
        line[strcspn(line, "\n")] = '\0';
        if (prom) {
            if (!strncmp(line, "cushim_memlimit_host_backed_bytes{", 34) && strstr(line, pidlabel) != NULL &&
                strstr(line, "device=\"0\"") != NULL && last != NULL)
                snprintf(out, cap, "%s", last + 1);
        } else if (sscanf(line, "%u %ld %*s %*s %d", &slot, &pid, &dev) == 3 && pid == (long)getpid() && dev == 0 &&
                   last != NULL) {
            snprintf(out, cap, "%s", last + 1);
        }
    }
    pclose(f);
}

static int mode_usage(const char *region, const char *tool)
{
    CUdeviceptr a = 0, b = 0;
    char table[64], prom[64];
    e2e_ml_init();
    CHECK(cuMemAlloc(&a, 6 * MiB) == CUDA_SUCCESS && cuMemAlloc(&b, 4 * MiB) == CUDA_SUCCESS, "6 + 4 host-backed");
    usage_figure(tool, region, 0, table, sizeof table);
    usage_figure(tool, region, 1, prom, sizeof prom);
    CHECK(!strcmp(table, "4194304"), "cushim usage: host_backed '%s', expected 4194304", table);
    CHECK(!strcmp(prom, "4194304"), "cushim usage --prometheus: host-backed '%s', expected 4194304", prom);
    CHECK(cuMemFree(b) == CUDA_SUCCESS && cuMemFree(a) == CUDA_SUCCESS, "free");
    usage_figure(tool, region, 0, table, sizeof table);
    usage_figure(tool, region, 1, prom, sizeof prom);
    CHECK(!strcmp(table, "0") && !strcmp(prom, "0"), "freed: host-backed '%s' and '%s', expected 0", table, prom);
    return e2e_ml_verdict("usage");
}

static int mode_hold(size_t bytes, unsigned ms)
{
    CUdeviceptr p = 0;
    e2e_ml_init();
    if (cuMemAlloc(&p, bytes) != CUDA_SUCCESS) {
        printf("FAIL hold: cannot allocate %zu\n", bytes);
        return 1;
    }
    printf("held\n");
    fflush(stdout);
    {
        char go[8];
        if (fgets(go, sizeof go, stdin) == NULL)   /* the waiter is ready: hold for MS from now */
            return 1;
    }
    usleep(ms * 1000u);
    cuMemFree(p);
    return 0;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int mode_wait(const char *region, const char *self, size_t bytes, unsigned wait_ms, unsigned hold_ms,
                     const char *expect)
{
    int fd[2], to[2];
    pid_t pid;
    char line[32] = "", holdbytes[32], holdms[32];
    CUdeviceptr p = 0;
    CUresult r;
    double t0, dt;
    FILE *in;
    signal(SIGPIPE, SIG_IGN);   /* a holder that died early is a failed check, not a killed test */
    CHECK(pipe(fd) == 0 && pipe(to) == 0, "pipe");
    snprintf(holdbytes, sizeof holdbytes, "%zu", 6 * MiB);
    snprintf(holdms, sizeof holdms, "%u", hold_ms);
    pid = fork();
    if (pid == 0) {
        dup2(fd[1], 1);
        dup2(to[0], 0);
        close(fd[0]);
        close(fd[1]);
        close(to[0]);
        close(to[1]);
        execl(self, self, "hold", region, holdbytes, holdms, (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    close(to[0]);
    in = fdopen(fd[0], "r");
    CHECK(in != NULL && fgets(line, sizeof line, in) != NULL && !strcmp(line, "held\n"), "the holder holds: '%s'",
          line);
    e2e_ml_init();
    CHECK(write(to[1], "go\n", 3) == 3, "tell the holder to start its time");
    t0 = now_ms();
    r = cuMemAlloc(&p, bytes);
    dt = now_ms() - t0;
    if (!strcmp(expect, "ok")) {
        CHECK(r == CUDA_SUCCESS, "waited for the holder to free: %d after %.0f ms", (int)r, dt);
        CHECK(dt >= hold_ms / 2.0 && dt < wait_ms, "waited %.0f ms (the holder held %u ms, the wait is %u ms)", dt,
              hold_ms, wait_ms);
        if (r == CUDA_SUCCESS)
            cuMemFree(p);
    } else {
        CHECK(r == CUDA_ERROR_OUT_OF_MEMORY, "gave up at the deadline: %d after %.0f ms", (int)r, dt);
        CHECK(dt >= wait_ms * 0.9 && dt < hold_ms, "gave up after %.0f ms (the wait is %u ms)", dt, wait_ms);
        kill(pid, SIGTERM);
    }
    close(to[1]);
    waitpid(pid, NULL, 0);
    if (in != NULL)
        fclose(in);
    printf("wait %s: %.0f ms, %d failures\n", expect, dt, failures);
    return failures ? 1 : 0;
}

/* CUDA_VISIBLE_DEVICES=1,0 with limit=1:8MiB (physical device 1, the process's ordinal 0): 10 MiB past that
   quota on ordinal 0 are host-backed and accessed by ordinal 0 (the driver's numbering), charged to physical
   device 1's host-backed pool in the region (its numbering); freed, nothing is left. */
static int mode_devmap(const char *region)
{
    CUdeviceptr a = 0;
    ml_budget b;
    char err[256];
    e2e_ml_init();
    CHECK(cuMemAlloc(&a, 10 * MiB) == CUDA_SUCCESS, "10 MiB past physical device 1's 8 MiB quota: host-backed");
    expect_host_backed("cuMemAlloc on ordinal 0 = physical 1", (void *)(uintptr_t)a);
    memset(&b, 0, sizeof b);
    if (ml_budget_attach(&b, region, err, sizeof err) != 0) {
        CHECK(0, "attach %s: %s", region, err);
    } else {
        CHECK(ml_budget_spilled(&b, 1) == 10 * MiB && ml_budget_spilled(&b, 0) == 0,
              "host-backed bytes: physical 1 %llu, physical 0 %llu; expected 10 MiB on 1",
              (unsigned long long)ml_budget_spilled(&b, 1), (unsigned long long)ml_budget_spilled(&b, 0));
        CHECK(cuMemFree(a) == CUDA_SUCCESS, "cuMemFree");
        CHECK(ml_budget_spilled(&b, 1) == 0 && ml_budget_used(&b, 1) == 0, "freed: %llu host-backed, %llu used",
              (unsigned long long)ml_budget_spilled(&b, 1), (unsigned long long)ml_budget_used(&b, 1));
        ml_budget_close(&b);
    }
    return e2e_ml_verdict("devmap");
}

int main(int argc, char **argv)
{
    const char *m = argc > 1 ? argv[1] : "";
    if (argc > 2 && strcmp(m, "hold") != 0)
        unlink(argv[2]);   /* a fresh budget: the shim opens it at the first allocation */
    if (!strcmp(m, "quota") && argc == 3)
        return mode_quota(argv[2]);
    if (!strcmp(m, "devfull") && argc >= 5)
        return mode_devfull(argv[2], strtoull(argv[3], NULL, 0), strtoull(argv[4], NULL, 0),
                            argc > 5 && !strcmp(argv[5], "off"));
    if (!strcmp(m, "devmap") && argc == 3)
        return mode_devmap(argv[2]);
    if (!strcmp(m, "usage") && argc == 4)
        return mode_usage(argv[2], argv[3]);
    if (!strcmp(m, "hold") && argc == 5)
        return mode_hold(strtoull(argv[3], NULL, 0), (unsigned)strtoul(argv[4], NULL, 0));
    if (!strcmp(m, "wait") && argc == 8)
        return mode_wait(argv[2], argv[3], strtoull(argv[4], NULL, 0), (unsigned)strtoul(argv[5], NULL, 0),
                         (unsigned)strtoul(argv[6], NULL, 0), argv[7]);
    fprintf(stderr, "usage: e2e_oversub quota REGION | devfull REGION QUOTA BOUND [off] | hold REGION BYTES MS | "
                    "wait REGION SELF BYTES WAIT_MS HOLD_MS ok|oom\n");
    return 2;
}
