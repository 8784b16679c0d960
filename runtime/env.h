/*
 * env.h - the runtime's environment variables as values (env.c): their pure
 * parsers, the quoting of a value for a log line, and secure-execution mode.
 * No logging, no files: log.c (CUSHIM_LOG, CUSHIM_LOG_FILE) and config.c (the
 * others) read the variables through it, and the fuzz harness links it alone.
 */
#ifndef RT_ENV_H
#define RT_ENV_H

#include <stddef.h>

/* The levels CUSHIM_LOG names (log.h logs at them). */
enum { LOG_DEBUG = 0, LOG_INFO = 1, LOG_WARN = 2, LOG_ERROR = 3, LOG_OFF = 4 };

/* Checks 'value' of variable 'var' (ENV_VAR_*). Returns 0 when accepted (*out: the boolean, the log
   level, or for a path ENV_PATH_STDERR / ENV_PATH_FILE), -1 when not: then 'msg' holds the one line to
   log (variable, quoted value, reason, what happens instead) and *out the default. Pure: no environment,
   no files (tests/fuzz/fuzz_cfg.c). */
enum { ENV_VAR_DISABLE, ENV_VAR_LOG, ENV_VAR_LOG_FILE, ENV_VAR_COUNTS, ENV_VAR_REAL_LIBCUDA, ENV_VAR_COUNT_ };
enum { ENV_PATH_FILE = 1, ENV_PATH_STDERR = 2 };
#define ENV_PATH_MAX 4096            /* longest accepted path value, NUL included */
int env_parse(int var, const char *value, int *out, char *msg, size_t cap);
/* 'value' quoted for a log line: non-printable bytes as \xNN, cut at 'cap'. */
void env_quote(const char *value, char *buf, size_t cap);

/* Secure-execution mode (AT_SECURE: setuid, setgid, file capabilities). */
int env_secure(void);
/* getenv for a variable that names a file or code (CUSHIM_REAL_LIBCUDA, CUSHIM_COUNTS, CUSHIM_LOG_FILE,
   CUSHIM_PLUGINS, ...): NULL in secure-execution mode, and then *first is 1 the first time 'name' is
   refused (the caller logs ENV_SECURE_FMT once per variable), else 0. Lock-free, fork-safe. */
const char *env_path(const char *name, int *first);
#define ENV_SECURE_FMT "secure-execution mode (setuid, setgid or capabilities): %s is ignored"

#endif /* RT_ENV_H */
