/*
 * env.c - the runtime's environment variables as values: the pure parser
 * behind log.c's and config.c's reading of them (fuzzed), the quoting of a
 * value for a log line, and secure-execution mode, in which a variable that
 * names a file or code is ignored.
 *
 *   CUSHIM_DISABLE=<bool>, CUSHIM_LOG=debug|info|warn|error|off (any case),
 *   CUSHIM_LOG_FILE=<path>, CUSHIM_COUNTS=<path>|-, CUSHIM_REAL_LIBCUDA=<path>
 *
 * Nothing here logs or opens a file: it runs before the log knows where to
 * write (log.c reads CUSHIM_LOG and CUSHIM_LOG_FILE through it).
 */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/auxv.h>

#include "env.h"

/* ---- pure parsers (fuzzed: tests/fuzz/fuzz_cfg.c) ---- */

static const char *const env_names[ENV_VAR_COUNT_] = {
    "CUSHIM_DISABLE", "CUSHIM_LOG", "CUSHIM_LOG_FILE", "CUSHIM_COUNTS", "CUSHIM_REAL_LIBCUDA",
};

void env_quote(const char *value, char *buf, size_t cap)
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

static int env_word(const char *v, const char *const *words, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcasecmp(v, words[i]) == 0)
            return (int)i;
    return -1;
}

static int env_reject(int var, const char *value, char *msg, size_t cap, const char *why)
{
    char q[120];
    env_quote(value, q, sizeof q);
    snprintf(msg, cap, "%s=%s: %s", env_names[var], q, why);
    return -1;
}

int env_parse(int var, const char *value, int *out, char *msg, size_t cap)
{
    static const char *const bools[] = { "0", "false", "no", "off", "1", "true", "yes", "on" };
    static const char *const levels[] = { "debug", "info", "warn", "error", "off", "warning" };
    static const int level_of[] = { LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR, LOG_OFF, LOG_WARN };
    if (msg != NULL && cap > 0)
        msg[0] = '\0';
    if (msg == NULL)
        cap = 0;
    if (var < 0 || var >= ENV_VAR_COUNT_) {
        *out = 0;
        if (cap > 0)
            snprintf(msg, cap, "unknown configuration variable #%d", var);
        return -1;
    }
    switch (var) {
    case ENV_VAR_DISABLE: {
        *out = 0;
        if (value == NULL || value[0] == '\0')   /* VAR= on a command line: unset */
            return 0;
        int w = env_word(value, bools, sizeof bools / sizeof bools[0]);
        if (w < 0)
            return env_reject(var, value, msg, cap,
                              "not a boolean (1/0, true/false, yes/no, on/off, any case); the shim stays enabled");
        *out = w >= 4;
        return 0;
    }
    case ENV_VAR_LOG: {
        *out = LOG_WARN;
        if (value == NULL || value[0] == '\0')
            return 0;
        int w = env_word(value, levels, sizeof levels / sizeof levels[0]);
        if (w < 0)
            return env_reject(var, value, msg, cap, "not one of debug, info, warn, error, off (any case); using warn");
        *out = level_of[w];
        return 0;
    }
    default: {
        static const char *const instead[ENV_VAR_COUNT_] = {
            [ENV_VAR_LOG_FILE] = "logging to stderr",
            [ENV_VAR_COUNTS] = "call counts are off",
            [ENV_VAR_REAL_LIBCUDA] = "ignored, the driver is looked for as without it",
        };
        char why[160];
        *out = 0;
        if (value == NULL)
            return 0;
        if (value[0] == '\0') {
            snprintf(why, sizeof why, "empty; %s", instead[var]);
            return env_reject(var, value, msg, cap, why);
        }
        if (strnlen(value, ENV_PATH_MAX) >= ENV_PATH_MAX) {
            snprintf(why, sizeof why, "longer than %d bytes; %s", ENV_PATH_MAX - 1, instead[var]);
            return env_reject(var, value, msg, cap, why);
        }
        if (strcmp(value, "-") == 0 && (var == ENV_VAR_COUNTS || var == ENV_VAR_LOG_FILE)) {
            *out = ENV_PATH_STDERR;
            return 0;
        }
        *out = ENV_PATH_FILE;
        return 0;
    }
    }
}

/* ---- secure-execution mode ---- */

static _Atomic int env_secure_v = -1;   /* -1: not asked yet */

int env_secure(void)
{
    int v = atomic_load_explicit(&env_secure_v, memory_order_relaxed);
    if (v < 0) {
        v = getauxval(AT_SECURE) != 0;
        atomic_store_explicit(&env_secure_v, v, memory_order_relaxed);
    }
    return v;
}

/* Hashes of variable names already reported as ignored: lock-free (fork-safe),
   slots fill in order, so two threads reporting one name meet in one slot. */
#define ENV_LOGGED_MAX 32
static _Atomic uint64_t env_logged[ENV_LOGGED_MAX];

static int env_first_report(const char *name)
{
    uint64_t h = 1469598103934665603ull;
    for (const char *s = name; *s != '\0'; s++)
        h = (h ^ (uint8_t)*s) * 1099511628211ull;
    if (h == 0)
        h = 1;
    for (int i = 0; i < ENV_LOGGED_MAX; i++) {
        uint64_t cur = atomic_load(&env_logged[i]);
        if (cur == 0) {
            uint64_t zero = 0;
            if (atomic_compare_exchange_strong(&env_logged[i], &zero, h))
                return 1;
            cur = zero;
        }
        if (cur == h)
            return 0;
    }
    return 1;   /* table full: report again rather than never */
}

const char *env_path(const char *name, int *first)
{
    const char *v = getenv(name);
    *first = 0;
    if (v == NULL || !env_secure())
        return v;
    *first = env_first_report(name);
    return NULL;
}
