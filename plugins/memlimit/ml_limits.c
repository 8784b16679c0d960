/*
 * ml_limits.c - byte sizes, limit lists and HAMi-core's environment
 * (ml_limits.h). HAMi's meanings are re-implemented from its documented
 * behaviour: see docs/plugins/memlimit.md for the table.
 */
#include "ml_limits.h"
#include "visible.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cushim/cushim_io.h"

int ml_parse_bytes(const char *s, uint64_t *out)
{
    char *end = NULL;
    double mant;
    uint64_t mult = 1, exact_v = 0;
    int exact = 0;
    if (s == NULL)
        return -1;
    while (isspace((unsigned char)*s))
        s++;
    if (*s == '\0' || *s == '-' || *s == '+')
        return -1;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        unsigned long long v;
        errno = 0;
        v = strtoull(s, &end, 16);
        if (errno || end == s + 2)
            return -1;
        while (isspace((unsigned char)*end))
            end++;
        if (*end)
            return -1;
        *out = v;
        return 0;
    }
    {   /* whole numbers exactly (a double holds 53 bits); fractions and exponents through strtod */
        const char *d = s;
        while (*d >= '0' && *d <= '9')
            d++;
        if (d == s || *d == '.' || *d == 'e' || *d == 'E') {
            /* a decimal number only: strtod also reads "nan", "inf" and hexadecimal floats (fuzz_limits: "NAN"
               reached the conversion to an integer, undefined for a NaN) */
            if (!(isdigit((unsigned char)*s) || (*s == '.' && isdigit((unsigned char)s[1]))))
                return -1;
            errno = 0;
            mant = cushim_strtod(s, &end);   /* the C locale's '.', whatever the program set */
            if (errno || end == s)   /* ERANGE: too large for a double */
                return -1;
        } else {
            unsigned long long whole;
            errno = 0;
            whole = strtoull(s, &end, 10);
            if (errno)
                return -1;
            exact = 1;
            exact_v = whole;
            mant = (double)whole;
        }
    }
    switch (toupper((unsigned char)*end)) {
    case 'K': mult = 1ull << 10; end++; break;
    case 'M': mult = 1ull << 20; end++; break;
    case 'G': mult = 1ull << 30; end++; break;
    case 'T': mult = 1ull << 40; end++; break;
    case 'B': break;
    case '\0': break;
    default: return -1;
    }
    if (mult > 1 && (*end == 'i' || *end == 'I'))
        end++;
    if (*end == 'B' || *end == 'b')
        end++;
    while (isspace((unsigned char)*end))
        end++;
    if (*end)
        return -1;
    if (exact) {
        if (exact_v > UINT64_MAX / mult)
            return -1;
        *out = exact_v * mult;
        return 0;
    }
    if (mant * (double)mult >= 18446744073709549568.0)
        return -1;
    *out = (uint64_t)(mant * (double)mult);
    return 0;
}

int ml_parse_spec(const char *s, ml_limits *l, char *err, size_t errlen)
{
    char buf[512];
    char *save = NULL, *t;
    if (s == NULL || strlen(s) >= sizeof buf) {
        snprintf(err, errlen, "limit list missing or longer than %zu characters", sizeof buf - 1);
        return -1;
    }
    strcpy(buf, s);
    for (t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(t, ':');
        uint64_t v;
        if (colon == NULL) {
            if (ml_parse_bytes(t, &v) != 0) {
                snprintf(err, errlen, "bad size '%s' (like 8GiB, 512MiB, 4096)", t);
                return -1;
            }
            l->all = v;
        } else {
            char *dend = NULL;
            long d;
            *colon = '\0';
            if (ml_parse_bytes(colon + 1, &v) != 0) {
                snprintf(err, errlen, "bad size '%s' for device '%s' (like 0:8GiB)", colon + 1, t);
                return -1;
            }
            while (isspace((unsigned char)*t))
                t++;
            if (!strcmp(t, "*")) {
                l->all = v;
            } else {
                errno = 0;
                d = strtol(t, &dend, 10);
                if (errno || dend == t || *dend || d < 0 || d >= ML_MAX_DEVICES) {
                    snprintf(err, errlen, "bad device '%s': a device 0..%d or '*'", t, ML_MAX_DEVICES - 1);
                    return -1;
                }
                l->dev[d] = v;
            }
        }
        l->any = 1;
    }
    return 0;
}

int ml_hami_value(const char *s, uint64_t *out)
{
    size_t len;
    uint64_t scalar = 1;
    unsigned long long res;
    char *end = NULL;
    *out = 0;
    if (s == NULL || (len = strlen(s)) == 0)
        return 0;
    switch (s[len - 1]) {
    case 'G': case 'g': scalar = 1ull << 30; break;
    case 'M': case 'm': scalar = 1ull << 20; break;
    case 'K': case 'k': scalar = 1ull << 10; break;
    default: break;
    }
    /* HAMi's syntax: the whole text is digits (decimal, 0x hex or 0 octal as strtoul reads them) and the one
       suffix letter; HAMi reads a leading number and ignores the rest, which would make '3MiB' 3 bytes */
    if (isdigit((unsigned char)s[0])) {
        errno = 0;
        res = strtoull(s, &end, 0);
        if (!errno && end == s + len - (scalar > 1 ? 1 : 0)) {
            if (res != 0 && res > UINT64_MAX / scalar)
                return -1;
            *out = res * scalar;
            return 0;
        }
    }
    /* ours: 3MiB, 1.5GiB, 8GB, 4096 */
    return ml_parse_bytes(s, out) == 0 ? 0 : -1;
}

int ml_from_hami_env(const char *(*get)(const char *), ml_limits *l, char *err, size_t errlen)
{
    int any = 0;
    for (int i = -1; i < ML_MAX_DEVICES; i++) {
        char name[48];
        const char *text;
        uint64_t v;
        if (i < 0)
            snprintf(name, sizeof name, "CUDA_DEVICE_MEMORY_LIMIT");
        else
            snprintf(name, sizeof name, "CUDA_DEVICE_MEMORY_LIMIT_%d", i);
        text = get(name);
        if (ml_hami_value(text, &v) != 0) {
            snprintf(err, errlen, "%s='%.64s%s' is not a size (like 3g or 3000m as in HAMi, or 3GiB): no quota "
                     "can be read from it", name, text, strlen(text) > 64 ? "..." : "");
            return -1;
        }
        if (v == 0)
            continue;
        if (i < 0)
            l->all = v;
        else
            l->dev[i] = v;
        any = 1;
    }
    if (any)
        l->any = 1;
    return any;
}

int ml_visible_devices(const char *s, int *map, int cap)
{
    /* the rule is visible.c's (smlimit's too): one parser of the variable for both plugins */
    if (s == NULL)
        return 0;
    while (isspace((unsigned char)*s))
        s++;
    if (*s == '\0')
        return 0;
    int n = 0;
    for (int v; n < cap && (v = vis_physical(s, n)) >= 0; n++)
        map[n] = v;
    return n == 0 ? -1 : n;   /* not even a first number: UUIDs or MIG names, or nonsense */
}
