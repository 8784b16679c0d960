/*
 * optvalue.c - plugin option values by declared type (optvalue.h). One file for the three readers of them: the
 * runtime (options.c), 'cushim plugins' and the launcher compile it.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cushim/cushim.h"
#include "optvalue.h"

int op_parse_int(const char *v, int64_t *out)
{
    const char *p = v;
    int neg = 0;
    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    int base = 10;
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
        base = 16;
        p += 2;
    }
    if (!isxdigit((unsigned char)*p))
        return -1;
    char *end;
    errno = 0;
    unsigned long long u = strtoull(p, &end, base);
    if (errno != 0 || *end != '\0' || u > (neg ? (unsigned long long)INT64_MAX + 1 : (unsigned long long)INT64_MAX))
        return -1;
    *out = neg ? (int64_t)(0 - u) : (int64_t)u;
    return 0;
}

int op_parse_bool(const char *v, int *out)
{
    static const char *const yes[] = { "1", "true", "yes", "on" }, *const no[] = { "0", "false", "no", "off" };
    for (int i = 0; i < 4; i++) {
        if (strcasecmp(v, yes[i]) == 0) {
            *out = 1;
            return 0;
        }
        if (strcasecmp(v, no[i]) == 0) {
            *out = 0;
            return 0;
        }
    }
    return -1;
}

int op_parse_double(const char *v, double *out)
{
    static _Atomic(locale_t) c_locale_p;   /* the program may have set a ',' decimal point */
    locale_t c_locale = atomic_load(&c_locale_p);
    if (c_locale == (locale_t)0) {
        locale_t fresh = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0), expected = (locale_t)0;
        if (fresh != (locale_t)0 && !atomic_compare_exchange_strong(&c_locale_p, &expected, fresh))
            freelocale(fresh);
        c_locale = atomic_load(&c_locale_p);
    }
    if (*v == '\0' || isspace((unsigned char)*v))
        return -1;
    char *end;
    errno = 0;
    double d = c_locale != (locale_t)0 ? strtod_l(v, &end, c_locale) : strtod(v, &end);
    if (*end != '\0' || errno == ERANGE || !isfinite(d))
        return -1;
    *out = d;
    return 0;
}

/* 4096, 512K, 8MiB, 1.5G: K = KiB = 1024 (also M, G, T; an optional trailing B). */
int op_parse_bytes(const char *v, uint64_t *out)
{
    const char *p = v;
    if (!isdigit((unsigned char)*p))
        return -1;
    uint64_t ipart = 0, fnum = 0, fden = 1;
    for (; isdigit((unsigned char)*p); p++)
        if (__builtin_mul_overflow(ipart, 10, &ipart) || __builtin_add_overflow(ipart, (uint64_t)(*p - '0'), &ipart))
            return -1;
    if (*p == '.') {
        p++;
        if (!isdigit((unsigned char)*p))
            return -1;
        for (; isdigit((unsigned char)*p); p++)
            if (fden < 1000000000ull) {
                fnum = fnum * 10 + (uint64_t)(*p - '0');
                fden *= 10;
            }
    }
    uint64_t mult = 1;
    switch (*p) {
    case 'k': case 'K': mult = 1ull << 10; p++; break;
    case 'm': case 'M': mult = 1ull << 20; p++; break;
    case 'g': case 'G': mult = 1ull << 30; p++; break;
    case 't': case 'T': mult = 1ull << 40; p++; break;
    default: break;
    }
    if (mult != 1 && (p[0] == 'i' || p[0] == 'I') && (p[1] == 'b' || p[1] == 'B'))
        p += 2;
    else if (*p == 'b' || *p == 'B')
        p++;
    if (*p != '\0')
        return -1;
    uint64_t r, frac = (uint64_t)(((unsigned __int128)fnum * mult) / fden);
    if (__builtin_mul_overflow(ipart, mult, &r) || __builtin_add_overflow(r, frac, &r))
        return -1;
    *out = r;
    return 0;
}


const char *op_type_name(uint32_t type)
{
    switch (type & CUSHIM_OPT_TYPE_MASK) {
    case CUSHIM_OPT_STRING: return "string";
    case CUSHIM_OPT_INT: return "int (decimal or 0x hex)";
    case CUSHIM_OPT_BOOL: return "bool (1/0 true/false yes/no on/off)";
    case CUSHIM_OPT_DOUBLE: return "double";
    case CUSHIM_OPT_BYTES: return "bytes (4096, 512K, 8MiB, 1.5G)";
    default: return "?";
    }
}

/* 0 if 'v' is a valid value of 'type'. */
int op_check_value(uint32_t type, const char *v)
{
    int64_t i;
    int b;
    double d;
    uint64_t u;
    switch (type & CUSHIM_OPT_TYPE_MASK) {
    case CUSHIM_OPT_STRING: return 0;
    case CUSHIM_OPT_INT: return op_parse_int(v, &i);
    case CUSHIM_OPT_BOOL: return op_parse_bool(v, &b);
    case CUSHIM_OPT_DOUBLE: return op_parse_double(v, &d);
    case CUSHIM_OPT_BYTES: return op_parse_bytes(v, &u);
    default: return -1;
    }
}

int op_name_ok(const char *n)
{
    if (n == NULL || n[0] == '\0' || strlen(n) > 63)
        return 0;
    for (; *n; n++)
        if (!(islower((unsigned char)*n) || isdigit((unsigned char)*n) || *n == '_' || *n == '-'))
            return 0;
    return 1;
}

