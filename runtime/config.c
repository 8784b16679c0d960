/*
 * config.c - the environment the runtime reads, once, on first need, but the
 * log's own variables (log.c):
 *
 * CUSHIM_DISABLE=<bool>     pure pass-through (no hooks run, no counting,
 *                           dlsym and cuGetProcAddress answer like the driver)
 * CUSHIM_COUNTS=<path>|-    count calls per API, write them at exit ('-': the
 *                           process's stderr as it was at start)
 * CUSHIM_REAL_LIBCUDA=<path> the real driver (drop-in mode; preload mode when
 *                           no libcuda.so.1 is loaded yet)
 *
 * Every value is checked once (env.c); a rejected one gets one line naming
 * the variable, the value, the reason and the default used instead. In
 * secure-execution mode (setuid, setgid, capabilities) a variable that names a
 * file or code is ignored (cfg_env_path), with one line saying so. When another
 * copy of cushim was loaded first (below) this one is disabled, so everything
 * that honours CUSHIM_DISABLE stays out of the way.
 *
 * May run before the library's constructor (a dlsym from another constructor)
 * and from any thread: rt_once, getenv, fcntl and the log only.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "elfsym.h"
#include "env.h"
#include "log.h"
#include "once.h"

static rt_config cfg_value = { .counts_fd = -1 };
static rt_once_t cfg_once = RT_ONCE_INIT;   /* once.c: no wait on re-entry or after fork */
static char cfg_counts_buf[ENV_PATH_MAX];
static char cfg_libcuda_buf[ENV_PATH_MAX];

const char *cfg_env_path(const char *name)
{
    int first;
    cfg_get();
    const char *v = env_path(name, &first);
    if (first)
        log_warn(ENV_SECURE_FMT, name);
    return v;
}

static const char *cfg_value_of(int var, const char *v, int *out)
{
    char msg[600];
    if (env_parse(var, v, out, msg, sizeof msg) != 0)
        log_warn("%s", msg);
    return v;
}

static const char *cfg_path_var(int var, const char *name, int *out)
{
    int first;
    const char *v = env_path(name, &first);
    if (first)
        log_warn(ENV_SECURE_FMT, name);
    return cfg_value_of(var, v, out);
}

static void cfg_load(void)
{
    int val;
    (void)log_level();   /* the log's own variables first: its lines come before ours, as they always did */

    cfg_value_of(ENV_VAR_DISABLE, getenv("CUSHIM_DISABLE"), &val);
    cfg_value.disable = val ? CFG_DISABLE_ENV : 0;

    /* Another copy of cushim loaded before this one (LD_PRELOAD=/a/libcushim.so:/b/libcushim.so, an installed
       copy and a build tree's, libcushim.so preloaded plus the drop-in libcuda.so.1) would count and hook too,
       and split the counts between two files. Every copy exports cushim_api_id_limit; the copy that finds an
       object exporting it earlier in link-map order (the dynamic linker's search order for the initial
       objects) than itself stays out of the way. The first copy never sees a peer before itself, so exactly
       one stays active whatever order the copies initialise in. No dlsym (it would be our own override), no
       allocation: this may run from another library's constructor, before ours. */
    if (!cfg_value.disable) {
        char peer[512], self[512];
        if (elf_defined_before_self("cushim_api_id_limit", peer, self, sizeof peer)) {
            cfg_value.disable = CFG_DISABLE_PEER;
            log_info("another copy of cushim was loaded first (%s): this copy (%s) passes every "
                     "call through (no counting, no hooks, no plugins)", peer, self);
        }
    }

    const char *v = cfg_path_var(ENV_VAR_COUNTS, "CUSHIM_COUNTS", &val);
    if (cfg_value.disable) {
        val = 0;
    } else if (val == ENV_PATH_STDERR) {
        /* The descriptor as it is now: the program may close or redirect fd 2 later. */
        int fd = fcntl(2, F_DUPFD_CLOEXEC, 3);
        if (fd >= 0) {
            cfg_value.counts_fd = fd;
            cfg_value.counts_path = "-";
        } else {
            log_error("CUSHIM_COUNTS=\"-\": standard error is not open (%s); call counts are off", strerror(errno));
        }
    } else if (val == ENV_PATH_FILE) {
        strcpy(cfg_counts_buf, v);   /* length checked by env_parse */
        cfg_value.counts_path = cfg_counts_buf;
    }

    v = cfg_path_var(ENV_VAR_REAL_LIBCUDA, "CUSHIM_REAL_LIBCUDA", &val);
    if (val == ENV_PATH_FILE) {
        strcpy(cfg_libcuda_buf, v);
        cfg_value.real_libcuda = cfg_libcuda_buf;
        cfg_value.no_driver = strcmp(cfg_libcuda_buf, "none") == 0;
    }
}

const rt_config *cfg_get(void)
{
    rt_once(&cfg_once, cfg_load);
    return &cfg_value;
}
