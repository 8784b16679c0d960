# trace end to end (run_trace.sh): the trace plugin loaded through CUSHIM_PLUGINS by the preloaded shim,
# against the fake driver. Included at the end of tests/e2e/CMakeLists.txt.

# 'cushim stats' on files made for it (tests/unit/stats_files_test.sh): bounded memory and time whatever the
# file (a sparse file of zeros, a name of 256 MiB, nesting 64 Mi deep), cost linear in the names, names and file
# names holding control bytes and what is not UTF-8, and the reader's verdicts (cut short, malformed, layouts).
# It needs neither the shim nor the plugin. The tables' and the NVTX joiner's look-ups counted, with many names,
# threads and ids (stats_scale_test). (tools/ is configured after tests/: the tool is named by generator
# expression, not looked for.)
add_test(NAME stats_files COMMAND sh "${PROJECT_SOURCE_DIR}/tests/unit/stats_files_test.sh"
  "$<TARGET_FILE:cushim-stats>")
set_tests_properties(stats_files PROPERTIES TIMEOUT 120 ENVIRONMENT "E2E_OUT=${E2E_OUT}")
add_executable(stats_scale_test "${PROJECT_SOURCE_DIR}/tests/unit/stats_scale_test.c"
  "${PROJECT_SOURCE_DIR}/tools/stats-nvtx.c")
target_include_directories(stats_scale_test PRIVATE "${PROJECT_SOURCE_DIR}/tools")
target_link_libraries(stats_scale_test PRIVATE trace_text PkgConfig::CMOCKA m)
target_compile_options(stats_scale_test PRIVATE ${CUSHIM_WARN_FLAGS})
add_test(NAME stats_scale COMMAND stats_scale_test)

if(NOT TARGET trace)
  return()
endif()

add_executable(e2e_trace e2e_trace.c)
target_include_directories(e2e_trace PRIVATE "${CUSHIM_CUDA_INCLUDE}")
target_compile_options(e2e_trace PRIVATE ${CUSHIM_WARN_FLAGS} -Wno-deprecated-declarations)
target_link_libraries(e2e_trace PRIVATE cushim_fake_cuda cushim_fake_cudart pthread ${CMAKE_DL_LIBS})
if(EXISTS "${CUSHIM_TOOLS_INCLUDE}/nvtx3/nvToolsExt.h")
  target_compile_definitions(e2e_trace PRIVATE E2E_HAVE_NVTX)
  target_include_directories(e2e_trace SYSTEM PRIVATE "${CUSHIM_TOOLS_INCLUDE}")
endif()

# A stand-in libcupti (the record layouts of the toolkit's headers) for the --trace-gpu plumbing.
set(_tr_cupti "")
if(EXISTS "${CUSHIM_TOOLS_INCLUDE}/cupti_activity.h")
  add_library(trace_fake_cupti SHARED fake_cupti.c)
  target_include_directories(trace_fake_cupti SYSTEM PRIVATE "${CUSHIM_CUDA_INCLUDE}" "${CUSHIM_TOOLS_INCLUDE}")
  target_compile_options(trace_fake_cupti PRIVATE ${CUSHIM_WARN_FLAGS})
  set_target_properties(trace_fake_cupti PROPERTIES C_VISIBILITY_PRESET hidden)
  target_link_libraries(trace_fake_cupti PRIVATE pthread)
  set(_tr_cupti "$<TARGET_FILE:trace_fake_cupti>")
endif()

# flock(2) answering ENOSYS, as a file system without it does (trace_shared: the file is written unlocked)
add_library(e2e_flock_enosys SHARED flock_enosys.c)
target_compile_options(e2e_flock_enosys PRIVATE ${CUSHIM_WARN_FLAGS})

set(_tr sh "${CMAKE_CURRENT_SOURCE_DIR}/run_trace.sh")
set(_tr_args "$<TARGET_FILE:trace>" "$<TARGET_FILE:e2e_trace>" "$<TARGET_FILE:vecadd>" "$<TARGET_FILE:cushim-stats>"
    "${_tr_cupti}")
