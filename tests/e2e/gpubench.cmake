# The GPU benchmarks' plumbing against the fake libraries (bench/gpu/dryrun.sh): the checks 'tracebench' and
# 'universal bench' and bench/gpu/run.sh with stand-ins for the GPU programs; every configuration runs, the trace
# plugin's cost line is parsed, each result is PASS with its figures and verdicts. Included at the end of
# tests/e2e/CMakeLists.txt. Not under ASan (stand-in shell scripts, python3 and gcc run under the shim).
if(NOT TARGET trace OR NOT TARGET cushim_fake_nvml OR NOT TARGET cushim_fake_cublas)
  return()
endif()
e2e_test(gpubench_dryrun COMMAND bash "${PROJECT_SOURCE_DIR}/bench/gpu/dryrun.sh" "${PROJECT_BINARY_DIR}" NO_PRELOAD)
set_tests_properties(gpubench_dryrun PROPERTIES LABELS "e2e;no_asan")

# bench/gpu/launch_bench.c's in-process A/B (BENCH_AB) against the fake driver: the empty hooks added and
# removed between blocks, the trace plugin's recording toggled with SIGUSR2; run_gpubench_ab.sh checks the
# result line and that the toggled trace holds the calls of the recording blocks only (not timings).
add_executable(gpubench_launch_fake "${PROJECT_SOURCE_DIR}/bench/gpu/launch_bench.c")
target_include_directories(gpubench_launch_fake PRIVATE "${CUSHIM_CUDA_INCLUDE}" "${PROJECT_SOURCE_DIR}/sdk/include" "${PROJECT_SOURCE_DIR}/bench")
target_compile_options(gpubench_launch_fake PRIVATE ${CUSHIM_WARN_FLAGS})
target_link_libraries(gpubench_launch_fake PRIVATE cushim_fake_cuda ${CMAKE_DL_LIBS})
# With the stand-in libcupti (trace.cmake), also BENCH_AB_VS: the trace, CUPTI's callback and the floor in turns.
set(_gb_cupti "")
if(TARGET trace_fake_cupti)
  set(_gb_cupti "$<TARGET_FILE:trace_fake_cupti>")
endif()
# With the gpu-ab copy of the plugin (plugins/trace/CMakeLists.txt) too: its CUPTI switch and re-attachment.
set(_gb_gpuab "")
if(TARGET trace_gpuab AND TARGET trace_fake_cupti)
  set(_gb_gpuab "$<TARGET_FILE:trace_gpuab>")
endif()
# With the flight recorder's A/B copy (plugins/flight/CMakeLists.txt): BENCH_AB_VS switching it.
set(_gb_flightab "")
if(TARGET flight_ab AND TARGET trace_fake_cupti)
  set(_gb_flightab "$<TARGET_FILE:flight_ab>")
endif()
e2e_test(gpubench_ab COMMAND sh "${CMAKE_CURRENT_SOURCE_DIR}/run_gpubench_ab.sh" $<TARGET_FILE:gpubench_launch_fake>
  "${E2E_PRELOAD}" $<TARGET_FILE:trace> "${E2E_OUT}" "${_gb_cupti}" "${_gb_gpuab}" "${_gb_flightab}" NO_PRELOAD)
