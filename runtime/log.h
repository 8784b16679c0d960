/*
 * log.h - the one logging module (log.c): leveled messages to stderr or
 * CUSHIM_LOG_FILE, at the levels of env.h (LOG_DEBUG .. LOG_ERROR, LOG_OFF).
 */
#ifndef RT_LOG_H
#define RT_LOG_H

#include <stddef.h>

#include "env.h"

void log_msg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)
int log_level(void);        /* CUSHIM_LOG: lines below it are dropped */
/* CUSHIM_LOG_FILE's descriptor, or 2: where the few lines shown even with CUSHIM_LOG=off go (a shim that
   fails closed says why). */
int log_fd(void);
/* Where log lines go now: log_fd() while it still is the file opened at load (a program that closed it may
   have reused the number), else stderr while descriptor 2 still is the process's own; -1: nowhere. */
int log_target(void);
/* One line 'text' at 'level' to 'fd', unfiltered. */
void log_line(int fd, int level, const char *text);
/* A reason into err[errlen] (if err); returns CUSHIM_EINVAL. */
int rt_seterr(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif /* RT_LOG_H */
