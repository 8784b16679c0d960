/*
 * tr_nvtx.h - the plugin as an NVTX injection library (tr_nvtx.c: the NVTX part);
 * NVTX_INJECTION64_PATH starts it, through InitializeInjectionNvtx2.
 */
#ifndef TR_NVTX_H
#define TR_NVTX_H

#include "tr_base.h"

/* In a forked child, before it goes on. */
void tr_nvtx_fork_child(void);

extern const tr_part tr_part_nvtx;

#endif /* TR_NVTX_H */
