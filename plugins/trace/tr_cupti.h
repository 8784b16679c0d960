/*
 * tr_cupti.h - GPU activity from CUPTI (tr_cupti.c: the GPU part), loaded at run
 * time; its records go through the recording part (tr_record.h).
 */
#ifndef TR_CUPTI_H
#define TR_CUPTI_H

#include <stddef.h>
#include <stdint.h>

#include "tr_base.h"

/* CUPTI loaded (path: NULL or "" the toolkit's) and started, its pause policy with gpu_detach's 'detach_s'. 0, or
   -1 with 'err' set. */
int tr_cupti_start(tr_state *st, const char *path, double detach_s, char *err, size_t errlen);
void tr_cupti_flush(void);
void tr_cupti_push(uint64_t seq);
void tr_cupti_pop(void);
/* unhook: called by tr_hooks_follow (its lock held) with the state the hooks follow - follow: after the hooks
   are removed (paused) or before they are added again (resumed); followed: after either. The pause policy's
   (tr_cupti_int.h): the product's detaches CUPTI gpu_detach seconds into a pause (at a launch's exit callback)
   and attaches it again at a resume before the hooks return (tr_gdetach.c). */
void tr_cupti_follow(int paused);
void tr_cupti_followed(int paused);
void tr_cupti_fork_child(void);

extern const tr_part tr_part_gpu;

#endif /* TR_CUPTI_H */
