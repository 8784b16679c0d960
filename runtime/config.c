/*
 * config.c - the environment the runtime reads, once, on first need.
 *
 * CUSHIM_DISABLE=1          pure pass-through (no hooks run, no counting,
 *                           dlsym and cuGetProcAddress answer like the driver)
 * CUSHIM_LOG=debug|info|warn|error|off   (default warn)
 * CUSHIM_LOG_FILE=<path>    log there (appended) instead of stderr
 * CUSHIM_COUNTS=<path>      count calls per API, write them at exit
 * CUSHIM_REAL_LIBCUDA=<path> the real driver (drop-in mode; preload mode when
 *                           no libcuda.so.1 is loaded yet)
 *
 * May run before the library's constructor (a dlsym from another constructor)
 * and from any thread: pthread_once, getenv and open only.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rt_internal.h"

static rt_config cfg_value = { 0, LOG_WARN, 2, NULL, NULL };
static rt_once_t cfg_once = RT_ONCE_INIT;   /* once.c: no wait on re-entry or after fork */
static char cfg_counts_buf[4096];
static char cfg_libcuda_buf[4096];

static const char *cfg_copy(const char *v, char *buf, size_t cap)
{
    if (v == NULL || v[0] == '\0' || strlen(v) >= cap)
        return NULL;
    strcpy(buf, v);
    return buf;
}

static void cfg_load(void)
{
    const char *v = getenv("CUSHIM_DISABLE");
    cfg_value.disable = (v != NULL && v[0] != '\0' && strcmp(v, "0") != 0);

    v = getenv("CUSHIM_LOG");
    if (v != NULL) {
        if (strcmp(v, "debug") == 0) cfg_value.log_level = LOG_DEBUG;
        else if (strcmp(v, "info") == 0) cfg_value.log_level = LOG_INFO;
        else if (strcmp(v, "warn") == 0) cfg_value.log_level = LOG_WARN;
        else if (strcmp(v, "error") == 0) cfg_value.log_level = LOG_ERROR;
        else if (strcmp(v, "off") == 0) cfg_value.log_level = LOG_OFF;
    }
    v = getenv("CUSHIM_LOG_FILE");
    if (v != NULL && v[0] != '\0') {
        int fd = open(v, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd >= 0)
            cfg_value.log_fd = fd;
    }
    cfg_value.counts_path = cfg_copy(getenv("CUSHIM_COUNTS"), cfg_counts_buf, sizeof cfg_counts_buf);
    cfg_value.real_libcuda = cfg_copy(getenv("CUSHIM_REAL_LIBCUDA"), cfg_libcuda_buf, sizeof cfg_libcuda_buf);
    if (cfg_value.disable)
        cfg_value.counts_path = NULL;
}

const rt_config *cfg_get(void)
{
    rt_once(&cfg_once, cfg_load);
    return &cfg_value;
}
