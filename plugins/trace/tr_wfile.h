/*
 * tr_wfile.h - the trace file's bytes (tr_wfile.c): buffered, gzip when the
 * name ends in .gz, written only while the descriptor is still the file's.
 * Writer thread only.
 */
#ifndef TR_WFILE_H
#define TR_WFILE_H

#include <stddef.h>

#include "tr_wstate.h"

#define TW_OBUF (256u * 1024u)   /* the output buffer (w->obuf)        */
#define TW_ZBUF (64u * 1024u)    /* the compressor's output (w->zbuf)  */

/* Is w->fd still the trace file? 'reopen': when it is not, open the path again (the same file or nothing). */
int tw_fd_ours(tr_writer *w, int reopen);
/* 'n' bytes to the file, through the buffer. */
void tw_out_put(tr_writer *w, const char *s, size_t n);
/* The buffer to the file (compressed for .gz). */
void tw_out_flush(tr_writer *w);
/* The file's end: the gzip trailer, then the descriptor closed if it is still ours. */
void tw_out_close(tr_writer *w);
/* The event in w->sb to the file (with its separator); w->sb emptied. */
void tw_emit(tr_writer *w);

#endif /* TR_WFILE_H */
