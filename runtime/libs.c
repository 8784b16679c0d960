/*
 * libs.c - the interposed libraries as data: one row per library of the
 * generated tree (cushim_libs.inc, from the descriptors codegen/libs/<name>.lib):
 * its sonames, name prefixes, entry-point lookup and the values a wrapper
 * returns when it cannot call the real function.
 */
#include "cushim_cuda_headers.h"
#include "rt_internal.h"

#define LB_STRIP_(...) __VA_ARGS__
#define LB_STRIP(list) LB_STRIP_ list
#define CUSHIM_LIBRARY(LIB, NAME, RETKIND, SUCCESS, FAIL, FAIL_INIT, SONAMES, PREFIXES, ENTRY)       \
    { .value = (LIB), .name = (NAME), .ret_kind = (RETKIND), .success = (long long)(SUCCESS),         \
      .fail = (long long)(FAIL), .fail_init = (long long)(FAIL_INIT),                                \
      .sonames = { LB_STRIP(SONAMES) }, .prefixes = { LB_STRIP(PREFIXES) }, .entry = (ENTRY) },
const lb_library lb_libraries[] = {
#include "cushim_libs.inc"
};
#undef CUSHIM_LIBRARY
const unsigned lb_nlibraries = sizeof lb_libraries / sizeof lb_libraries[0];

const lb_library *lb_by_value(int value)
{
    for (unsigned i = 0; i < lb_nlibraries; i++)
        if (lb_libraries[i].value == value)
            return &lb_libraries[i];
    return NULL;
}

const lb_library *lb_by_ret_kind(int kind)
{
    for (unsigned i = 0; i < lb_nlibraries; i++)
        if (lb_libraries[i].ret_kind == kind && kind != CUSHIM_RET_OTHER)
            return &lb_libraries[i];
    return NULL;
}

long long lb_fail_value(int ret_kind, int mode)
{
    const lb_library *l = lb_by_ret_kind(ret_kind);
    if (l == NULL)
        return 0;
    return mode == RT_MODE_FAIL_INIT ? l->fail_init : l->fail;
}

/* Could 'name' belong to an interposed library (one of their name prefixes)?
   Runs in dlsym before anything is known: no libc call. */
int lb_name_may_be_ours(const char *name)
{
    if (name == NULL)
        return 0;
    for (unsigned i = 0; i < lb_nlibraries; i++)
        for (const char *const *p = lb_libraries[i].prefixes; *p != NULL; p++) {
            const char *a = name, *b = *p;
            while (*b != '\0' && *a == *b)
                a++, b++;
            if (*b == '\0')
                return 1;
        }
    return 0;
}
