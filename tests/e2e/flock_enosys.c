/*
 * flock_enosys.c - preloaded after the shim by run_trace.sh's 'shared' case: flock(2) as a file system without
 * it answers (Lustre mounted without its flock option: ENOSYS). The trace file must then be written unlocked,
 * as before the lock existed, not refused.
 */
#include <errno.h>
#include <sys/file.h>

__attribute__((visibility("default"))) int flock(int fd, int op)
{
    (void)fd;
    (void)op;
    errno = ENOSYS;
    return -1;
}
