/*
 * log.c - the one logging module: leveled messages to stderr or CUSHIM_LOG_FILE.
 *
 * One write(2) per message (no stdio buffers, no locks), so it is usable from
 * any thread, after fork, and during process exit.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "cushim/cushim.h"
#include "cushim/cushim_io.h"

static const char *const log_names[] = { "debug", "info", "warn", "error" };

/* "cushim[pid] level: " + text + '\n', cut to one buffer; errno preserved. A control byte of the text (a
   newline in a value a plugin quotes, from the environment or an option) is written as \xNN: one message is
   one line, and nothing can forge another. */
static void log_write(int fd, int level, const char *text, size_t tlen)
{
    static const char hex[] = "0123456789abcdef";
    int saved = errno;
    char buf[1024];
    int n = snprintf(buf, sizeof buf, "cushim[%d] %s: ", (int)getpid(), log_names[level]);
    if (n < 0)
        n = 0;
    size_t len = (size_t)n;
    for (size_t i = 0; i < tlen; i++) {
        unsigned char c = (unsigned char)text[i];
        int ctl = (c < 0x20 && c != '\t') || c == 0x7f;
        if (len + (ctl ? 4 : 1) > sizeof buf - 1)
            break;
        if (!ctl) {
            buf[len++] = (char)c;
        } else {
            buf[len++] = '\\';
            buf[len++] = 'x';
            buf[len++] = hex[c >> 4];
            buf[len++] = hex[c & 15];
        }
    }
    buf[len++] = '\n';
    (void)cushim_write_all(fd, buf, len);   /* never SIGXFSZ: past the file size limit the line is lost */
    errno = saved;
}

void log_line(int fd, int level, const char *text)
{
    if (level < LOG_DEBUG || level > LOG_ERROR || fd < 0)
        return;
    log_write(fd, level, text, strlen(text));
}

void log_msg(int level, const char *fmt, ...)
{
    const rt_config *c = cfg_get();
    if (level < c->log_level || level < LOG_DEBUG || level > LOG_ERROR)
        return;
    int saved = errno;
    char text[1000];
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    errno = saved;
    if (m < 0)
        m = 0;
    int fd = cfg_log_target();
    if (fd >= 0)   /* else standard error is the program's file now: the line is dropped */
        log_write(fd, level, text, (size_t)m < sizeof text ? (size_t)m : sizeof text - 1);
}

/* Formats a reason into 'err' (when given) for the SDK functions that return
   one beside their code; returns CUSHIM_EINVAL so callers can 'return rt_seterr(...)'. */
int rt_seterr(char *err, size_t errlen, const char *fmt, ...)
{
    if (err != NULL && errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return CUSHIM_EINVAL;
}
