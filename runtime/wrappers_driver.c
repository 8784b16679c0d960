/*
 * wrappers_driver.c - one exported wrapper per driver API (libcuda.so.1 exports),
 * expanded from the generated cushim_driver_apis.inc with the body in wrap.h.
 */
#include "wrap.h"

#include "cushim_driver_apis.inc"
