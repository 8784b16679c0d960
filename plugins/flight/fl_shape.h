/*
 * fl_shape.h - which parameters of an API the flight recorder and its dump tool treat specially, from the
 * metadata alone, so that both read a record the same way: a launch's function and kernel arguments, a call's
 * stream, the pointers a dump attributes to allocations. Host-free: the plugin passes host->api_param, the tool
 * the generated table's own accessor.
 */
#ifndef FL_SHAPE_H
#define FL_SHAPE_H

#include <stdint.h>

#include <cushim/cushim_meta.h>

typedef const cushim_param_info *(*fl_param_fn)(const cushim_api_info *api, uint32_t index);

typedef struct fl_shape {
    int func;        /* the launched function (CUfunction, CUkernel, a runtime stub), -1 if none */
    int args;        /* kernelParams / args (void **), -1 if none                                */
    int stream;      /* the stream handle, -1 if none                                            */
    int driver_launch;   /* a driver launch with both: its kernel arguments are recorded          */
} fl_shape;

void fl_shape_of(const cushim_api_info *api, fl_param_fn param, fl_shape *out);
/* Whether parameter p of api holds an address a dump attributes: a device pointer anywhere, a plain pointer of a
   runtime copy or set (the runtime passes device addresses as void *; the driver's plain pointers are host
   memory). */
int fl_shape_is_addr(const cushim_api_info *api, const cushim_param_info *p);

#endif
