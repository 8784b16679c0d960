/*
 * typemeta_layouts.c - the listed structs' layouts by offsetof() on this machine's
 * CUDA headers, included as the shim's generated tree includes them (the internal
 * configuration declares the _v1 structs); typemeta_check.c compares them with the
 * shim's tables.
 */
#include <stddef.h>

#include "cushim_cuda_headers.h"
#include "typemeta_layouts.h"

#define CUSHIM_STRUCT_CHECK(NAME, CTYPE, SIZE) {#NAME, NULL, 0, sizeof(CTYPE)},
#define CUSHIM_FIELD_CHECK(NAME, CTYPE, FIELD, OFFSET, SIZE) \
    {#NAME, #FIELD, offsetof(CTYPE, FIELD), sizeof(((CTYPE *)0)->FIELD)},
const struct tm_layout tm_layouts[] = {
#include "cushim_types_check.h"
    {NULL, NULL, 0, 0}};
