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

#include "tr_json.h"
#include "tr_rec.h"

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
