# Unit tests of the runtime (runtime/): included by tests/unit/CMakeLists.txt when cmocka is found.
# Whitebox tests link the runtime's object library (cushim_rt); blackbox tests link libcushim.so.
set(RT_TEST_DIR "${CMAKE_CURRENT_LIST_DIR}")
set(RT_TEST_FLAGS ${CUSHIM_WARN_FLAGS} -Wno-deprecated-declarations)

function(rt_unit name)
  add_executable(${name} "${RT_TEST_DIR}/${name}.c")
  target_link_libraries(${name} PRIVATE cushim_rt PkgConfig::CMOCKA)
  target_compile_options(${name} PRIVATE ${RT_TEST_FLAGS})
  add_test(NAME ${name} COMMAND ${name})
endfunction()

rt_unit(rt_hooks_test)
rt_unit(rt_depth_test)
rt_unit(rt_stress_test)
rt_unit(rt_clock_test)
rt_unit(rt_procaddr_test)
rt_unit(rt_counts_test)
rt_unit(rt_exports_test)
rt_unit(rt_select_test)
rt_unit(rt_sdk_test)
rt_unit(rt_sdk_reclaim_test)
rt_unit(rt_types_test)
set_tests_properties(rt_sdk_reclaim_test PROPERTIES LABELS concurrency TIMEOUT 300
  ENVIRONMENT "CUSHIM_REAL_LIBCUDA=/nonexistent/libcuda.so.1")
set_tests_properties(rt_sdk_test PROPERTIES ENVIRONMENT
  "CUSHIM_REAL_LIBCUDA=/nonexistent/libcuda.so.1;CUSHIM_LOG=debug;CUSHIM_LOG_FILE=${CMAKE_CURRENT_BINARY_DIR}/rt_sdk_test.log")
set_tests_properties(rt_select_test PROPERTIES ENVIRONMENT "CUSHIM_REAL_LIBCUDA=/nonexistent/libcuda.so.1")
set_tests_properties(rt_hooks_test rt_depth_test rt_stress_test rt_procaddr_test rt_exports_test rt_types_test
  PROPERTIES ENVIRONMENT "CUSHIM_REAL_LIBCUDA=/nonexistent/libcuda.so.1")
set_tests_properties(rt_counts_test PROPERTIES
  ENVIRONMENT "CUSHIM_COUNTS=${CMAKE_CURRENT_BINARY_DIR}/rt_counts_test.tsv")
if(CUSHIM_SANITIZE STREQUAL "thread")
  target_compile_definitions(rt_stress_test PRIVATE STRESS_ITERS=4000)
  set_tests_properties(rt_sdk_reclaim_test PROPERTIES TIMEOUT 600)
endif()
# The assertions are relative to what was retired (peak limbo and live chains under a quarter of it; nothing left
# after hooks_sync), so they bite at any count. 100 000 cycles against 32 threads took 42-61 s of CI's 2 cores and
# slowed every test that ran beside it (e2e_procaddr 6 s alone, 29 s there): 25 000 in the default build.
if(NOT CUSHIM_SANITIZE)
  target_compile_definitions(rt_sdk_reclaim_test PRIVATE RECLAIM_ITERS=25000)
else()
  # The sanitizers look for races and memory errors between the cycles and the calling threads, which a few
  # thousand cycles exercise as well as more. CI's 15-minute budget on 2 cores: 32 instrumented threads on 2
  # cores hold the grace periods up. Under ASan 25 000 cycles against 32 threads took 25-61 s, 10 000 still
  # 20-23 s, against 8 threads 2.6 s: 25 000 against 8. Under TSan 25 000 cycles against 32 threads took 70-260 s
  # and 10 000 still 157-168 s, 10 000 against 8 threads 51-73 s, 5 000 28-38 s (the longest test of the stage,
  # starving the others of both cores): 2 500 against 8 there (5 000 changes, ~4 million calls; 16 s here).
  if(CUSHIM_SANITIZE STREQUAL "thread")
    target_compile_definitions(rt_sdk_reclaim_test PRIVATE RECLAIM_ITERS=2500 NTHREADS=8)
  else()
    target_compile_definitions(rt_sdk_reclaim_test PRIVATE RECLAIM_ITERS=25000 NTHREADS=8)
  endif()
