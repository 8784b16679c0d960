/*
 * idsel.c - a selector of API ids built one id at a time (idsel.h). Without printf: a plugin adds one id per
 * selected API at start, up to every API of the build.
 */
#include <stdlib.h>
#include <string.h>

#include "idsel.h"

int idsel_add(idsel *b, uint32_t id)
{
    char one[16];   /* ",id:" and 10 digits */
    char digits[10];
    size_t n = 0, nd = 0;
    do
        digits[nd++] = (char)('0' + id % 10);
    while ((id /= 10) != 0);
    if (b->len != 0)
        one[n++] = ',';
    memcpy(one + n, "id:", 3);
    n += 3;
    while (nd > 0)
        one[n++] = digits[--nd];
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        char *g;
        while (cap < b->len + n + 1)
            cap *= 2;
        if ((g = realloc(b->s, cap)) == NULL)
            return -1;
        b->s = g;
        b->cap = cap;
    }
    memcpy(b->s + b->len, one, n);
    b->len += n;
    b->s[b->len] = '\0';
    return 0;
}

void idsel_free(idsel *b)
{
    free(b->s);
    b->s = NULL;
    b->len = b->cap = 0;
}
