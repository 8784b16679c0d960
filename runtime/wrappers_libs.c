/*
 * wrappers_libs.c - one exported wrapper per API of the libraries with their
 * own params header (NVML, ...: descriptor 'separate'), expanded from the
 * generated cushim_separate_apis.inc with the body in wrap.h.
 */
#include "cushim_all_params.h"
#include "wrap.h"

#include "cushim_separate_apis.inc"
