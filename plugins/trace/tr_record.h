/*
 * tr_record.h - records into the calling thread's buffer (tr_record.c: the
 * recording part): the thread's buffer, quiet threads, standalone records
 * (NVTX, GPU activity, correlations).
 */
#ifndef TR_RECORD_H
#define TR_RECORD_H

#include <stdint.h>

#include "tr_base.h"

/* The calling thread's buffer once tr_thread_buf has found it (the hooks read it first). */
extern TR_HIDDEN __thread tr_tbuf *tr_tb_cached;
/* The calling thread's CUDA calls are the tracer's own (CUPTI's): never recorded (1), or again (0). */
int tr_thread_quiet(int quiet);   /* the thread's calls not recorded (1) or recorded (0); returns the previous */

/* The calling thread's buffer (created on first use); NULL when out of memory or finished. */
tr_tbuf *tr_thread_buf(void);
/* One standalone record (NVTX, GPU activity, correlation): 'extra' bytes after the
   header, then 'text' (may be NULL) as blob 0. Dropped and counted when there is no room. */
void tr_record(uint16_t type, uint64_t seq, uint64_t parent, uint64_t t, const void *extra, uint32_t extra_len,
               const char *text, uint32_t text_len);
/* The same with a second text, 'text2' (NULL or empty: none), as blob 1 (an NVTX event's domain name). */
void tr_record2(uint16_t type, uint64_t seq, uint64_t parent, uint64_t t, const void *extra, uint32_t extra_len,
                const char *text, uint32_t text_len, const char *text2, uint32_t text2_len);


extern const tr_part tr_part_recording;

#endif /* TR_RECORD_H */
