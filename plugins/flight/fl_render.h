/*
 * fl_render.h - a recorded call's parameters as text or JSON, from the generated metadata the dump tool links
 * (generated/cuda-X.Y/cushim_meta.c): integers and floats as numbers, enums by name, handles and pointers as
 * 0x..., structs passed by value field by field. Only the raw params struct is recorded: what pointers point to
 * is never shown. Also the growable text buffer the report is written into, and the metadata look-ups.
 */
#ifndef FL_RENDER_H
#define FL_RENDER_H

#include <stddef.h>
#include <stdint.h>

#include <cushim/cushim_meta.h>

typedef struct fl_sb {
    char *p;
    size_t len, cap;
    int oom;
} fl_sb;

void fl_sb_putn(fl_sb *sb, const char *s, size_t n);
void fl_sb_put(fl_sb *sb, const char *s);
void fl_sb_printf(fl_sb *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void fl_sb_free(fl_sb *sb);
/* A JSON string literal of 's' (at most 'max' bytes; control bytes and bytes that are not UTF-8 as \u00XX). */
void fl_sb_json_str(fl_sb *sb, const char *s, size_t max);
/* 's' for a terminal: printable ASCII as is, anything else as \xNN (names in a file are input). */
void fl_sb_text_str(fl_sb *sb, const char *s, size_t max);
/* "0x..." (JSON: quoted) */
void fl_sb_hex(fl_sb *sb, uint64_t v, int json);

/* The tool's metadata. */
const cushim_api_info *fl_meta_api(uint32_t id);
const cushim_param_info *fl_meta_param(const cushim_api_info *a, uint32_t i);
const char *fl_meta_result(uint32_t ret_kind, int32_t code);
/* The category words of 'cats' joined with ',' into 'out'. */
void fl_meta_categories(uint32_t cats, char *out, size_t cap);

/* ", name=value" per parameter (text), or ',"name":value' (JSON), of the 'plen' bytes of 'params' kept; a
   parameter beyond them "(not kept)". */
void fl_render_params(fl_sb *sb, const cushim_api_info *api, const unsigned char *params, uint32_t plen, int json);
/* A value of parameter 'p' (its 'size' bytes at 'v'). */
void fl_render_param(fl_sb *sb, const cushim_param_info *p, const unsigned char *v, int json);
/* The result of a call of 'api' ('r'), by name for a status kind. */
void fl_render_result(fl_sb *sb, const cushim_api_info *api, int32_t r, int json);

#endif
