/*
 * tr_gpause.h - the pause policy the plugin links (tr_cupti_int.h says what one
 * is): what CUPTI does while recording is paused with unhook=1. The product's
 * is tr_gdetach.c (gpu_detach); the gpu-ab copy, a bench-only build, links
 * bench/gpu/trace_gpuab.c in its place. The GPU part (tr_gpu.c) hands it to
 * tr_cupti_start; the control part tells it where the hooks stand.
 */
#ifndef TR_GPAUSE_H
#define TR_GPAUSE_H

#include "tr_cupti_int.h"

extern const tr_gpause tr_gpause_policy;

/* unhook: called by tr_hooks_follow (its lock held) with the state the hooks follow - follow: after the hooks
   are removed (paused) or before they are added again (resumed); followed: after either. The product's detaches
   CUPTI gpu_detach seconds into a pause (at a launch's exit callback) and attaches it again at a resume before
   the hooks return. */
void tr_cupti_follow(int paused);
void tr_cupti_followed(int paused);

#endif /* TR_GPAUSE_H */
