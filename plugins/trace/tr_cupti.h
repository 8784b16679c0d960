/*
 * tr_cupti.h - GPU activity from CUPTI (tr_cupti.c: the GPU part), loaded at run
 * time; its records go through the recording part (tr_record.h).
 */
#ifndef TR_CUPTI_H
#define TR_CUPTI_H

#include <stddef.h>
#include <stdint.h>

#include "tr_base.h"

int tr_cupti_start(tr_state *st, const char *path, char *err, size_t errlen);
void tr_cupti_flush(void);
void tr_cupti_push(uint64_t seq);
void tr_cupti_pop(void);
/* unhook: called by tr_hooks_follow (its lock held) with the state the hooks follow: paused detaches CUPTI
   gpu_detach seconds later (at a launch's exit callback), a resume attaches it again before the hooks return */
void tr_cupti_follow(int paused);
void tr_cupti_fork_child(void);
#ifndef TR_GPU_AB
#define TR_GPU_AB 0   /* 1: the gpu-ab build (tr_cupti.c), for the GPU check tracegpuab; never a normal build */
#endif
#if TR_GPU_AB
void tr_cupti_ab_follow(int paused);
#endif


extern const tr_part tr_part_gpu;

#endif /* TR_CUPTI_H */
