/*
 * log.h - the one logging module (log.c): leveled messages to stderr or
 * CUSHIM_LOG_FILE.
 */
#ifndef RT_LOG_H
#define RT_LOG_H

#include <stddef.h>

enum { LOG_DEBUG = 0, LOG_INFO = 1, LOG_WARN = 2, LOG_ERROR = 3, LOG_OFF = 4 };
void log_msg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A reason into err[errlen] (if err); returns CUSHIM_EINVAL. */
int rt_seterr(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)
/* One line 'text' at 'level' to 'fd', unfiltered: for config.c, which cannot call
   cfg_get while it is loading the configuration. */
void log_line(int fd, int level, const char *text);

#endif /* RT_LOG_H */
