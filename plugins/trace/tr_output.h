/*
 * tr_output.h - the trace file (tr_output.c: the output part): opened at the
 * process's first recorded call, with the writer thread (tr_writer.h).
 */
#ifndef TR_OUTPUT_H
#define TR_OUTPUT_H

#include "tr_base.h"

/* The file, the writer thread and the parts' 'opened' steps (st->output_opened) start with the first recorded
   call of the process (so a process that makes no CUDA call, like a shell between the launcher and the program,
   leaves no file): 1 when the output is ready, else 0 (failed: said once; or this thread is opening it). */
int tr_output_ready(tr_state *st);

extern const tr_part tr_part_output;

#endif /* TR_OUTPUT_H */
