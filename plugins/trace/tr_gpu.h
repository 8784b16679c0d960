/*
 * tr_gpu.h - the GPU part (tr_gpu.c): GPU activity through CUPTI (gpu=1).
 */
#ifndef TR_GPU_H
#define TR_GPU_H

#include "tr_base.h"

extern const tr_part tr_part_gpu;

#endif /* TR_GPU_H */
