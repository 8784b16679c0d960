/*
 * ml_size.h - reading an allocating call through its role (cushim_alloc_role):
 * parameter values, the size before and after the call, the device the
 * properties name, the pointer or handle produced. Struct layouts come from
 * the CUDA headers the build was generated from (cushim_params.h includes
 * them), never from offsets written by hand.
 */
#ifndef ML_SIZE_H
#define ML_SIZE_H

#include <stdint.h>

#include <cushim/cushim.h>

/* Value of parameter 'i' (zero-extended; pointers as their address). */
uint64_t ml_arg(const cushim_host *h, const cushim_call *c, int i);
/* *(param i), read with the pointee's size (elem_size; 8 if unknown); 0 if NULL. */
uint64_t ml_arg_deref(const cushim_host *h, const cushim_call *c, int i);
/* Write v through param i's pointer with the pointee's size. */
void ml_arg_store(const cushim_host *h, const cushim_call *c, int i, uint64_t v);

/* Bytes the role's size rule gives: before the call (after=0: an estimate not
   above the real size) or after a successful call (after=1). */
uint64_t ml_role_size(const cushim_host *h, const cushim_call *c, const cushim_alloc_role *r, int after);

/* Whether the structs the role reads before the call (a descriptor, allocation properties, node parameters)
   can be read: 0 where one points at memory that cannot be read - the driver refuses such a call with an error,
   and reading it here would fault (cushim_read_mem). */
int ml_role_readable(const cushim_host *h, const cushim_call *c, const cushim_alloc_role *r);

/* DEV_PROP / DEV_NODE: the device the properties name (>= 0); -2 when they name
   host memory; -1 unreadable. */
int ml_role_prop_device(const cushim_host *h, const cushim_call *c, const cushim_alloc_role *r);

/* ALLOC/IMPORT/RETAIN after success: the pointer or handle produced. */
uint64_t ml_role_out(const cushim_host *h, const cushim_call *c, const cushim_alloc_role *r);

/* 1 if parameter i of the call's API is a VMM handle (CUmemGenericAllocationHandle). */
int ml_arg_is_handle(const cushim_host *h, const cushim_api_info *info, int i);

#endif
