# flight recorder end to end (run_flight.sh): the plugin loaded through CUSHIM_PLUGINS by the preloaded shim,
# against the fake driver; its files read back by cushim-flight. Included at the end of tests/e2e/CMakeLists.txt.
if(NOT TARGET flight OR NOT TARGET faultinject)
  return()
endif()

add_executable(e2e_flight e2e_flight.c)
target_include_directories(e2e_flight PRIVATE "${CUSHIM_CUDA_INCLUDE}")
target_compile_options(e2e_flight PRIVATE ${CUSHIM_WARN_FLAGS} -Wno-deprecated-declarations)
target_link_libraries(e2e_flight PRIVATE cushim_fake_cuda pthread)

set(_fl sh "${CMAKE_CURRENT_SOURCE_DIR}/run_flight.sh")
set(_fl_args "$<TARGET_FILE:flight>" "$<TARGET_FILE:e2e_flight>" "$<TARGET_FILE:cushim-flight>"
    "$<TARGET_FILE:faultinject>")
foreach(_c basic env kill sticky hang attrib threads exec full readonly query wide clock)
  e2e_test(flight_${_c} COMMAND ${_fl} ${_c} ${_fl_args})
endforeach()
# A forked child of a multi-threaded process: TSan's runtime does not follow (as trace_fork).
if(NOT CUSHIM_SANITIZE STREQUAL "thread")
  e2e_test(flight_fork COMMAND ${_fl} fork ${_fl_args})
endif()
# A real fault: UBSan (with ASan) reports a NULL store and exits before any signal; TSan takes the signal itself.
if(CUSHIM_SANITIZE STREQUAL "")
  e2e_test(flight_segv COMMAND ${_fl} segv ${_fl_args})
endif()
set_tests_properties(flight_full flight_readonly PROPERTIES SKIP_RETURN_CODE 77)
# The bench-only A/B copy (bench/gpu/flight_ab.c; CUSHIM_BUILD_GPUAB, on with the tests).
if(TARGET flight_ab)
  e2e_test(flight_ab COMMAND ${_fl} ab ${_fl_args} "$<TARGET_FILE:flight_ab>")
  set_property(TEST flight_ab APPEND PROPERTY LABELS concurrency)
endif()
set_property(TEST flight_threads APPEND PROPERTY LABELS concurrency)
# The launcher preloads the shim itself (without a sanitizer runtime first, which ASan refuses).
e2e_test(flight_launcher COMMAND ${_fl} launcher ${_fl_args} NO_PRELOAD
  ENV "CUSHIM_LIB=$<TARGET_FILE:cushim>" "CUSHIM_LAUNCHER=${PROJECT_SOURCE_DIR}/tools/cushim")
set_tests_properties(flight_launcher PROPERTIES LABELS "e2e;no_asan")
