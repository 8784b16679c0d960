/*
 * select.h - selectors (select.c): which APIs a hook group or
 * host->api_select means.
 */
#ifndef RT_SELECT_H
#define RT_SELECT_H

#include <stddef.h>
#include <stdint.h>

int sel_select(const char *selector, uint32_t *ids, uint32_t cap, char *err, size_t errlen);
int sel_match(const char *selector, uint32_t api_id);

#endif /* RT_SELECT_H */
