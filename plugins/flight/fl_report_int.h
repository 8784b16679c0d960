/*
 * fl_report_int.h - what the dump tool's report modules share (fl_report.c: the calls loaded, kernels, pointer
 * attribution, the event; fl_text.c: the text summary; fl_json.c: the trace-event JSON).
 */
#ifndef FL_REPORT_INT_H
#define FL_REPORT_INT_H

#include <stdint.h>

#include "fl_read.h"
#include "fl_render.h"

typedef struct fl_all {
    const fl_file *f;
    fl_call **calls;     /* per slice */
    size_t *ncalls;
    uint32_t nslices;
    fl_call **order;     /* every call, in the order they began */
    size_t n;
    size_t bad;
    uint64_t t_end;      /* the latest time the file tells (for calls still running) */
} fl_all;

/* fl_report.c */
int fl_load(fl_all *A, const fl_file *f);
void fl_now_if_alive(fl_all *A, int alive);
void fl_unload(fl_all *A);
double fl_rel(const fl_file *f, uint64_t t);       /* seconds since the ring was made */
const char *fl_api_name(uint32_t id);
uint64_t fl_u64_at(const fl_call *c, uint32_t off); /* 8 bytes of the params kept, 0 past them */
/* A launch's kernel: its function entry, else (a runtime launch) the one of the driver launch right inside it. */
const fl_func *fl_kernel_of(const fl_all *A, const fl_call *c);
/* Every address the call passes, one per line after 'indent', attributed; 'json': a JSON object of the same. */
void fl_pointers(tr_sb *sb, const fl_all *A, const fl_call *c, const char *indent, int json);
/* "event: ..." (one line). */
void fl_event_text(tr_sb *sb, const fl_file *f, int alive);

/* fl_text.c */
void fl_call_line(tr_sb *sb, const fl_all *A, const fl_call *c, const char *indent);
void fl_text(tr_sb *sb, const fl_all *A, int alive);

/* fl_json.c */
void fl_json(tr_sb *sb, const fl_all *A, int alive);

#endif
