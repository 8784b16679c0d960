/*
 * idsel.h - a selector of API ids, "id:N,id:M,...", built one id at a time: for a plugin that picks its APIs by
 * reading the metadata (allocation roles, a plan per API) and hands them to hooks_add as one group. The SDK's
 * selector syntax (docs/plugin-sdk.md); the same text memlimit, the flight recorder (its filter's two groups and
 * its allocation tracking) and the trace (its plan groups, its capture of the profiler API) build. Host-free:
 * tests/unit/idsel_test.c drives it.
 */
#ifndef CUSHIM_COMMON_IDSEL_H
#define CUSHIM_COMMON_IDSEL_H

#include <stddef.h>
#include <stdint.h>

typedef struct idsel {
    char *s;           /* the selector, NUL-terminated; NULL while no id was added. malloc'd: idsel_free, or free(s) */
    size_t len, cap;
} idsel;

/* Appends 'id' (",id:N", or "id:N" first): 0, or -1 (out of memory: the selector so far is kept). */
int idsel_add(idsel *b, uint32_t id);
/* Frees the selector; 'b' is empty again. */
void idsel_free(idsel *b);

#endif /* CUSHIM_COMMON_IDSEL_H */
