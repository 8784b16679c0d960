/*
 * libs.h - the interposed libraries as data (libs.c, from cushim_libs.inc).
 */
#ifndef RT_LIBS_H
#define RT_LIBS_H

#include <stddef.h>
#include <stdint.h>

#include "cushim/cushim.h"

#define LB_MAX_NAMES 8
typedef struct lb_library {
    int value;                                /* cushim_library */
    const char *name;                         /* "driver": selectors lib:NAME */
    int ret_kind;                             /* cushim_ret_kind of its status type */
    long long success, fail, fail_init;       /* fail: real function missing; fail_init: failed closed */
    const char *sonames[LB_MAX_NAMES];        /* NULL-terminated */
    const char *prefixes[LB_MAX_NAMES];       /* NULL-terminated */
    const char *entry;                        /* its own entry-point lookup, or NULL */
    int by_default;                           /* interposed unless CUSHIM_LIBS says otherwise */
} lb_library;
extern const lb_library lb_libraries[];
extern const unsigned lb_nlibraries;
/* The modes of a call that reaches no real function (wrap.h, dispatch.h RT_MODE_FAIL, RT_MODE_FAIL_INIT). */
enum { LB_FAIL_MISSING = 3, LB_FAIL_INIT = 4 };
const lb_library *lb_by_value(int value);
const lb_library *lb_by_ret_kind(int kind);
long long lb_fail_value(int ret_kind, int mode);
void lb_fail_write(int ret_kind, int mode, void *out, size_t size);   /* wrap.h's RT_FAIL */
int lb_name_may_be_ours(const char *name);
const char *lb_symver(int value);   /* "libcudart.so.13": its exports' version node, or NULL */
int lb_chosen(int value);   /* CUSHIM_LIBS (default: every library not 'opt-in') */

#endif /* RT_LIBS_H */
