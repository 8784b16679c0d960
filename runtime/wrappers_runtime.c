/*
 * wrappers_runtime.c - one exported wrapper per runtime API (libcudart exports),
 * expanded from the generated cushim_runtime_apis.inc with the body in wrap.h.
 */
#include "wrap.h"

#include "cushim_runtime_apis.inc"