endif()
target_compile_definitions(rt_exports_test PRIVATE
  RT_SHIM_PATH="$<TARGET_FILE:cushim>" RT_DROPIN_PATH="$<TARGET_FILE:cushim_dropin>")
add_dependencies(rt_exports_test cushim cushim_dropin)
set(RT_ORACLE "${PROJECT_SOURCE_DIR}/tests/gpu/fixtures/procaddr-oracle.tsv")
target_compile_definitions(rt_procaddr_test PRIVATE RT_ORACLE_PATH="${RT_ORACLE}"
  RT_EXPORTS_PATH="${PROJECT_SOURCE_DIR}/tests/gpu/fixtures/libcuda-580-exports.txt")

# CUSHIM_PLUGINS: builds of the probe plugin, broken in one way or another.
set(RT_PLUGIN_DIR "${CMAKE_CURRENT_BINARY_DIR}/plugins")
set(RT_PROBE_SRC "${PROJECT_SOURCE_DIR}/tests/e2e/e2e_plugin_probe.c")
set(_rt_probe_targets "")
function(rt_probe name)
  add_library(rt_probe_${name} MODULE "${RT_PROBE_SRC}")
  target_include_directories(rt_probe_${name} PRIVATE "${PROJECT_SOURCE_DIR}/sdk/include" "${CUSHIM_GENERATED_DIR}")
  target_compile_definitions(rt_probe_${name} PRIVATE PROBE_NAME="probe-${name}" ${ARGN})
  target_compile_options(rt_probe_${name} PRIVATE ${CUSHIM_WARN_FLAGS})
  target_link_libraries(rt_probe_${name} PRIVATE ${CMAKE_DL_LIBS})
  set_target_properties(rt_probe_${name} PROPERTIES PREFIX "" OUTPUT_NAME probe_${name}
    LIBRARY_OUTPUT_DIRECTORY "${RT_PLUGIN_DIR}")
  set(_rt_probe_targets ${_rt_probe_targets} rt_probe_${name} PARENT_SCOPE)
endfunction()
rt_probe(good)
# the shim is 1.0: 'older' is minor 0 of its major (loads), 'major' 2.0 and 'newer' 1.1 are refused
rt_probe(older PROBE_ABI=0x10000)
rt_probe(major PROBE_ABI=0x20000)
rt_probe(newer PROBE_ABI=CUSHIM_ABI_VERSION+1)
rt_probe(small PROBE_DEF_SIZE=24)
rt_probe(noentry PROBE_NO_ENTRY)
rt_probe(required PROBE_REQUIRED)
rt_probe(baddefault PROBE_BAD_DEFAULT)
rt_unit(rt_loader_test)
add_dependencies(rt_loader_test ${_rt_probe_targets})
target_compile_definitions(rt_loader_test PRIVATE RT_PLUGIN_DIR="${RT_PLUGIN_DIR}")
set_tests_properties(rt_loader_test PROPERTIES ENVIRONMENT
  "CUSHIM_REAL_LIBCUDA=/nonexistent/libcuda.so.1;CUSHIM_LOG=info;CUSHIM_LOG_FILE=${CMAKE_CURRENT_BINARY_DIR}/rt_loader_test.log")

# Hooked calls left by longjmp, siglongjmp, C++ exceptions (issue #10 item 6b).
rt_unit(rt_sdk_unwind_test)
set_tests_properties(rt_sdk_unwind_test PROPERTIES ENVIRONMENT "CUSHIM_REAL_LIBCUDA=/nonexistent/libcuda.so.1")
include(CheckLanguage)
check_language(CXX)
if(CMAKE_CXX_COMPILER)
  enable_language(CXX)
  add_executable(rt_sdk_unwind_cxx_test "${RT_TEST_DIR}/rt_sdk_unwind_cxx_test.cc")
  target_link_libraries(rt_sdk_unwind_cxx_test PRIVATE cushim_rt PkgConfig::CMOCKA)
  target_compile_options(rt_sdk_unwind_cxx_test PRIVATE -Wall -Wextra -Werror -Wno-deprecated-declarations)
  add_test(NAME rt_sdk_unwind_cxx_test COMMAND rt_sdk_unwind_cxx_test)
  set_tests_properties(rt_sdk_unwind_cxx_test PROPERTIES ENVIRONMENT "CUSHIM_REAL_LIBCUDA=/nonexistent/libcuda.so.1")
