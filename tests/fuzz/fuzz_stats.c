/*
 * fuzz_stats.c - libFuzzer harness for 'cushim stats' (tools/cushim-stats.c, built with
 * CUSHIM_STATS_NO_MAIN): its streamed reader of the plugin's layout, its whole-file JSON reader
 * of other layouts, gzip input, the otherData budget, and --close. The input is a file (a
 * memfd, named through /proc/self/fd). Checked for every input: the status is 0 or 1, and a
 * copy --close wrote is itself read back with status 0.
 */
#define _GNU_SOURCE
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_common.h"

int cushim_stats_main(int argc, char **argv);
extern int cushim_stats_quiet;
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int in_fd = -1, out_fd = -1;
static char in_path[64], out_path[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char prog[] = "cushim-stats", close_opt[] = "--close";
    int rc;
    if (in_fd < 0) {
        in_fd = memfd_create("fuzz-in", 0);
        out_fd = memfd_create("fuzz-out", 0);
        FUZZ_CHECK(in_fd >= 0 && out_fd >= 0);
        snprintf(in_path, sizeof in_path, "/proc/self/fd/%d", in_fd);
        snprintf(out_path, sizeof out_path, "/proc/self/fd/%d", out_fd);
        cushim_stats_quiet = 1;
        FUZZ_CHECK(freopen("/dev/null", "w", stdout) != NULL);   /* the tables */
    }
    FUZZ_CHECK(ftruncate(in_fd, 0) == 0);
    FUZZ_CHECK(size == 0 || pwrite(in_fd, data, size, 0) == (ssize_t)size);
    {
        char *argv[] = {prog, in_path, NULL};
        rc = cushim_stats_main(2, argv);
        FUZZ_CHECK(rc == 0 || rc == 1);
    }
    {
        char *argv[] = {prog, close_opt, in_path, out_path, NULL};
        FUZZ_CHECK(ftruncate(out_fd, 0) == 0);
        rc = cushim_stats_main(4, argv);
        FUZZ_CHECK(rc == 0 || rc == 1);
    }
    if (rc == 0) {   /* a closed copy reads back */
        char *argv[] = {prog, out_path, NULL};
        FUZZ_CHECK(cushim_stats_main(2, argv) == 0);
    }
    return 0;
}
