/*
 * counts.c - the built-in call counter (CUSHIM_COUNTS=<path>).
 *
 * Counts every entry into a wrapper per API id (also calls made from inside
 * hooks or from the runtime into the driver), independent of hooks: with the
 * counter on, every slot carries at least a counting chain, so the fast path
 * falls through to the slow path, which counts first.
 *
 * Written as 'name<TAB>count' lines (APIs with a non-zero count, in id order)
 * at exit: from an atexit handler registered at initialisation and again from
 * the library destructor (calls made by other libraries' exit handlers). The
 * process that first saw CUSHIM_COUNTS writes <path>; a forked child (its
 * counts restart at zero) or an exec'd descendant writes <path>.<pid>.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rt_internal.h"

int cnt_enabled;
static _Atomic uint64_t cnt_calls[CUSHIM_API_ID_LIMIT];
static pid_t cnt_owner;         /* the pid that writes <path> itself */

void cnt_init(void)
{
    const rt_config *c = cfg_get();
    if (c->counts_path == NULL)
        return;
    cnt_enabled = 1;
    const char *owner = getenv("CUSHIM_COUNTS_OWNER_PID");
    if (owner != NULL && owner[0] != '\0') {
        cnt_owner = (pid_t)atoi(owner);
    } else {
        char buf[32];
        cnt_owner = getpid();
        snprintf(buf, sizeof buf, "%d", (int)cnt_owner);
        setenv("CUSHIM_COUNTS_OWNER_PID", buf, 0);
    }
}

void cnt_add(uint32_t id)
{
    atomic_fetch_add_explicit(&cnt_calls[id], 1, memory_order_relaxed);
}

uint64_t cnt_get(uint32_t id)
{
    return id < CUSHIM_API_ID_LIMIT ? atomic_load_explicit(&cnt_calls[id], memory_order_relaxed) : 0;
}

void cnt_after_fork_child(void)
{
    for (uint32_t i = 0; i < CUSHIM_API_ID_LIMIT; i++)
        atomic_store_explicit(&cnt_calls[i], 0, memory_order_relaxed);
}

void cnt_write(void)
{
    const rt_config *c = cfg_get();
    if (!cnt_enabled || c->counts_path == NULL)
        return;
    char path[4200];
    if (getpid() == cnt_owner)
        snprintf(path, sizeof path, "%s", c->counts_path);
    else
        snprintf(path, sizeof path, "%s.%d", c->counts_path, (int)getpid());
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        log_error("cannot write call counts to %s", path);
        return;
    }
    char buf[8192];
    size_t len = 0;
    for (uint32_t i = 0; i < cushim_gen_api_count; i++) {
        const cushim_api_info *a = &cushim_gen_apis[i];
        uint64_t n = atomic_load_explicit(&cnt_calls[a->id], memory_order_relaxed);
        if (n == 0)
            continue;
        if (len + 256 > sizeof buf) {
            if (write(fd, buf, len) < 0)
                break;
            len = 0;
        }
        int w = snprintf(buf + len, sizeof buf - len, "%s\t%llu\n", a->name, (unsigned long long)n);
        if (w > 0)
            len += (size_t)w;
    }
    if (len > 0 && write(fd, buf, len) < 0)
        log_error("short write of call counts to %s", path);
    close(fd);
}
