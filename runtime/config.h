/*
 * config.h - the environment the runtime reads (config.c).
 */
#ifndef RT_CONFIG_H
#define RT_CONFIG_H

#include <stddef.h>

enum { CFG_DISABLE_ENV = 1, CFG_DISABLE_PEER = 2 };   /* rt_config.disable, non-zero: why */
typedef struct rt_config {
    int disable;                /* CUSHIM_DISABLE=1, or another copy of cushim came first */
    int log_level;              /* CUSHIM_LOG */
    int log_fd;                 /* CUSHIM_LOG_FILE or stderr */
    const char *counts_path;    /* CUSHIM_COUNTS or NULL ("-" when counts_fd is set) */
    const char *real_libcuda;   /* CUSHIM_REAL_LIBCUDA or NULL */
    int counts_fd;              /* CUSHIM_COUNTS=-: fd 2 as it was at start (dup, CLOEXEC), or -1 */
} rt_config;
const rt_config *cfg_get(void);
/* Where log lines go: log_fd while it still is the CUSHIM_LOG_FILE opened at load
   (a program that closed it may have reused the number), else stderr. */
int cfg_log_target(void);
/* Secure-execution mode (AT_SECURE: setuid, setgid, file capabilities). */
int cfg_secure(void);
/* getenv for a variable that names a file or code (CUSHIM_REAL_LIBCUDA, CUSHIM_COUNTS,
   CUSHIM_LOG_FILE, CUSHIM_PLUGINS, ...): NULL in secure-execution mode, with one log
   line per variable that was set. Every such variable must be read through this. */
const char *cfg_env_path(const char *name);
/* The value parser behind cfg_get, pure (no environment, no files): checks 'value'
   of variable 'var' (CFG_VAR_*). Returns 0 when accepted (*out: the boolean, the log
   level, or for a path CFG_PATH_STDERR / CFG_PATH_FILE), -1 when not: then 'msg'
   holds the one line to log (variable, quoted value, reason, what happens instead)
   and *out the default. Exposed for the fuzz harness (tests/fuzz/). */
enum { CFG_VAR_DISABLE, CFG_VAR_LOG, CFG_VAR_LOG_FILE, CFG_VAR_COUNTS, CFG_VAR_REAL_LIBCUDA,
       CFG_VAR_COUNT_ };
enum { CFG_PATH_FILE = 1, CFG_PATH_STDERR = 2 };
#define CFG_PATH_MAX 4096            /* longest accepted path value, NUL included */
int cfg_parse(int var, const char *value, int *out, char *msg, size_t cap);
/* 'value' quoted for a log line: non-printable bytes as \xNN, cut at 'cap'. */
void cfg_quote(const char *value, char *buf, size_t cap);

#endif /* RT_CONFIG_H */
