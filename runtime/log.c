/*
 * log.c - the one logging module: leveled messages to stderr or CUSHIM_LOG_FILE.
 *
 * One write(2) per message (no stdio buffers, no locks), so it is usable from
 * any thread, after fork, and during process exit.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "rt_internal.h"

static const char *const log_names[] = { "debug", "info", "warn", "error" };

void log_msg(int level, const char *fmt, ...)
{
    const rt_config *c = cfg_get();
    if (level < c->log_level || level < LOG_DEBUG || level > LOG_ERROR)
        return;
    int saved = errno;
    char buf[1024];
    int n = snprintf(buf, sizeof buf, "cushim[%d] %s: ", (int)getpid(), log_names[level]);
    if (n < 0)
        n = 0;
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
    va_end(ap);
    if (m < 0)
        m = 0;
    size_t len = (size_t)n + (size_t)m;
    if (len > sizeof buf - 2)
        len = sizeof buf - 2;
    buf[len++] = '\n';
    ssize_t w = write(c->log_fd, buf, len);
    (void)w;
    errno = saved;
}
