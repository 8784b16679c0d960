/*
 * tr_pfev.h - the writer's events (the JSON format's objects) read back, for
 * the Perfetto encoder (tr_pf.c): spans into the text, strings decoded.
 * Host-free; the writer thread only.
 */
#ifndef TR_PFEV_H
#define TR_PFEV_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tr_json.h"

typedef struct tr_pf_span {
    const char *p;
    size_t n;
} tr_pf_span;

/* An event of the writer's, read back: spans into its text. */
typedef struct tr_pf_ev {
    char ph;
    tr_pf_span cat, name, args, s, bp;   /* strings: their JSON text, quotes excluded; args: the object's text */
    tr_pf_span args_name, args_start;    /* an 'M' event's args.name, args.start */
    uint64_t pid, tid, id, ts, dur;
    int has_dur, has_id;
} tr_pf_ev;

/* Is span 'k' the literal 'lit'? */
#define PF_IS(k, lit) ((k).n == sizeof lit - 1 && memcmp((k).p, lit, sizeof lit - 1) == 0)

/* The members of the event object 'json' (n bytes) into *ev: 0, or -1 (no "ph": not one of the writer's). */
int tr_pfev_parse(tr_pf_ev *ev, const char *json, size_t n);
/* The next "key":value of an object's text at *pp (on its '{' or a ','): 1, 0 at its end (or malformed). */
int tr_pfev_member(const char **pp, const char *e, tr_pf_span *key, tr_pf_span *val);
/* A string value's span without its quotes. */
tr_pf_span tr_pfev_unquote(tr_pf_span v);
/* The leading digits of a number's text. */
uint64_t tr_pfev_u64(tr_pf_span v);
/* A JSON string's text (quotes excluded) decoded into 'out' (UTF-8; \u00XX as U+00XX, as JSON readers do). */
void tr_pfev_decode(tr_sb *out, tr_pf_span v);

#endif /* TR_PFEV_H */
