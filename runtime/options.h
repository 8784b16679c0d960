/*
 * options.h - plugin options (options.c): declarations, "key=value" parsing
 * and validation, typed reads.
 */
#ifndef RT_OPTIONS_H
#define RT_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "cushim/cushim.h"

typedef struct op_value {
    uint32_t decl;                      /* index into the declared options */
    char *text;
} op_value;
typedef struct op_set {
    const cushim_option *decl;
    uint32_t ndecl;
    uint32_t nvalues;
    op_value *values;                   /* in the order given */
} op_set;
/* Declarations and their defaults valid? Then parse "k=v,k=v" ('\' escapes)
   into 's'. On failure 'err' names the option, the value and the expectation. */
int op_load(op_set *s, const cushim_option *decl, const char *text, char *err, size_t errlen);
void op_free(op_set *s);
const cushim_option *op_decl(const op_set *s, const char *name, uint32_t *index);
const char *op_text(const op_set *s, uint32_t decl, uint32_t nth);   /* nth given, else default */
uint32_t op_count(const op_set *s, uint32_t decl);

#endif /* RT_OPTIONS_H */
