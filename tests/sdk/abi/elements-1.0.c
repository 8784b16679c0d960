/*
 * The element sizes of the metadata arrays that SDK 1.0 plugins index directly (s->fields[i], e->values[i],
 * with their compile-time size as the stride: 1.0 had no accessor). Since 1.1 plugins read them through
 * host->struct_field / enum_value_at (cushim_struct_field, cushim_enum_value_at), so these elements may grow in
 * a later minor - but a host whose elements have grown must hand plugins of ABI 1.0 arrays of these sizes, or
 * they read the wrong elements. If this fails, that host side is owed first (docs/plugin-sdk.md, "ABI rules").
 * Compiled and run as sdk_abi_elements-1_0 (tests/sdk/CMakeLists.txt compiles every file of abi/).
 */
#include <stdio.h>

#include <cushim/cushim.h>

_Static_assert(sizeof(cushim_field_info) == 48, "cushim_field_info grew: 1.0 plugins need 48-byte arrays");
_Static_assert(sizeof(cushim_enum_value) == 16, "cushim_enum_value grew: 1.0 plugins need 16-byte arrays");
_Static_assert(sizeof(cushim_param_info) == 64, "cushim_param_info: read through host->api_param since 1.0");

int main(void)
{
    printf("metadata elements: field %zu, enum value %zu bytes (the 1.0 strides)\n", sizeof(cushim_field_info),
           sizeof(cushim_enum_value));
    return 0;
}
