/*
 * limitspec.c - reading smlimit's limits: the 'limit' option and HAMi-core's
 * CUDA_DEVICE_SM_LIMIT[_<i>] variables, and the priorities' forms (limitspec.h).
 * Pure: the unit test sml_limits drives it with its own environment; the
 * cushim-limit tool links it for --sm and --priority.
 */
#include "limitspec.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "shm.h"   /* SML_PRIO_* */

#include "cushim/cushim_io.h"

/* "30" | "0:30,1:50" | "30,1:50" (a bare number: every device not named).
   Percent in [0, 100]; 0 and 100 mean no limit, as in HAMi-core. */
int sml_parse_limits(const char *text, double out[SML_LIMIT_DEVICES], char *err, size_t errlen)
{
    const char *p = text;
    double all = 0;
    int given[SML_LIMIT_DEVICES] = {0};
    double per[SML_LIMIT_DEVICES] = {0};
    if (text[strspn(text, " ")] == '\0')
        goto bad;
    while (*p) {
        char *end;
        long dev = -1;
        double v;
        while (*p == ' ')
            p++;
        v = cushim_strtod(p, &end);
        if (end == p)
            goto bad;
        if (*end == ':') {
            if (!(v >= 0 && v < SML_LIMIT_DEVICES) || v != (double)(long)v) {   /* NaN fails the first test */
                snprintf(err, errlen, "device '%.*s' is not a number in 0..%d", (int)(end - p), p, SML_LIMIT_DEVICES - 1);
                return -1;
            }
            dev = (long)v;
            p = end + 1;
            v = cushim_strtod(p, &end);
            if (end == p)
                goto bad;
        }
        if (!(v >= 0 && v <= 100)) {
            snprintf(err, errlen, "limit '%.*s' is not a percentage in 0..100", (int)(end - p), p);
            return -1;
        }
        if (*end == '%')
            end++;
        if (dev < 0)
            all = v;
        else {
            given[dev] = 1;
            per[dev] = v;
        }
        p = end;
        while (*p == ' ')
            p++;
        if (*p == ',')
            p++;
        else if (*p != '\0')
            goto bad;
    }
    for (int i = 0; i < SML_LIMIT_DEVICES; i++)
        out[i] = given[i] ? per[i] : all;
    return 0;
bad:
    snprintf(err, errlen, "cannot read '%s': want PERCENT or DEV:PERCENT,... (e.g. 30 or 0:30,1:50)", text);
    return -1;
}

/* HAMi-core's variables: CUDA_DEVICE_SM_LIMIT_<i>, else CUDA_DEVICE_SM_LIMIT;
   unset or 0 means none. */
int sml_env_limits(const char *(*getenv_fn)(const char *), double out[SML_LIMIT_DEVICES], char *err,
                   size_t errlen)
{
    const char *all = getenv_fn("CUDA_DEVICE_SM_LIMIT");
    double base = 0;
    if (all != NULL && *all) {
        char *end;
        base = cushim_strtod(all, &end);
        if (end == all || *end != '\0' || !(base >= 0)) {
            snprintf(err, errlen, "CUDA_DEVICE_SM_LIMIT='%s' is not a percentage", all);
            return -1;
        }
    }
    for (int i = 0; i < SML_LIMIT_DEVICES; i++) {
        char name[40];
        const char *v;
        out[i] = base;
        snprintf(name, sizeof name, "CUDA_DEVICE_SM_LIMIT_%d", i);
        if ((v = getenv_fn(name)) != NULL && *v) {
            char *end;
            double d = cushim_strtod(v, &end);
            if (end == v || *end != '\0' || !(d >= 0)) {
                snprintf(err, errlen, "%s='%s' is not a percentage", name, v);
                return -1;
            }
            if (d > 0)
                out[i] = d;
        }
        if (out[i] > 100)
            out[i] = 100;
    }
    return 0;
}

/* high | normal | low (any case), or HAMi's CUDA_TASK_PRIORITY number: lower is higher; 0 (and below) high, 1
   (HAMi's default) normal, 2 and more low. */
int sml_parse_priority(const char *s, int *out)
{
    char *end;
    long v;
    if (s == NULL || *s == '\0')
        return 1;   /* not given */
    if (!strcasecmp(s, "high"))
        return *out = SML_PRIO_HIGH, 0;
    if (!strcasecmp(s, "normal"))
        return *out = SML_PRIO_NORMAL, 0;
    if (!strcasecmp(s, "low"))
        return *out = SML_PRIO_LOW, 0;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || *end || end == s)
        return -1;
    *out = v <= 0 ? SML_PRIO_HIGH : v == 1 ? SML_PRIO_NORMAL : SML_PRIO_LOW;
    return 0;
}

const char *sml_priority_name(int p)
{
    return p == SML_PRIO_HIGH ? "high" : p == SML_PRIO_NORMAL ? "normal" : p == SML_PRIO_LOW ? "low" : "none";
}
