/*
 * typemeta_layouts.c - the listed structs' layouts by offsetof() on this machine's
 * CUDA headers, in the shim's internal configuration (it declares the _v1 structs);
 * typemeta_check.c compares them with the shim's tables. Only cuda.h and
 * cuda_runtime_api.h: every listed struct is declared there, and the graphics interop
 * headers the generated tree also includes need GL/EGL/VDPAU headers a GPU server
 * often lacks.
 */
#include <stddef.h>

#ifndef __CUDA_API_VERSION_INTERNAL
#define __CUDA_API_VERSION_INTERNAL
#endif
#include <cuda.h>
#include <cuda_runtime_api.h>
#include "typemeta_layouts.h"

#define CUSHIM_STRUCT_CHECK(NAME, CTYPE, SIZE) {#NAME, NULL, 0, sizeof(CTYPE)},
#define CUSHIM_FIELD_CHECK(NAME, CTYPE, FIELD, OFFSET, SIZE) \
    {#NAME, #FIELD, offsetof(CTYPE, FIELD), sizeof(((CTYPE *)0)->FIELD)},
const struct tm_layout tm_layouts[] = {
#include "cushim_types_check.h"
    {NULL, NULL, 0, 0}};
