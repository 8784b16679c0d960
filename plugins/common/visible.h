/*
 * visible.h - which physical GPU a CUDA ordinal is, by CUDA_VISIBLE_DEVICES. memlimit's budgets and smlimit's
 * groups are shared by processes that may see the GPUs in different orders ("1,0" beside "0,1", or a subset
 * "2,0"): the regions and the per-device limits are indexed by the physical (host/NVML) index, which this
 * module alone derives from the variable. Host-free: tests/unit/visible_test.c drives it.
 */
#ifndef CUSHIM_COMMON_VISIBLE_H
#define CUSHIM_COMMON_VISIBLE_H

/* The physical index of CUDA ordinal 'ord' under CUDA_VISIBLE_DEVICES = 'cvd' (NULL or empty: the identity).
   -1 when it cannot be told by index: a list of UUIDs or MIG names, anything but decimal numbers separated by
   commas (and spaces), 'ord' negative or past the list. */
int vis_physical(const char *cvd, int ord);

#endif /* CUSHIM_COMMON_VISIBLE_H */