else()
  message(STATUS "no C++ compiler: rt_sdk_unwind_cxx_test (hooks left by C++ exceptions) is not built")
endif()

# A signal handler's first call of an API while its thread holds the hook mutex (issue #10 item 6a).
rt_unit(rt_signal_test)
add_dependencies(rt_signal_test rt_stub_cuda)
set_tests_properties(rt_signal_test PROPERTIES TIMEOUT 300
  ENVIRONMENT "CUSHIM_REAL_LIBCUDA=${CMAKE_CURRENT_BINARY_DIR}/rt_stub/libcuda.so.1")

# Stand-in driver and RTLD_NEXT probe libraries.
add_library(rt_stub_cuda SHARED "${RT_TEST_DIR}/rt_lib_cuda.c")
set_target_properties(rt_stub_cuda PROPERTIES OUTPUT_NAME cuda SUFFIX ".so.1" NO_SONAME ON
  LIBRARY_OUTPUT_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}/rt_stub")
target_link_options(rt_stub_cuda PRIVATE -Wl,-soname,libcuda.so.1 -Wl,-Bsymbolic)  # binds its own references, like the real driver
target_compile_options(rt_stub_cuda PRIVATE ${CUSHIM_WARN_FLAGS})
foreach(l a b)
  add_library(rt_next_${l} SHARED "${RT_TEST_DIR}/rt_lib_next_${l}.c")
  target_compile_options(rt_next_${l} PRIVATE ${CUSHIM_WARN_FLAGS})
  target_link_libraries(rt_next_${l} PRIVATE ${CMAKE_DL_LIBS})
endforeach()

add_executable(rt_dlsym_test "${RT_TEST_DIR}/rt_dlsym_test.c")
target_compile_options(rt_dlsym_test PRIVATE ${RT_TEST_FLAGS})
target_link_options(rt_dlsym_test PRIVATE -Wl,--no-as-needed)
target_link_libraries(rt_dlsym_test PRIVATE cushim rt_next_a rt_next_b rt_stub_cuda PkgConfig::CMOCKA ${CMAKE_DL_LIBS})
add_test(NAME rt_dlsym_test COMMAND rt_dlsym_test)
add_test(NAME rt_dlsym_disabled_test COMMAND rt_dlsym_test)
set_tests_properties(rt_dlsym_disabled_test PROPERTIES ENVIRONMENT "CUSHIM_DISABLE=1")

add_executable(rt_nodriver_test "${RT_TEST_DIR}/rt_nodriver_test.c")
target_compile_options(rt_nodriver_test PRIVATE ${RT_TEST_FLAGS})
target_link_libraries(rt_nodriver_test PRIVATE cushim PkgConfig::CMOCKA ${CMAKE_DL_LIBS})
add_test(NAME rt_nodriver_test COMMAND rt_nodriver_test)
set_tests_properties(rt_nodriver_test PROPERTIES ENVIRONMENT "CUSHIM_REAL_LIBCUDA=/nonexistent/libcuda.so.1")

# CUSHIM_HOOK_SERVE: hooks that serve calls in a process with no driver (the remote plugin's mode).
add_executable(rt_serve_test "${RT_TEST_DIR}/rt_serve_test.c")
target_compile_options(rt_serve_test PRIVATE ${RT_TEST_FLAGS})
target_include_directories(rt_serve_test PRIVATE "${PROJECT_SOURCE_DIR}/sdk/include")
target_link_libraries(rt_serve_test PRIVATE cushim PkgConfig::CMOCKA ${CMAKE_DL_LIBS})
add_test(NAME rt_serve_test COMMAND rt_serve_test)
set_tests_properties(rt_serve_test PROPERTIES ENVIRONMENT "CUSHIM_REAL_LIBCUDA=/nonexistent/libcuda.so.1;CUSHIM_LOG=off")
add_test(NAME rt_serve_none_test COMMAND rt_serve_test none)
set_tests_properties(rt_serve_none_test PROPERTIES ENVIRONMENT "CUSHIM_REAL_LIBCUDA=none;CUSHIM_LOG=off")

