/*
 * log.c - the one logging module: leveled messages to stderr or CUSHIM_LOG_FILE.
 *
 * The log reads its own two variables, once, on first need (any thread, also
 * before the library's constructor: a dlsym from another constructor):
 *   CUSHIM_LOG=debug|info|warn|error|off   (any case; default warn)
 *   CUSHIM_LOG_FILE=<path>    log there (appended) instead of stderr; a regular
 *                             file only (a FIFO is refused, never waited on)
 * A rejected value gets one line (env.c says which), written once the level
 * and the file are known. Lines go to the file opened then while it still is
 * that file, else to standard error while descriptor 2 still is the one the
 * process started with (a program may reuse either number for its own data).
 *
 * One write(2) per message (no stdio buffers, no locks), so it is usable from
 * any thread, after fork, and during process exit.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "env.h"
#include "log.h"
#include "once.h"
#include "cushim/cushim.h"
#include "cushim/cushim_io.h"

static rt_once_t log_once = RT_ONCE_INIT;   /* once.c: no wait on re-entry or after fork */
static int log_level_v = LOG_WARN;
static int log_fd_v = 2;                    /* CUSHIM_LOG_FILE or stderr */
static cushim_stderr_id log_stderr;         /* descriptor 2 at load: lines go there only while it is that */
static dev_t log_file_dev;                  /* the CUSHIM_LOG_FILE opened at load */
static ino_t log_file_ino;

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


/* Lines found while loading, written once the level and the file are known. */
#define LOG_NOTES 4
static struct {
    int level;
    char text[700];
} log_notes[LOG_NOTES];
static int log_nnotes;

static void log_note(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void log_note(int level, const char *fmt, ...)
{
    if (log_nnotes >= LOG_NOTES)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(log_notes[log_nnotes].text, sizeof log_notes[0].text, fmt, ap);
    va_end(ap);
    log_notes[log_nnotes++].level = level;
}

static const char *log_value(int var, const char *v, int *out)
{
    char msg[600];
    if (env_parse(var, v, out, msg, sizeof msg) != 0)
        log_note(LOG_WARN, "%s", msg);
    return v;
}

static void log_load(void)
{
    cushim_stderr_mark(&log_stderr);
    int val, first;
    char q[120];

    log_value(ENV_VAR_LOG, getenv("CUSHIM_LOG"), &val);
    log_level_v = val;

    const char *path = env_path("CUSHIM_LOG_FILE", &first);
    if (first)
        log_note(LOG_WARN, ENV_SECURE_FMT, "CUSHIM_LOG_FILE");
    const char *v = log_value(ENV_VAR_LOG_FILE, path, &val);
    if (val == ENV_PATH_FILE) {
        /* A regular file only, opened without blocking: a FIFO with no reader held the program's first CUDA
           call (or its start) forever, one with a reader could stall every line; the log goes to stderr then. */
        int fd = cushim_open_regular(v, O_WRONLY | O_CREAT | O_APPEND, 0644, NULL, 0);
        int e = errno;
        struct stat st;
        if (fd >= 0 && fstat(fd, &st) == 0) {
            log_fd_v = fd;
            log_file_dev = st.st_dev;
            log_file_ino = st.st_ino;
        } else {
            if (fd >= 0) {
                e = errno;
                close(fd);
            }
            env_quote(v, q, sizeof q);
            if (e == EINVAL || e == ENXIO)   /* ENXIO: a FIFO with no reader, a socket */
                log_note(LOG_WARN, "CUSHIM_LOG_FILE=%s: not a regular file (a FIFO, device, socket or directory); "
                         "logging to stderr", q);
            else
                log_note(LOG_WARN, "CUSHIM_LOG_FILE=%s: cannot open: %s; logging to stderr", q, strerror(e));
        }
    }
    for (int i = 0; i < log_nnotes; i++)
        if (log_notes[i].level >= log_level_v)
            log_line(log_fd_v, log_notes[i].level, log_notes[i].text);
}

int log_level(void)
{
    rt_once(&log_once, log_load);
    return log_level_v;
}

int log_fd(void)
{
    rt_once(&log_once, log_load);
    return log_fd_v;
}

int log_target(void)
{
    int fd = log_fd();
    if (fd == 2)
        return cushim_stderr_fd(&log_stderr);   /* -1: the program has made 2 another file, pipe or socket */
    struct stat st;
    if (fstat(fd, &st) == 0 && st.st_dev == log_file_dev && st.st_ino == log_file_ino)
        return fd;
    return cushim_stderr_fd(&log_stderr);
}

void log_msg(int level, const char *fmt, ...)
{
    if (level < log_level() || level < LOG_DEBUG || level > LOG_ERROR)
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
    int fd = log_target();
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
