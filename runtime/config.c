/*
 * config.c - the environment the runtime reads, once, on first need.
 *
 * CUSHIM_DISABLE=<bool>     pure pass-through (no hooks run, no counting,
 *                           dlsym and cuGetProcAddress answer like the driver)
 * CUSHIM_LOG=debug|info|warn|error|off   (any case; default warn)
 * CUSHIM_LOG_FILE=<path>    log there (appended) instead of stderr; a regular
 *                           file only (a FIFO is refused, never waited on)
 * CUSHIM_COUNTS=<path>|-    count calls per API, write them at exit ('-': the
 *                           process's stderr as it was at start)
 * CUSHIM_REAL_LIBCUDA=<path> the real driver (drop-in mode; preload mode when
 *                           no libcuda.so.1 is loaded yet)
 *
 * Every value is checked once (cfg_parse); a rejected one gets one line naming
 * the variable, the value, the reason and the default used instead. In
 * secure-execution mode (setuid, setgid, capabilities) a variable that names a
 * file or code is ignored (cfg_env_path), with one line saying so. When another
 * copy of cushim was loaded first (peer.c) this one is disabled, so everything
 * that honours CUSHIM_DISABLE stays out of the way.
 *
 * May run before the library's constructor (a dlsym from another constructor)
 * and from any thread: pthread_once, getenv, open, fcntl only; its own lines are
 * queued and written at the end of cfg_load (log_msg would re-enter cfg_get).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "once.h"
#include "peer.h"
#include "cushim/cushim_io.h"

static rt_config cfg_value = { 0, LOG_WARN, 2, NULL, NULL, -1 };
static rt_once_t cfg_once = RT_ONCE_INIT;   /* once.c: no wait on re-entry or after fork */
static int cfg_is_secure;
static char cfg_counts_buf[CFG_PATH_MAX];
static char cfg_libcuda_buf[CFG_PATH_MAX];
static cushim_stderr_id cfg_stderr; /* descriptor 2 at load: log lines go there only while it is that */
static dev_t cfg_log_dev;            /* the CUSHIM_LOG_FILE opened at load */
static ino_t cfg_log_ino;

/* Lines found while loading, written once the log's level and file are known. */
#define CFG_NOTES 12
static struct {
    int level;
    char text[700];
} cfg_notes[CFG_NOTES];
static int cfg_nnotes;

static void cfg_note(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void cfg_note(int level, const char *fmt, ...)
{
    if (cfg_nnotes >= CFG_NOTES)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cfg_notes[cfg_nnotes].text, sizeof cfg_notes[0].text, fmt, ap);
    va_end(ap);
    cfg_notes[cfg_nnotes++].level = level;
}

/* ---- pure parsers (fuzzed: tests/fuzz/fuzz_cfg.c) ---- */

static const char *const cfg_names[CFG_VAR_COUNT_] = {
    "CUSHIM_DISABLE", "CUSHIM_LOG", "CUSHIM_LOG_FILE", "CUSHIM_COUNTS", "CUSHIM_REAL_LIBCUDA",
};

void cfg_quote(const char *value, char *buf, size_t cap)
{
    static const char hex[] = "0123456789abcdef";
    if (cap == 0)
        return;
    size_t o = 0;
    if (cap > 1)
        buf[o++] = '"';
    for (const unsigned char *s = (const unsigned char *)value; *s != '\0'; s++) {
        /* room for this byte's form, the closing quote and NUL; else "..." */
        size_t need = (*s < 0x20 || *s >= 0x7f || *s == '"' || *s == '\\') ? 4 : 1;
        if (o + need + 5 > cap) {
            if (o + 4 <= cap) {
                memcpy(buf + o, "...", 3);
                o += 3;
            }
            break;
        }
        if (need == 1) {
            buf[o++] = (char)*s;
        } else {
            buf[o++] = '\\';
            buf[o++] = 'x';
            buf[o++] = hex[*s >> 4];
            buf[o++] = hex[*s & 15];
        }
    }
    if (o + 2 <= cap)
        buf[o++] = '"';
    buf[o < cap ? o : cap - 1] = '\0';
}

static int cfg_word(const char *v, const char *const *words, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcasecmp(v, words[i]) == 0)
            return (int)i;
    return -1;
}

static int cfg_reject(int var, const char *value, char *msg, size_t cap, const char *why)
{
    char q[120];
    cfg_quote(value, q, sizeof q);
    snprintf(msg, cap, "%s=%s: %s", cfg_names[var], q, why);
    return -1;
}