add_executable(rt_dropin_test "${RT_TEST_DIR}/rt_dropin_test.c")
target_compile_options(rt_dropin_test PRIVATE ${RT_TEST_FLAGS})
target_compile_definitions(rt_dropin_test PRIVATE RT_DROPIN_DIR="${CMAKE_BINARY_DIR}/dropin")
target_link_libraries(rt_dropin_test PRIVATE PkgConfig::CMOCKA ${CMAKE_DL_LIBS})
add_dependencies(rt_dropin_test cushim_dropin rt_stub_cuda)
add_test(NAME rt_dropin_test COMMAND rt_dropin_test)
set_tests_properties(rt_dropin_test PROPERTIES ENVIRONMENT
  "LD_LIBRARY_PATH=${CMAKE_BINARY_DIR}/dropin:${CMAKE_CURRENT_BINARY_DIR}/rt_stub")
add_test(NAME rt_dropin_env_test COMMAND rt_dropin_test)
set_tests_properties(rt_dropin_env_test PROPERTIES ENVIRONMENT
  "LD_LIBRARY_PATH=${CMAKE_BINARY_DIR}/dropin;CUSHIM_REAL_LIBCUDA=${CMAKE_CURRENT_BINARY_DIR}/rt_stub/libcuda.so.1")

add_executable(rt_dropin_linked_test "${RT_TEST_DIR}/rt_dropin_linked_test.c")
target_compile_options(rt_dropin_linked_test PRIVATE ${RT_TEST_FLAGS})
target_link_options(rt_dropin_linked_test PRIVATE -Wl,--no-as-needed)
target_link_libraries(rt_dropin_linked_test PRIVATE cushim_dropin PkgConfig::CMOCKA ${CMAKE_DL_LIBS})
add_dependencies(rt_dropin_linked_test rt_stub_cuda)
add_test(NAME rt_dropin_linked_test COMMAND rt_dropin_linked_test)
set_tests_properties(rt_dropin_linked_test PROPERTIES ENVIRONMENT
  "LD_LIBRARY_PATH=${CMAKE_BINARY_DIR}/dropin:${CMAKE_CURRENT_BINARY_DIR}/rt_stub")
if(TARGET cushim_fake_cudart)   # the runtime's names on a libcudart handle stay libcudart's
  add_dependencies(rt_dropin_linked_test cushim_fake_cudart)
  set_property(TEST rt_dropin_linked_test APPEND PROPERTY ENVIRONMENT
    "RT_DROPIN_CUDART=$<TARGET_FILE:cushim_fake_cudart>")
endif()

# A libcudart of another major version: runtime calls forwarded untouched, driver calls still seen.
if(TARGET cushim_fake_cudart_other)
  add_executable(rt_foreign_test "${RT_TEST_DIR}/rt_foreign_test.c")
  target_compile_options(rt_foreign_test PRIVATE ${RT_TEST_FLAGS})
  target_include_directories(rt_foreign_test PRIVATE "${CUSHIM_GENERATED_DIR}" "${PROJECT_SOURCE_DIR}/sdk/include")
  target_compile_definitions(rt_foreign_test PRIVATE RT_FOREIGN_CUDART="$<TARGET_FILE:cushim_fake_cudart_other>"
    RT_FOREIGN_SONAME="libcudart.so.${CUSHIM_FAKE_RT_OTHER}")
  target_link_options(rt_foreign_test PRIVATE -Wl,--no-as-needed)
  target_link_libraries(rt_foreign_test PRIVATE cushim PkgConfig::CMOCKA ${CMAKE_DL_LIBS})
  add_dependencies(rt_foreign_test cushim_fake_cudart_other cushim_fake_cuda)
  add_test(NAME rt_foreign_test COMMAND rt_foreign_test)
  set_tests_properties(rt_foreign_test PROPERTIES ENVIRONMENT
    "LD_LIBRARY_PATH=$<TARGET_FILE_DIR:cushim_fake_cuda>")
endif()

# Multi-threaded tests run again under TSan in CI (tools/test.sh: ctest -L concurrency).
set_tests_properties(rt_stress_test PROPERTIES LABELS concurrency)
set_tests_properties(rt_clock_test PROPERTIES LABELS concurrency)
set_property(TEST rt_sdk_test APPEND PROPERTY LABELS concurrency)   # hooks_sync against a running hook

# Two copies of the drop-in on the library path (an installed one and a build tree's): each must
# skip the other as "the real driver" (else their wrappers jump to each other forever).
set(RT_DROPIN_COPY "${CMAKE_CURRENT_BINARY_DIR}/rt_dropin_copy/libcuda.so.1")
add_custom_command(OUTPUT "${RT_DROPIN_COPY}"
  COMMAND ${CMAKE_COMMAND} -E copy "$<TARGET_FILE:cushim_dropin>" "${RT_DROPIN_COPY}"
  DEPENDS cushim_dropin VERBATIM)