foreach(_c vecadd runtime structs gz filter closefds full fifo bounded threads shared names exec toggle durations clock sigterm segv_raise abort inflight_exit inflight_abort nvtx nvtx_names nvtx_domains nvtx_signal nvtx_threads capture capture_nvtx timed
           nocupti nocalls drops defer gpu gpu_activity gpu_detach gpu_nvtx_first exports hostile perfetto)
  e2e_test(trace_${_c} COMMAND ${_tr} ${_c} ${_tr_args})
endforeach()
set_property(TEST trace_shared APPEND PROPERTY ENVIRONMENT "E2E_FLOCK_ENOSYS=$<TARGET_FILE:e2e_flock_enosys>")
# names with control bytes and what is not UTF-8 (a kernel's, NVTX ranges', a domain's, the thread's): every output
add_executable(e2e_trace_names e2e_trace_names.c)
target_include_directories(e2e_trace_names PRIVATE "${CUSHIM_CUDA_INCLUDE}")
target_compile_options(e2e_trace_names PRIVATE ${CUSHIM_WARN_FLAGS})
target_link_libraries(e2e_trace_names PRIVATE cushim_fake_cuda pthread)
if(EXISTS "${CUSHIM_TOOLS_INCLUDE}/nvtx3/nvToolsExt.h")
  target_compile_definitions(e2e_trace_names PRIVATE E2E_HAVE_NVTX)
  target_include_directories(e2e_trace_names SYSTEM PRIVATE "${CUSHIM_TOOLS_INCLUDE}")
  target_link_libraries(e2e_trace_names PRIVATE ${CMAKE_DL_LIBS})
endif()
set_property(TEST trace_hostile APPEND PROPERTY ENVIRONMENT "E2E_TRACE_NAMES=$<TARGET_FILE:e2e_trace_names>")
set_property(TEST trace_perfetto APPEND PROPERTY ENVIRONMENT "E2E_TRACE_NAMES=$<TARGET_FILE:e2e_trace_names>")
# The forked child starts its own writer thread, which TSan does not support after a multi-threaded fork
# (it dies, or with die_after_fork=0 reports a "dup thread"): the fork case runs in the other builds.
if(NOT CUSHIM_SANITIZE STREQUAL "thread")
  e2e_test(trace_fork COMMAND ${_tr} fork ${_tr_args})
  e2e_test(trace_timed_fork COMMAND ${_tr} timed_fork ${_tr_args})
  e2e_test(trace_gpu_fork COMMAND ${_tr} gpu_fork ${_tr_args})
endif()
# A real fault: UBSan (with ASan) reports a NULL store and exits before any signal.
if(NOT CUSHIM_SANITIZE STREQUAL "address")
  e2e_test(trace_segv COMMAND ${_tr} segv ${_tr_args})
endif()
# LeakSanitizer's end-of-process scan crashes ("Tracer caught signal 11") when exit() comes from a second
# thread after the plugin's writer thread was joined; ASan's other checks stay on.
e2e_test(trace_thread_exit COMMAND ${_tr} thread_exit ${_tr_args} ENV ASAN_OPTIONS=detect_leaks=0)
e2e_test(trace_thread_names COMMAND ${_tr} thread_names ${_tr_args})
set_property(TEST trace_threads APPEND PROPERTY LABELS concurrency)
set_property(TEST trace_drops APPEND PROPERTY LABELS concurrency)
# capture ranges: the hooks added and removed on the application's threads while the writer runs (unhook=1)
set_property(TEST trace_capture trace_capture_nvtx trace_timed trace_nvtx_threads trace_gpu_detach APPEND PROPERTY LABELS concurrency)
# The launcher preloads the shim itself (without a sanitizer runtime first, which ASan refuses).
e2e_test(trace_launcher COMMAND ${_tr} launcher ${_tr_args} NO_PRELOAD
  ENV "CUSHIM_LIB=$<TARGET_FILE:cushim>" "CUSHIM_LAUNCHER=${PROJECT_SOURCE_DIR}/tools/cushim")
set_tests_properties(trace_launcher PROPERTIES LABELS "e2e;no_asan")
