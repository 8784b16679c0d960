/*
 * libs.c - the interposed libraries as data: one row per library of the
 * generated tree (cushim_libs.inc, from the descriptors codegen/libs/<name>.lib):
 * its sonames, name prefixes, entry-point lookup and the values a wrapper
 * returns when it cannot call the real function.
 */
#include <stdlib.h>
#include <string.h>

#include "cushim_symver.h"
#include "base.h"
#include "libs.h"
#include "log.h"

#define LB_STRIP_(...) __VA_ARGS__
#define LB_STRIP(list) LB_STRIP_ list
#define CUSHIM_LIBRARY(LIB, NAME, RETKIND, SUCCESS, FAIL, FAIL_INIT, SONAMES, PREFIXES, ENTRY, DEFAULT)  \
    { .value = (LIB), .name = (NAME), .ret_kind = (RETKIND), .success = (SUCCESS),                     \
      .fail = (FAIL), .fail_init = (FAIL_INIT), .sonames = { LB_STRIP(SONAMES) },                      \
      .prefixes = { LB_STRIP(PREFIXES) }, .entry = (ENTRY), .by_default = (DEFAULT) },
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

/* The version node of the library's exports in this build (its real library's soname for this
   tree's major, e.g. "libcudart.so.13"), or NULL for a library without symbol versions. */
const char *lb_symver(int value)
{
#define LB_SYMVER(LIB, NODE)                                                                      \
    if (value == (LIB))                                                                           \
        return NODE;
    CUSHIM_SYMVER_LIST(LB_SYMVER)
#undef LB_SYMVER
    return NULL;
}

long long lb_fail_value(int ret_kind, int mode)
{
    const lb_library *l = lb_by_ret_kind(ret_kind);
    if (l == NULL)
        return 0;
    return mode == LB_FAIL_INIT ? l->fail_init : l->fail;
}

/* The fail value of status kind 'ret_kind' for 'mode' into a return value of
   'size' bytes (the low bytes of the value: x86-64 is little-endian; a status
   type is an enum, 4 bytes); zeros for a kind that is no library's status. */
void lb_fail_write(int ret_kind, int mode, void *out, size_t size)
{
    long long v = lb_fail_value(ret_kind, mode);
    memset(out, 0, size);
    if (lb_by_ret_kind(ret_kind) != NULL)
        memcpy(out, &v, size < sizeof v ? size : sizeof v);
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

/*
 * CUSHIM_LIBS=name,name,...: the libraries interposed (default: those whose
 * descriptor does not say 'opt-in': driver, runtime, NVML). Calls of the
 * others pass through untouched: not counted, not hooked, and dlsym hands out
 * the library's own functions. Read once; an unknown name is reported and
 * skipped. Bit N of the mask is cushim_library value N.
 */
static _Atomic uint32_t lb_mask;   /* 0: not read yet; bit 0 set once read */

static uint32_t lb_parse(const char *v)
{
    uint32_t m = 1;
    if (v == NULL) {
        for (unsigned i = 0; i < lb_nlibraries; i++)
            if (lb_libraries[i].by_default && lb_libraries[i].value < 32)
                m |= 1u << lb_libraries[i].value;
        return m;
    }
    while (*v != '\0') {
        size_t n = strcspn(v, ", ");
        int found = 0;
        for (unsigned i = 0; i < lb_nlibraries && n > 0; i++)
            if (strlen(lb_libraries[i].name) == n && strncmp(lb_libraries[i].name, v, n) == 0 &&
                lb_libraries[i].value < 32) {
                m |= 1u << lb_libraries[i].value;
                found = 1;
            }
        if (!found && n > 0)
            log_warn("CUSHIM_LIBS: no library '%.*s' in this build (it knows: driver, runtime and the "
                     "libraries of codegen/libs); ignored", (int)(n > 64 ? 64 : n), v);
        v += n;
        while (*v == ',' || *v == ' ')
            v++;
    }
    return m;
}

int lb_chosen(int value)
{
    uint32_t m = atomic_load_explicit(&lb_mask, memory_order_acquire);
    if (RT_UNLIKELY(m == 0)) {
        m = lb_parse(getenv("CUSHIM_LIBS"));
        uint32_t expected = 0;
        if (!atomic_compare_exchange_strong(&lb_mask, &expected, m))
            m = expected;
    }
    return value >= 0 && value < 32 && (m & (1u << value)) != 0;
}
