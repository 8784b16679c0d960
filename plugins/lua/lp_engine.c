/*
 * lp_engine.c - the engine's state (lp_eng, lp_engine.h) and the error log of hook failures.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lp_engine.h"

lp_engine lp_eng;

/* Hook errors: at most error_rate lines a second; the rest are counted. */
void lp_log_error(const char *fmt, ...)
{
    char buf[4096];
    va_list ap;
    int64_t sec = (int64_t)(lp_eng.host->now_ns() / 1000000000ull);
    atomic_fetch_add_explicit(&lp_eng.errors, 1, memory_order_relaxed);
    if (atomic_exchange_explicit(&lp_eng.log_window, sec, memory_order_relaxed) != sec)
        atomic_store_explicit(&lp_eng.log_in_window, 0, memory_order_relaxed);
    if (atomic_fetch_add_explicit(&lp_eng.log_in_window, 1, memory_order_relaxed) >= lp_eng.o.error_rate)
        return;
    atomic_fetch_add_explicit(&lp_eng.errors_logged, 1, memory_order_relaxed);
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    lp_eng.host->log(lp_eng.self, CUSHIM_LOG_ERROR, "%s", buf);
}

const char *lp_script_base(void)
{
    const char *slash = strrchr(lp_eng.o.script, '/');
    return slash ? slash + 1 : lp_eng.o.script;
}
