/*
 * optvalue.h - the values of plugin options by declared type (optvalue.c): int, bool, double, bytes. Pure and
 * host-free: the runtime's option reader, 'cushim plugins' (tools/cushim-info.c) and the launcher
 * (tools/launcher/optval.c) compile the same file, so a value is valid in all three or in none.
 */
#ifndef RT_OPTVALUE_H
#define RT_OPTVALUE_H

#include <stdint.h>

/* 0 with *out set, or -1 when 'v' is not a value of the type. */
int op_parse_int(const char *v, int64_t *out);      /* decimal or 0x hex, a sign, within int64 */
int op_parse_bool(const char *v, int *out);         /* 1 true yes on / 0 false no off, any case */
int op_parse_double(const char *v, double *out);    /* C locale whatever the program's, finite */
int op_parse_bytes(const char *v, uint64_t *out);   /* 4096, 512K, 8MiB, 1.5G: K = KiB; within 64 bits */
/* 0 when 'v' is a value of declared type 'type' (CUSHIM_OPT_*, flags ignored), else -1. */
int op_check_value(uint32_t type, const char *v);
/* What a value of that type looks like, for messages: "bytes (4096, 512K, 8MiB, 1.5G)". */
const char *op_type_name(uint32_t type);
/* A plugin's or an option's name: [a-z0-9_-]{1,63}. */
int op_name_ok(const char *n);

#endif /* RT_OPTVALUE_H */
