/*
 * config.h - the environment the runtime reads (config.c), but the log's own
 * variables (log.h) and the library list (CUSHIM_LIBS, libs.h).
 */
#ifndef RT_CONFIG_H
#define RT_CONFIG_H

enum { CFG_DISABLE_ENV = 1, CFG_DISABLE_PEER = 2 };   /* rt_config.disable, non-zero: why */
typedef struct rt_config {
    int disable;                /* CUSHIM_DISABLE=1, or another copy of cushim came first */
    const char *counts_path;    /* CUSHIM_COUNTS or NULL ("-" when counts_fd is set) */
    const char *real_libcuda;   /* CUSHIM_REAL_LIBCUDA or NULL */
    int no_driver;              /* CUSHIM_REAL_LIBCUDA=none: this process has no driver and loads none (the
                                   remoting's client, `cushim run --remote`): the shim is its libcuda */
    int counts_fd;              /* CUSHIM_COUNTS=-: fd 2 as it was at start (dup, CLOEXEC), or -1 */
} rt_config;
const rt_config *cfg_get(void);
/* getenv for a variable that names a file or code (CUSHIM_REAL_LIBCUDA, CUSHIM_COUNTS,
   CUSHIM_LOG_FILE, CUSHIM_PLUGINS, ...): NULL in secure-execution mode, with one log
   line per variable that was set. Every such variable must be read through this. */
const char *cfg_env_path(const char *name);

#endif /* RT_CONFIG_H */
