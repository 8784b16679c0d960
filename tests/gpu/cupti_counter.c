/*
 * cupti_counter.c - counts every CUDA driver API call as CUPTI sees it.
 *
 * USAGE:
 *   CUDA_INJECTION64_PATH=/path/libcupti_counter.so CUPTI_COUNTER_OUT=/dir/prefix ./app
 *
 * The driver loads this library at cuInit and calls InitializeInjection(),
 * which subscribes one callback to the whole CUPTI_CB_DOMAIN_DRIVER_API and
 * counts CUPTI_API_ENTER per callback id. The counters live in a MAP_SHARED
 * file '<prefix>.<pid>.bin' (uint64 per cbid), so calls made during
 * process teardown, after every atexit handler and library destructor we
 * could register, are still recorded for as long as CUPTI delivers them.
 * The file holds three arrays: the live counts, a snapshot taken by an atexit
 * handler registered right after subscribing (it runs before CUPTI's own exit
 * handlers), and a snapshot taken by this library's destructor; the snapshots
 * show whether CUPTI stopped reporting during teardown.
 * '<prefix>.<pid>.names' lists 'cbid<TAB>name' for every driver cbid, the
 * names from cuptiGetCallbackName (e.g. 'cuMemAlloc_v2': CUPTI names a cbid
 * after the exported ABI variant it traces; see docs/gpu.md).
 * tests/gpu/compare_counts.py turns both into per-API counts.
 */
#include <cupti.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define CC_EXPORT __attribute__((visibility("default")))

#define CC_SLOTS CUPTI_DRIVER_TRACE_CBID_SIZE
static uint64_t *cc_counts;        /* 3 x CC_SLOTS: live, at exit, at unload */
static CUpti_SubscriberHandle cc_sub;

static void CUPTIAPI cc_callback(void *user, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                 const void *data)
{
    const CUpti_CallbackData *cb = (const CUpti_CallbackData *)data;
    (void)user;
    if (domain != CUPTI_CB_DOMAIN_DRIVER_API || cb->callbackSite != CUPTI_API_ENTER)
        return;
    if (cbid < CC_SLOTS && cc_counts)
        __atomic_fetch_add(&cc_counts[cbid], 1, __ATOMIC_RELAXED);
}

static int cc_write_names(const char *prefix, int pid)
{
    char path[4096];
    snprintf(path, sizeof path, "%s.%d.names", prefix, pid);
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "cupti_counter: cannot write '%s': %s\n", path, strerror(errno));
        return -1;
    }
    for (uint32_t id = 1; id < CC_SLOTS; id++) {
        const char *name = NULL;
        if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, id, &name) == CUPTI_SUCCESS && name)
            fprintf(f, "%u\t%s\n", id, name);
    }
    fclose(f);
    return 0;
}

static int cc_map_counts(const char *prefix, int pid)
{
    char path[4096];
    size_t bytes = sizeof(uint64_t) * CC_SLOTS * 3;
    snprintf(path, sizeof path, "%s.%d.bin", prefix, pid);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        fprintf(stderr, "cupti_counter: cannot create '%s': %s\n", path, strerror(errno));
        return -1;
    }
    if (ftruncate(fd, (off_t)bytes) != 0) {
        fprintf(stderr, "cupti_counter: ftruncate '%s': %s\n", path, strerror(errno));
        close(fd);
        return -1;
    }
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        fprintf(stderr, "cupti_counter: mmap '%s': %s\n", path, strerror(errno));
        return -1;
    }
    cc_counts = (uint64_t *)p;
    return 0;
}

static void cc_snapshot(int section)
{
    if (!cc_counts)
        return;
    for (uint32_t i = 0; i < CC_SLOTS; i++)
        cc_counts[section * CC_SLOTS + i] = __atomic_load_n(&cc_counts[i], __ATOMIC_RELAXED);
}

static void cc_at_exit(void)
{
    cc_snapshot(1);
}

__attribute__((destructor)) static void cc_unload(void)
{
    cc_snapshot(2);
}

CC_EXPORT int InitializeInjection(void)
{
    const char *prefix = getenv("CUPTI_COUNTER_OUT");
    int pid = (int)getpid();
    if (!prefix || !*prefix)
        prefix = "cupti_counts";
    if (cc_counts)
        return 1;
    if (cc_map_counts(prefix, pid) != 0 || cc_write_names(prefix, pid) != 0)
        return 0;
    CUptiResult r = cuptiSubscribe(&cc_sub, (CUpti_CallbackFunc)cc_callback, NULL);
    if (r == CUPTI_SUCCESS)
        r = cuptiEnableDomain(1, cc_sub, CUPTI_CB_DOMAIN_DRIVER_API);
    if (r != CUPTI_SUCCESS) {
        const char *msg = NULL;
        cuptiGetResultString(r, &msg);
        fprintf(stderr, "cupti_counter: subscribe/enable failed: %d (%s)\n", (int)r, msg ? msg : "?");
        return 0;
    }
    atexit(cc_at_exit);
    if (getenv("CUPTI_COUNTER_VERBOSE"))
        fprintf(stderr, "cupti_counter: counting driver API calls into %s.%d.bin\n", prefix, pid);
    return 1;
}
