/*
 * fl_render.h - a recorded call's parameters as text or JSON, from the generated metadata the dump tool links
 * (generated/cuda-X.Y/cushim_meta.c): integers and floats as numbers, enums by name, handles and pointers as
 * 0x..., structs passed by value field by field. Only the raw params struct is recorded: what pointers point to
 * is never shown. Also the metadata look-ups.
 */
#ifndef FL_RENDER_H
#define FL_RENDER_H

#include <stddef.h>
#include <stdint.h>

#include <cushim/cushim_meta.h>

#include "tr_json.h"

/* The report is written into the trace's text buffer (tr_sb, plugins/trace/lib/tr_json.h), the one 'cushim stats'
   writes its tables into. A JSON string literal of the C string 's' (at most 'max' bytes; control bytes and
   bytes that are not UTF-8 as \u00XX). */
static inline void fl_json_cstr(tr_sb *sb, const char *s, size_t max)
{
    const char *end = memchr(s, '\0', max);
    tr_sb_json_str(sb, s, end != NULL ? (size_t)(end - s) : max, max);
}
/* 's' for a terminal: printable ASCII as is, anything else as \xNN (names in a file are input). */
void fl_text_str(tr_sb *sb, const char *s, size_t max);
/* "0x..." (JSON: quoted) */
void fl_hex(tr_sb *sb, uint64_t v, int json);

/* The tool's metadata. */
const cushim_api_info *fl_meta_api(uint32_t id);
const cushim_param_info *fl_meta_param(const cushim_api_info *a, uint32_t i);
const char *fl_meta_result(uint32_t ret_kind, int32_t code);
/* The category words of 'cats' joined with ',' into 'out'. */
void fl_meta_categories(uint32_t cats, char *out, size_t cap);

/* ", name=value" per parameter (text), or ',"name":value' (JSON), of the 'plen' bytes of 'params' kept; a
   parameter beyond them "(not kept)". */
void fl_render_params(tr_sb *sb, const cushim_api_info *api, const unsigned char *params, uint32_t plen, int json);
/* A value of parameter 'p' (its 'size' bytes at 'v'). */
void fl_render_param(tr_sb *sb, const cushim_param_info *p, const unsigned char *v, int json);
/* The result of a call of 'api' ('r'), by name for a status kind. */
void fl_render_result(tr_sb *sb, const cushim_api_info *api, int32_t r, int json);

#endif