add_custom_target(rt_dropin_copy ALL DEPENDS "${RT_DROPIN_COPY}")
add_dependencies(rt_dropin_test rt_dropin_copy)
add_test(NAME rt_dropin_two_copies_test COMMAND rt_dropin_test)
set_tests_properties(rt_dropin_two_copies_test PROPERTIES TIMEOUT 30 ENVIRONMENT
  "LD_LIBRARY_PATH=${CMAKE_BINARY_DIR}/dropin:${CMAKE_CURRENT_BINARY_DIR}/rt_dropin_copy:${CMAKE_CURRENT_BINARY_DIR}/rt_stub")

# CUSHIM_COUNTS naming a FIFO nobody reads (its reader saw EOF and left): exit must not block
# on opening it.
add_test(NAME rt_counts_fifo_test COMMAND sh -c
  "f=\"$1/rt_counts_test.fifo\"; rm -f \"$f\" && mkfifo \"$f\" && CUSHIM_COUNTS=\"$f\" \"$0\"; s=$?; rm -f \"$f\"; exit $s"
  $<TARGET_FILE:rt_nodriver_test> "${CMAKE_CURRENT_BINARY_DIR}")
set_tests_properties(rt_counts_fifo_test PROPERTIES TIMEOUT 30
  ENVIRONMENT "CUSHIM_REAL_LIBCUDA=/nonexistent/libcuda.so.1;CUSHIM_LOG=off")

# dlsym of CUDA names from constructors/destructors of a dlopen'ed library (x) and its dependency (y).
add_library(rt_ctor_y SHARED "${RT_TEST_DIR}/rt_lib_ctor.c")
target_compile_definitions(rt_ctor_y PRIVATE RT_CTOR_NAME="y" RT_CTOR_FN=rt_ctor_dep)
add_library(rt_ctor_x SHARED "${RT_TEST_DIR}/rt_lib_ctor.c")
target_compile_definitions(rt_ctor_x PRIVATE RT_CTOR_NAME="x" RT_CTOR_FN=rt_ctor_x RT_CTOR_DEP)
foreach(l rt_ctor_x rt_ctor_y)
  target_compile_options(${l} PRIVATE ${CUSHIM_WARN_FLAGS})
  target_link_libraries(${l} PRIVATE ${CMAKE_DL_LIBS})
endforeach()
target_link_libraries(rt_ctor_x PRIVATE rt_ctor_y)
add_executable(rt_ctor_dlsym_test "${RT_TEST_DIR}/rt_ctor_dlsym_test.c")
target_compile_options(rt_ctor_dlsym_test PRIVATE ${RT_TEST_FLAGS})
target_compile_definitions(rt_ctor_dlsym_test PRIVATE RT_CTOR_LIB="$<TARGET_FILE:rt_ctor_x>")
target_link_libraries(rt_ctor_dlsym_test PRIVATE cushim PkgConfig::CMOCKA pthread ${CMAKE_DL_LIBS})
add_dependencies(rt_ctor_dlsym_test rt_ctor_x)
add_test(NAME rt_ctor_dlsym_test COMMAND rt_ctor_dlsym_test)
set_tests_properties(rt_ctor_dlsym_test PROPERTIES TIMEOUT 60
  ENVIRONMENT "CUSHIM_REAL_LIBCUDA=/nonexistent/libcuda.so.1;CUSHIM_LOG=off")

# A fork handler registered before the (late-loaded) drop-in makes a first CUDA call while fork prepares.
add_executable(rt_fork_handler_test "${RT_TEST_DIR}/rt_fork_handler_test.c")
target_compile_options(rt_fork_handler_test PRIVATE ${RT_TEST_FLAGS})
target_link_libraries(rt_fork_handler_test PRIVATE PkgConfig::CMOCKA ${CMAKE_DL_LIBS} pthread)
add_dependencies(rt_fork_handler_test cushim_dropin rt_stub_cuda)
add_test(NAME rt_fork_handler_test COMMAND rt_fork_handler_test)
set_tests_properties(rt_fork_handler_test PROPERTIES TIMEOUT 20 ENVIRONMENT
  "LD_LIBRARY_PATH=${CMAKE_BINARY_DIR}/dropin:${CMAKE_CURRENT_BINARY_DIR}/rt_stub")
