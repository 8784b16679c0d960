/*
 * tr_cupti.h - GPU activity from CUPTI (tr_cupti.c), loaded at run time; its
 * records go through the recording part (tr_record.h). The GPU part (tr_gpu.c)
 * starts it when the file opens.
 */
#ifndef TR_CUPTI_H
#define TR_CUPTI_H

#include <stddef.h>
#include <stdint.h>

#include "tr_base.h"

struct tr_gpause;   /* a pause policy: tr_cupti_int.h; the one linked, tr_gpause.h */
/* CUPTI loaded (path: NULL or "" the toolkit's) and started, with the pause policy 'policy' and gpu_detach's
   'detach_s'. 0, or -1 with 'err' set. */
int tr_cupti_start(tr_state *st, const char *path, double detach_s, const struct tr_gpause *policy, char *err,
                   size_t errlen);
/* At exit: CUPTI's last records handed over (unless it is detached). */
void tr_cupti_flush(void);
/* The correlation stack of a traced launch, copy or set (its pre hook, its post hook). */
void tr_cupti_push(uint64_t seq);
void tr_cupti_pop(void);
/* In a forked child: CUPTI is not carried over. */
void tr_cupti_fork_child(void);

#endif /* TR_CUPTI_H */