int cfg_parse(int var, const char *value, int *out, char *msg, size_t cap)
{
    static const char *const bools[] = { "0", "false", "no", "off", "1", "true", "yes", "on" };
    static const char *const levels[] = { "debug", "info", "warn", "error", "off", "warning" };
    static const int level_of[] = { LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR, LOG_OFF, LOG_WARN };
    if (msg != NULL && cap > 0)
        msg[0] = '\0';
    if (msg == NULL)
        cap = 0;
    if (var < 0 || var >= CFG_VAR_COUNT_) {
        *out = 0;
        if (cap > 0)
            snprintf(msg, cap, "unknown configuration variable #%d", var);
        return -1;
    }
    switch (var) {
    case CFG_VAR_DISABLE: {
        *out = 0;
        if (value == NULL || value[0] == '\0')   /* VAR= on a command line: unset */
            return 0;
        int w = cfg_word(value, bools, sizeof bools / sizeof bools[0]);
        if (w < 0)
            return cfg_reject(var, value, msg, cap,
                              "not a boolean (1/0, true/false, yes/no, on/off, any case); the shim stays enabled");
        *out = w >= 4;
        return 0;
    }
    case CFG_VAR_LOG: {
        *out = LOG_WARN;
        if (value == NULL || value[0] == '\0')
            return 0;
        int w = cfg_word(value, levels, sizeof levels / sizeof levels[0]);
        if (w < 0)
            return cfg_reject(var, value, msg, cap, "not one of debug, info, warn, error, off (any case); using warn");
        *out = level_of[w];
        return 0;
    }
    default: {
        static const char *const instead[CFG_VAR_COUNT_] = {
            [CFG_VAR_LOG_FILE] = "logging to stderr",
            [CFG_VAR_COUNTS] = "call counts are off",
            [CFG_VAR_REAL_LIBCUDA] = "ignored, the driver is looked for as without it",
        };
        char why[160];
        *out = 0;
        if (value == NULL)
            return 0;
        if (value[0] == '\0') {
            snprintf(why, sizeof why, "empty; %s", instead[var]);
            return cfg_reject(var, value, msg, cap, why);
        }
        if (strnlen(value, CFG_PATH_MAX) >= CFG_PATH_MAX) {
            snprintf(why, sizeof why, "longer than %d bytes; %s", CFG_PATH_MAX - 1, instead[var]);
            return cfg_reject(var, value, msg, cap, why);
        }
        if (strcmp(value, "-") == 0 && (var == CFG_VAR_COUNTS || var == CFG_VAR_LOG_FILE)) {
            *out = CFG_PATH_STDERR;
            return 0;
        }
        *out = CFG_PATH_FILE;
        return 0;
    }
    }
}

/* ---- secure-execution mode ---- */

/* Hashes of variable names already reported as ignored: lock-free (fork-safe),
   slots fill in order, so two threads reporting one name meet in one slot. */
#define CFG_LOGGED_MAX 32
static _Atomic uint64_t cfg_logged[CFG_LOGGED_MAX];

static int cfg_first_report(const char *name)
{
    uint64_t h = 1469598103934665603ull;
    for (const char *s = name; *s != '\0'; s++)
        h = (h ^ (uint8_t)*s) * 1099511628211ull;
    if (h == 0)
        h = 1;
    for (int i = 0; i < CFG_LOGGED_MAX; i++) {
        uint64_t cur = atomic_load(&cfg_logged[i]);
        if (cur == 0) {
            uint64_t zero = 0;
            if (atomic_compare_exchange_strong(&cfg_logged[i], &zero, h))
                return 1;
            cur = zero;
        }
        if (cur == h)
            return 0;
    }
    return 1;   /* table full: report again rather than never */
}

#define CFG_SECURE_FMT "secure-execution mode (setuid, setgid or capabilities): %s is ignored"

/* cfg_env_path while loading: the line is queued. */
static const char *cfg_load_path_var(const char *name)
{
    const char *v = getenv(name);
    if (v == NULL || !cfg_is_secure)
        return v;
    if (cfg_first_report(name))
        cfg_note(LOG_WARN, CFG_SECURE_FMT, name);
    return NULL;
}

int cfg_secure(void)
{
    cfg_get();
    return cfg_is_secure;
}

const char *cfg_env_path(const char *name)
{
    cfg_get();
    const char *v = getenv(name);
    if (v == NULL || !cfg_is_secure)
        return v;
    if (cfg_first_report(name))
        log_warn(CFG_SECURE_FMT, name);
    return NULL;
}

/* ---- loading ---- */

