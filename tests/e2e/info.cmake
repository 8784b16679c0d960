# 'cushim plugins' (tools/cushim-info.c) refuses what the shim's loader refuses, for the same reason
# (run_info.sh): builds of e2e_info_probe.c, each wrong in one way, judged by cushim-info and by the shim
# (CUSHIM_PLUGINS, over the fake driver). Included from tests/e2e/CMakeLists.txt after trace.cmake.
function(info_probe name)
  add_library(info_probe_${name} MODULE e2e_info_probe.c)
  target_include_directories(info_probe_${name} PRIVATE "${PROJECT_SOURCE_DIR}/sdk/include")
  target_compile_definitions(info_probe_${name} PRIVATE ${ARGN})
  target_compile_options(info_probe_${name} PRIVATE ${CUSHIM_WARN_FLAGS})
  set_target_properties(info_probe_${name} PROPERTIES PREFIX "" OUTPUT_NAME ${name}
                        LIBRARY_OUTPUT_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}/info_probes")
endfunction()
info_probe(good)
info_probe(badname "INFO_NAME=\"Info Probe\"")
info_probe(longname "INFO_NAME=\"p234567890123456789012345678901234567890123456789012345678901234\"")
info_probe(small INFO_DEF_SIZE=24)
info_probe(newer "INFO_ABI=(CUSHIM_ABI_VERSION + 1)")
info_probe(major "INFO_ABI=(CUSHIM_ABI_VERSION + 0x10000)")
info_probe(baddefault INFO_BAD_DEFAULT)
info_probe(badint INFO_BAD_INT_DEFAULT)
info_probe(dup INFO_DUP_OPTION)
info_probe(badoptname INFO_BAD_OPTION_NAME)
info_probe(emptyoptname INFO_EMPTY_OPTION_NAME)
info_probe(badtype INFO_BAD_TYPE)
info_probe(badflags INFO_BAD_FLAGS)
# the SDK ABI of the headers, for the expected reasons of the 'newer' and 'major' builds
file(STRINGS "${PROJECT_SOURCE_DIR}/sdk/include/cushim/cushim.h" _info_abi REGEX "^#define CUSHIM_ABI_(MAJOR|MINOR) [0-9]+")
string(REGEX REPLACE ".*MAJOR ([0-9]+).*" "\\1" _info_major "${_info_abi}")
string(REGEX REPLACE ".*MINOR ([0-9]+).*" "\\1" _info_minor "${_info_abi}")
e2e_test(info_plugins COMMAND sh "${CMAKE_CURRENT_SOURCE_DIR}/run_info.sh" "$<TARGET_FILE:cushim-info>"
  "${CMAKE_CURRENT_BINARY_DIR}/info_probes" "$<TARGET_FILE:vecadd>" ENV "INFO_ABI_MAJOR=${_info_major}"
  "INFO_ABI_MINOR=${_info_minor}")
