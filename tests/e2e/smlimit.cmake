# smlimit end to end (run_smlimit.sh): the plugin loaded through CUSHIM_PLUGINS by the preloaded shim,
# against the fake driver with simulated kernel durations (FAKE_CUDA_KERNEL_US). Included at the end of
# tests/e2e/CMakeLists.txt (its e2e_test() and E2E_* settings).
if(NOT TARGET smlimit)
  return()
endif()

add_executable(e2e_smlimit e2e_smlimit.c)
target_include_directories(e2e_smlimit PRIVATE "${CUSHIM_CUDA_INCLUDE}")
target_compile_options(e2e_smlimit PRIVATE ${CUSHIM_WARN_FLAGS} -Wno-deprecated-declarations)
target_link_libraries(e2e_smlimit PRIVATE cushim_fake_cuda pthread)

foreach(_c native limit env preload unlimited threads weights pidns clockref turns turns3 turndead region priority
    prioguard priolatency policy devmap mpsprio)
  e2e_test(smlimit_${_c} COMMAND sh "${CMAKE_CURRENT_SOURCE_DIR}/run_smlimit.sh" ${_c}
    $<TARGET_FILE:e2e_smlimit> $<TARGET_FILE:smlimit>)
endforeach()
# The launcher preloads the shim itself (without a sanitizer runtime first, which ASan refuses).
e2e_test(smlimit_launcher COMMAND sh "${CMAKE_CURRENT_SOURCE_DIR}/run_smlimit.sh" launcher
  $<TARGET_FILE:e2e_smlimit> $<TARGET_FILE:smlimit> "${PROJECT_SOURCE_DIR}/tools/cushim"
  NO_PRELOAD ENV "CUSHIM_LIB=$<TARGET_FILE:cushim>")
set_tests_properties(smlimit_launcher PROPERTIES LABELS "e2e;no_asan")
# 'cushim limit GROUP --sm=20' on two running processes (the launcher runs the cushim-limit helper).
e2e_test(smlimit_live COMMAND sh "${CMAKE_CURRENT_SOURCE_DIR}/run_smlimit.sh" live
  $<TARGET_FILE:e2e_smlimit> $<TARGET_FILE:smlimit> "${PROJECT_SOURCE_DIR}/tools/cushim"
  ENV "CUSHIM_LIB=$<TARGET_FILE:cushim>")
# 'cushim limit GROUP --priority=high' then '--priority=off' on a high- and a low-priority process.
e2e_test(smlimit_prioritylive COMMAND sh "${CMAKE_CURRENT_SOURCE_DIR}/run_smlimit.sh" prioritylive
  $<TARGET_FILE:e2e_smlimit> $<TARGET_FILE:smlimit> "${PROJECT_SOURCE_DIR}/tools/cushim"
  ENV "CUSHIM_LIB=$<TARGET_FILE:cushim>")
set_property(TEST smlimit_threads smlimit_limit smlimit_weights smlimit_turns smlimit_turns3 smlimit_priority
  smlimit_prioguard smlimit_priolatency smlimit_policy smlimit_devmap APPEND PROPERTY LABELS concurrency)
set_tests_properties(smlimit_pidns PROPERTIES SKIP_RETURN_CODE 77)
