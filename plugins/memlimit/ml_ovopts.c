/*
 * ml_ovopts.c - the text of memlimit's oversubscribe= and on_full= options, HAMi's CUDA_OVERSUBSCRIBE, and the
 * oversubscription bound (ml_oversub.h). Host-free: the fuzz harness (tests/fuzz/fuzz_limits.c) links it alone.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ml_oversub.h"

int ml_oversub_parse_ratio(const char *s, uint32_t *milli)
{
    char *end = NULL;
    double v;
    if (s == NULL || *s == '\0' || !strcasecmp(s, "true") || !strcasecmp(s, "yes") || !strcasecmp(s, "on")) {
        *milli = ML_OVERSUB_DEFAULT_MILLI;
        return 0;
    }
    if (!strcasecmp(s, "false") || !strcasecmp(s, "no") || !strcasecmp(s, "off") || !strcmp(s, "0")) {
        *milli = 0;
        return 0;
    }
    if (*s < '0' || *s > '9')
        return -1;
    v = strtod(s, &end);
    if (end == s || *end != '\0' || !(v >= 1.0) || v > ML_OVERSUB_MAX_MILLI / 1000.0)
        return -1;
    *milli = (uint32_t)(v * 1000.0 + 0.5);
    return 0;
}

int ml_oversub_parse_wait(const char *s, uint32_t *ms)
{
    char *end = NULL;
    double v;
    if (s == NULL || *s == '\0' || !strcmp(s, "fail")) {
        *ms = 0;
        return 0;
    }
    if (!strcmp(s, "wait")) {
        *ms = ML_WAIT_DEFAULT_MS;
        return 0;
    }
    if (strncmp(s, "wait:", 5) != 0 || s[5] < '0' || s[5] > '9')
        return -1;
    v = strtod(s + 5, &end);
    if (end == s + 5 || *end != '\0' || !(v >= 0.0) || v * 1000.0 > ML_WAIT_MAX_MS)
        return -1;
    *ms = (uint32_t)(v * 1000.0 + 0.5);
    return 0;
}

int ml_oversub_hami(const char *v)
{
    return v != NULL && !strcmp(v, "true");
}

uint64_t ml_oversub_bound(uint64_t quota, uint64_t total, uint32_t milli)
{
    uint64_t base = quota ? quota : total;
    if (base == 0 || milli == 0)
        return 0;
    if (base > UINT64_MAX / milli)
        return UINT64_MAX;
    return base / 1000 * milli + base % 1000 * milli / 1000;
}