static const char *cfg_load_value(int var, const char *v, int *out)
{
    char msg[600];
    if (cfg_parse(var, v, out, msg, sizeof msg) != 0)
        cfg_note(LOG_WARN, "%s", msg);
    return v;
}

static void cfg_load(void)
{
    cushim_stderr_mark(&cfg_stderr);
    cfg_is_secure = getauxval(AT_SECURE) != 0;
    int val;
    char q[120];

    cfg_load_value(CFG_VAR_DISABLE, getenv("CUSHIM_DISABLE"), &val);
    cfg_value.disable = val ? CFG_DISABLE_ENV : 0;

    cfg_load_value(CFG_VAR_LOG, getenv("CUSHIM_LOG"), &val);
    cfg_value.log_level = val;

    const char *v = cfg_load_value(CFG_VAR_LOG_FILE, cfg_load_path_var("CUSHIM_LOG_FILE"), &val);
    if (val == CFG_PATH_FILE) {
        /* A regular file only, opened without blocking: a FIFO with no reader held the program's first CUDA
           call (or its start) forever, one with a reader could stall every line; the log goes to stderr then. */
        int fd = cushim_open_regular(v, O_WRONLY | O_CREAT | O_APPEND, 0644, NULL, 0);
        int e = errno;
        struct stat st;
        if (fd >= 0 && fstat(fd, &st) == 0) {
            cfg_value.log_fd = fd;
            cfg_log_dev = st.st_dev;
            cfg_log_ino = st.st_ino;
        } else {
            if (fd >= 0) {
                e = errno;
                close(fd);
            }
            cfg_quote(v, q, sizeof q);
            if (e == EINVAL || e == ENXIO)   /* ENXIO: a FIFO with no reader, a socket */
                cfg_note(LOG_WARN, "CUSHIM_LOG_FILE=%s: not a regular file (a FIFO, device, socket or directory); "
                         "logging to stderr", q);
            else
                cfg_note(LOG_WARN, "CUSHIM_LOG_FILE=%s: cannot open: %s; logging to stderr", q, strerror(e));
        }
    }

    if (!cfg_value.disable) {
        char peer[512], self[512];
        if (peer_find(peer, self, sizeof peer)) {
            cfg_value.disable = CFG_DISABLE_PEER;
            cfg_note(LOG_INFO, "another copy of cushim was loaded first (%s): this copy (%s) passes every "
                     "call through (no counting, no hooks, no plugins)", peer, self);
        }
    }

    v = cfg_load_value(CFG_VAR_COUNTS, cfg_load_path_var("CUSHIM_COUNTS"), &val);
    if (cfg_value.disable) {
        val = 0;
    } else if (val == CFG_PATH_STDERR) {
        /* The descriptor as it is now: the program may close or redirect fd 2 later. */
        int fd = fcntl(2, F_DUPFD_CLOEXEC, 3);
        if (fd >= 0) {
            cfg_value.counts_fd = fd;
            cfg_value.counts_path = "-";
        } else {
            cfg_note(LOG_ERROR, "CUSHIM_COUNTS=\"-\": standard error is not open (%s); call counts are off",
                     strerror(errno));
        }
    } else if (val == CFG_PATH_FILE) {
        strcpy(cfg_counts_buf, v);   /* length checked by cfg_parse */
        cfg_value.counts_path = cfg_counts_buf;
    }

    v = cfg_load_value(CFG_VAR_REAL_LIBCUDA, cfg_load_path_var("CUSHIM_REAL_LIBCUDA"), &val);
    if (val == CFG_PATH_FILE) {
        strcpy(cfg_libcuda_buf, v);
        cfg_value.real_libcuda = cfg_libcuda_buf;
    }

    for (int i = 0; i < cfg_nnotes; i++)
        if (cfg_notes[i].level >= cfg_value.log_level)
            log_line(cfg_value.log_fd, cfg_notes[i].level, cfg_notes[i].text);
}

int cfg_log_target(void)
{
    const rt_config *c = cfg_get();
    if (c->log_fd == 2)
        return cushim_stderr_fd(&cfg_stderr);   /* -1: the program has made 2 another file, pipe or socket */
    struct stat st;
    if (fstat(c->log_fd, &st) == 0 && st.st_dev == cfg_log_dev && st.st_ino == cfg_log_ino)
        return c->log_fd;
    return cushim_stderr_fd(&cfg_stderr);
}

const rt_config *cfg_get(void)
{
    rt_once(&cfg_once, cfg_load);
    return &cfg_value;
}
