# cushim-gen tests (included by tests/unit/CMakeLists.txt when cmocka is found, and by
# codegen/CMakeLists.txt when codegen is built on its own).
if(NOT TARGET cushim-gen)
  return()
endif()
if(NOT DEFINED CUSHIM_SOURCE_ROOT)
  set(CUSHIM_SOURCE_ROOT "${PROJECT_SOURCE_DIR}")
endif()
set(_cg_unit "${CUSHIM_SOURCE_ROOT}/tests/unit")

# End to end on the synthetic headers of tests/unit/headers/.
add_executable(codegen_gen_test ${_cg_unit}/codegen_gen_test.c)
target_link_libraries(codegen_gen_test PRIVATE PkgConfig::CMOCKA)
target_compile_options(codegen_gen_test PRIVATE ${CUSHIM_WARN_FLAGS})
target_compile_definitions(codegen_gen_test PRIVATE
  CG_EXE="$<TARGET_FILE:cushim-gen>" CG_HEADERS="${_cg_unit}/headers")
add_dependencies(codegen_gen_test cushim-gen)
add_test(NAME codegen_gen COMMAND codegen_gen_test)

# The committed trees compile: every X-macro line as a wrapper whose 'RET NAME PROTO' matches the
# header declaration, an unpacking invoker, the metadata and the procaddr table. Also checks that
# each tree is exactly what cushim-gen makes (--verify).
set(_cg_versions 13.0)
if(EXISTS "${CUSHIM_EXTRA_HEADERS_DIR}/12.9/include/cuda.h")
  list(APPEND _cg_versions 12.9)
endif()
if(EXISTS "${CUSHIM_EXTRA_HEADERS_DIR}/11.8/include/cuda.h")
  list(APPEND _cg_versions 11.8)
endif()
if(EXISTS "${CUSHIM_EXTRA_HEADERS_DIR}/13.5/include/cuda.h")
  list(APPEND _cg_versions 13.5)
endif()
foreach(_v IN LISTS _cg_versions)
  if(_v STREQUAL "13.0")
    set(_inc "${CUSHIM_CUDA_INCLUDE}")
  else()
    set(_inc "${CUSHIM_EXTRA_HEADERS_DIR}/${_v}/include")
  endif()
  string(REPLACE "." "_" _t "${_v}")
  include("${CUSHIM_SOURCE_ROOT}/codegen/trees.cmake")
  set(_gdir "${CUSHIM_SOURCE_ROOT}/generated/cuda-${_v}")
  set(_nvml "${CUSHIM_NVML_INCLUDE}")
  if(DEFINED CUSHIM_NVML_INCLUDE_${_t})
    set(_nvml "${CUSHIM_NVML_INCLUDE_${_t}}")
  endif()
  add_executable(codegen_compile_${_t} ${_cg_unit}/codegen_compile_check.c ${_gdir}/cushim_meta.c)
  target_include_directories(codegen_compile_${_t} PRIVATE
    ${_gdir} ${_inc} ${_nvml} ${CUSHIM_SOURCE_ROOT}/sdk/include)
  target_compile_options(codegen_compile_${_t} PRIVATE ${CUSHIM_WARN_FLAGS} -Wno-deprecated-declarations)
  add_test(NAME codegen_compile_${_t} COMMAND codegen_compile_${_t})
  add_test(NAME codegen_verify_${_t}
           COMMAND cushim-gen --quiet --cuda-include ${_inc} ${CUSHIM_GEN_ARGS_${_t}} --verify ${_gdir})
endforeach()
