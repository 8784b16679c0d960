/*
 * visible.c - CUDA ordinal -> physical GPU index by CUDA_VISIBLE_DEVICES (visible.h).
 */
#include "visible.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

int vis_physical(const char *cvd, int ord)
{
    const char *s = cvd;
    int k = 0, found = -1;
    if (ord < 0)
        return -1;
    if (s == NULL)
        return ord;
    while (isspace((unsigned char)*s))
        s++;
    if (*s == '\0')
        return ord;
    /* the whole list must be numbers: one that is not (a UUID after numbers) makes every index unknown */
    while (*s) {
        char *end = NULL;
        long v;
        errno = 0;
        v = strtol(s, &end, 10);
        if (errno || end == s || v < 0 || v > 1 << 20)
            return -1;
        if (k++ == ord)
            found = (int)v;
        s = end;
        while (isspace((unsigned char)*s))
            s++;
        if (*s == ',')
            s++;
        else if (*s)
            return -1;
    }
    return found;
}
