# faultinject end to end (run_faultinject.sh): the plugin loaded through CUSHIM_PLUGINS by the preloaded
# shim and by the drop-in libcuda.so.1, against the fake driver and runtime. Included at the end of
# tests/e2e/CMakeLists.txt (its e2e_test() and E2E_* settings).
if(NOT TARGET faultinject)
  return()
endif()

add_executable(e2e_faultinject e2e_faultinject.c)
target_include_directories(e2e_faultinject PRIVATE "${CUSHIM_CUDA_INCLUDE}")
target_compile_options(e2e_faultinject PRIVATE ${CUSHIM_WARN_FLAGS} -Wno-deprecated-declarations)
target_link_libraries(e2e_faultinject PRIVATE cushim_fake_cuda cushim_fake_cudart pthread)

# The p= pattern the docs promise, from plugins/faultinject/rules.c alone.
add_executable(fi_reference fi_reference.c "${PROJECT_SOURCE_DIR}/plugins/faultinject/rules.c")
target_include_directories(fi_reference PRIVATE "${PROJECT_SOURCE_DIR}/plugins/faultinject")
target_compile_options(fi_reference PRIVATE ${CUSHIM_WARN_FLAGS})

set(_fi sh "${CMAKE_CURRENT_SOURCE_DIR}/run_faultinject.sh")
set(_fi_args "$<TARGET_FILE:faultinject>" "$<TARGET_FILE:e2e_faultinject>" "$<TARGET_FILE:fi_reference>"
    "$<TARGET_FILE:vecadd>" "${E2E_DROPIN_DIR}" "${PROJECT_SOURCE_DIR}/tools/cushim")
foreach(_c nth every after probability window several selectors nested errname summary bad threads vecadd)
  e2e_test(faultinject_${_c} COMMAND ${_fi} ${_c} ${_fi_args})
endforeach()
e2e_test(faultinject_dropin COMMAND ${_fi} dropin ${_fi_args} NO_PRELOAD NO_FAKE_PATH)
# The launcher preloads the shim itself (without a sanitizer runtime first, which ASan refuses).
e2e_test(faultinject_launcher COMMAND ${_fi} launcher ${_fi_args} NO_PRELOAD ENV "CUSHIM_LIB=$<TARGET_FILE:cushim>")
set_tests_properties(faultinject_launcher PROPERTIES SKIP_RETURN_CODE 77 LABELS "e2e;no_asan")
set_property(TEST faultinject_threads APPEND PROPERTY LABELS concurrency)
