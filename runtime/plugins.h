/*
 * plugins.h - the host's record of each plugin and its lifecycle (plugins.c):
 * validation, init, undo, flush, fork_child, plugin_register.
 */
#ifndef RT_PLUGINS_H
#define RT_PLUGINS_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "cushim/cushim.h"
#include "hooks.h"
#include "options.h"

enum { PL_LOADING = 1, PL_ACTIVE = 2, PL_FAILED = 3, PL_FLUSHED = 4 };
struct cushim_plugin {
    const cushim_plugin_def *def;
    char name[64];
    char *path;                         /* NULL: registered in-process */
    int optional;                       /* '?' in CUSHIM_PLUGINS */
    int from_env;                       /* loaded from CUSHIM_PLUGINS (failures fail closed) */
    _Atomic int state;
    uint32_t loader_tid;                /* thread running init */
    op_set opts;
    hk_owner hooks;                     /* its hook groups (hooks.c) */
    void *data;
};
int pl_valid(const cushim_plugin *p);   /* one of ours (pointer comparison only) */
int pl_state(const cushim_plugin *p);
void pl_set_data(cushim_plugin *p, void *data);   /* host->plugin_set_data */
int pl_loaded(const char *name);        /* a plugin of that name is loading or active */
/* Validate 'def' (size, ABI, name, options), create the record, run init(host, record). On
   failure everything it registered is undone, 'err' says why, and *out is the
   failed record (or NULL when none was made). */
int pl_load(const cushim_host *host, const cushim_plugin_def *def, const char *options, const char *path,
            int optional, int from_env, cushim_plugin **out, char *err, size_t errlen);
/* host->plugin_register: pl_load of a definition in memory; a failure is reported, never fails closed. */
int pl_register(const cushim_host *host, const cushim_plugin_def *def, const char *options,
                cushim_plugin **self, char *err, size_t errlen);
void pl_log(const cushim_plugin *p, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void pl_vlog(const cushim_plugin *p, int level, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));
void pl_report_failure(const cushim_plugin *p, const char *name, int optional, int from_env,
                       const char *why);

#endif /* RT_PLUGINS_H */
