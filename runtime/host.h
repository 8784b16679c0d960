/*
 * host.h - the host table (host.c): struct cushim_host, handed to every
 * plugin's init and returned by the one SDK export cushim_host_get.
 */
#ifndef RT_HOST_H
#define RT_HOST_H

#include "cushim/cushim.h"

extern const cushim_host hs_host;

#endif /* RT_HOST_H */
