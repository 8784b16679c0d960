/*
 * tr_render.h - turns recorded calls into JSON text, from the generated
 * metadata alone (no API is known by hand). Runs on the writer thread only.
 * Host-free: metadata arrives through 'tr_meta', which the unit tests fill
 * with hand-made tables.
 */
#ifndef TR_RENDER_H
#define TR_RENDER_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cushim/cushim.h>

#include "tr_rec.h"

/* A growable text buffer. On allocation failure it stops growing and 'oom' is set. */
typedef struct tr_sb {
    char *p;
    size_t len, cap;
    int oom;
} tr_sb;

void tr_sb_free(tr_sb *sb);
/* Room for 'more' bytes and the terminator: 0, or -1 (out of memory: the buffer stays as it was, 'oom' set). */
int tr_sb_grow_slow(tr_sb *sb, size_t more);
/* Inline: the writer appends a few bytes at a time, most of them string literals whose length the compiler
   knows (no strlen, no memcpy call). */
static inline void tr_sb_putn(tr_sb *sb, const char *s, size_t n)
{
    if (sb->len + n + 1 > sb->cap && tr_sb_grow_slow(sb, n) != 0)
        return;
    memcpy(sb->p + sb->len, s, n);
    sb->len += n;
    sb->p[sb->len] = '\0';
}
static inline void tr_sb_puts(tr_sb *sb, const char *s)
{
    tr_sb_putn(sb, s, strlen(s));
}
void tr_sb_printf(tr_sb *sb, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void tr_sb_u64(tr_sb *sb, uint64_t v);
void tr_sb_i64(tr_sb *sb, int64_t v);
/* "0x..." with the quotes */
void tr_sb_hexq(tr_sb *sb, uint64_t v);
/* A JSON string literal of at most 'max' bytes of 's' (then "..."). */
void tr_sb_json_str(tr_sb *sb, const char *s, size_t n, size_t max);
/* The text such a literal holds, as a JSON reader ('cushim stats', Python's json) decodes it: the bytes kept,
   a control byte (\u00XX) itself, a byte that is not UTF-8 (\u00XX) as U+00XX in UTF-8; into 'out' (cut
   before what does not fit in 'cap' - 1 bytes, NUL-terminated); its length. The at-exit tables name rows with
   it, so that they equal the tables read from the file. A NUL byte (never in a C string) is not handled. */
size_t tr_str_plain(char *out, size_t cap, const char *s, size_t n, size_t max);
/* ns as microseconds with 3 decimals: exact. */
void tr_sb_us(tr_sb *sb, uint64_t ns);

typedef struct tr_meta {
    const cushim_param_info *(*api_param)(const cushim_api_info *api, uint32_t index);
    const char *(*result_name)(uint32_t ret_kind, int32_t code);
    /* NULL when the host has no type metadata */
    const char *(*enum_value_name)(const cushim_enum_info *e, int64_t value);
    uint32_t sizeof_param_info;   /* the host's: fields beyond it are absent */
    /* a struct's field by index (host->struct_field, SDK 1.1); NULL: this build's layout (tests, a 1.0 host) */
    const cushim_field_info *(*struct_field)(const cushim_struct_info *s, uint32_t index);
} tr_meta;

/* Longest string kept from a call (bytes), and array elements rendered. */
#define TR_STR_MAX 256u
/* Kernel names (C++ mangled names run long; the kernel table groups by them). */
#define TR_NAME_MAX 4096u
#define TR_ARRAY_MAX 64u

/* Does the host's parameter metadata carry the type-metadata fields? */
int tr_meta_typed(const tr_meta *m);

/* The "args" object of one call: ',"name":value' per parameter, the kernel
   name, the result. 'exit' may be NULL (a call still running at the end). */
void tr_render_args(tr_sb *sb, const tr_meta *m, const cushim_api_info *info, const tr_rec *enter,
                    const tr_exit *exit);

/* Blobs of a record: the one of parameter 'param', NULL if none. */
const tr_blob *tr_rec_blob(const void *r, uint32_t fixed, uint32_t param);
/* An EXIT's output blob of parameter 'param', NULL if none; an inline output (TR_F_INLINE) is rebuilt as the
   blob it stands for in 'one'. */
typedef struct tr_exit_inline {
    tr_blob blob;
    uint64_t word;   /* the blob's bytes: right after it, as r_param reads them */
} tr_exit_inline;
const tr_blob *tr_exit_blob(const tr_exit *exit, uint32_t param, tr_exit_inline *one);
/* Where an ENTER record's blobs start (after the params struct). */
uint32_t tr_enter_fixed(const cushim_api_info *info);

#endif /* TR_RENDER_H */