set_property(TEST rt_ctor_dlsym_test APPEND PROPERTY LABELS concurrency)

# ---- configuration and trust (hardening): docs/runtime.md "Configuration and trust" ----
# The value parser (pure): every variable, any case, each rejection's line.
rt_unit(rt_cfg_parse_test)
# cnt_write run several times: complete totals in the file, no repeated block on a descriptor.
rt_unit(rt_counts_rewrite_test)
set_tests_properties(rt_counts_rewrite_test PROPERTIES
  ENVIRONMENT "CUSHIM_COUNTS=${CMAKE_CURRENT_BINARY_DIR}/rt_counts_rewrite_test.tsv")
add_test(NAME rt_counts_rewrite_stderr_test COMMAND sh -c
  "f=\"$1/rt_counts_rewrite_test.stderr\"; rm -f \"$f\"; RT_STDERR_FILE=\"$f\" \"$0\" 2>\"$f\""
  $<TARGET_FILE:rt_counts_rewrite_test> "${CMAKE_CURRENT_BINARY_DIR}")
set_tests_properties(rt_counts_rewrite_stderr_test PROPERTIES ENVIRONMENT "CUSHIM_COUNTS=-")

# A small program linked with libcushim.so, for the environment, counts-file and setuid tests.
foreach(p rt_cfg_prog rt_secure_prog)
  add_executable(${p} "${RT_TEST_DIR}/${p}.c")
  target_compile_options(${p} PRIVATE ${RT_TEST_FLAGS})
  target_link_options(${p} PRIVATE -Wl,--no-as-needed)
  target_link_libraries(${p} PRIVATE cushim ${CMAKE_DL_LIBS})
  add_dependencies(${p} rt_stub_cuda)
endforeach()
set(RT_STUB_LIBCUDA "${CMAKE_CURRENT_BINARY_DIR}/rt_stub/libcuda.so.1")
# Under ASan an instrumented shim preloaded into /bin/sh needs the sanitizer runtime first.
set(RT_CFG_PRELOAD "$<TARGET_FILE:cushim>")
if(CUSHIM_SANITIZE STREQUAL "address" OR CUSHIM_SANITIZE STREQUAL "thread")
  if(CUSHIM_SANITIZE STREQUAL "address")
    set(_rt_san asan)
  else()
    set(_rt_san tsan)
  endif()
  execute_process(COMMAND ${CMAKE_C_COMPILER} -print-file-name=lib${_rt_san}.so
    OUTPUT_VARIABLE _rt_san_lib OUTPUT_STRIP_TRAILING_WHITESPACE)
  set(RT_CFG_PRELOAD "${_rt_san_lib}:${RT_CFG_PRELOAD}")
endif()
add_test(NAME rt_cfg_env_test COMMAND sh "${RT_TEST_DIR}/rt_cfg_env_test.sh"
  $<TARGET_FILE:rt_cfg_prog> "${CMAKE_CURRENT_BINARY_DIR}")
add_test(NAME rt_counts_files_test COMMAND sh "${RT_TEST_DIR}/rt_counts_files_test.sh"
  $<TARGET_FILE:rt_cfg_prog> "${RT_CFG_PRELOAD}" "${CMAKE_CURRENT_BINARY_DIR}")
add_test(NAME rt_secure_test COMMAND sh "${RT_TEST_DIR}/rt_secure_test.sh"
  $<TARGET_FILE:rt_secure_prog> "${RT_STUB_LIBCUDA}" "${CMAKE_CURRENT_BINARY_DIR}")
set_tests_properties(rt_cfg_env_test rt_counts_files_test PROPERTIES TIMEOUT 60
  ENVIRONMENT "CUSHIM_REAL_LIBCUDA=${RT_STUB_LIBCUDA};ASAN_OPTIONS=detect_leaks=0")
set_tests_properties(rt_secure_test PROPERTIES TIMEOUT 60 SKIP_RETURN_CODE 77)

# Hardening (issue #10: reload, retry, dlvsym, entries): docs/runtime.md, "Stacking, reloading and symbol versions".
include("${CMAKE_CURRENT_LIST_DIR}/runtime_hardening.cmake")
