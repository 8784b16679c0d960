# Included by tests/e2e/CMakeLists.txt (after e2e_test() and the E2E_* variables are defined):
# reloading a library (issue #10 item 2), stacking with other interposers (item 5), dlvsym versions
# (item 7), RTLD_DEEPBIND (item 8). docs/runtime.md, "Stacking, reloading and symbol versions".

# --- item 2: dlopen / call / dlclose / take the old range / dlopen again
e2e_program(e2e_reload e2e_reload.c)
# The program itself is right: without the shim the library goes away and comes back elsewhere.
e2e_test(e2e_reload_native COMMAND $<TARGET_FILE:e2e_reload> driver NO_PRELOAD ENV E2E_EXPECT_SHIM=0)
e2e_test(e2e_reload_native_cudart COMMAND $<TARGET_FILE:e2e_reload> cudart NO_PRELOAD ENV E2E_EXPECT_SHIM=0)
e2e_test(e2e_reload_driver COMMAND ${_counts} $<TARGET_FILE:e2e_reload> driver NO_PRELOAD ENV E2E_RUN_TAG=.driver)
e2e_test(e2e_reload_cudart COMMAND ${_counts} $<TARGET_FILE:e2e_reload> cudart NO_PRELOAD ENV E2E_RUN_TAG=.cudart)
# Drop-in: libcuda.so.1 is the drop-in; one copy must count every call (run_counts.sh).
e2e_test(e2e_reload_dropin COMMAND ${_counts} $<TARGET_FILE:e2e_reload> dropin NO_PRELOAD NO_FAKE_PATH
  ENV E2E_RUN_TAG=.dropin E2E_RUN_PRELOAD= E2E_RUN_LDPATH=${E2E_DROPIN_DIR} E2E_RUN_EXPECT_SHIM=
      E2E_RUN_DRIVER_ONLY=1 CUSHIM_REAL_LIBCUDA=${E2E_FAKE_LIBCUDA})

# --- item 5: the shim stacked with another interposer, in both orders
foreach(l hami cuonly)
  add_library(e2e_layer_${l} SHARED e2e_layer_${l}.c)
  target_include_directories(e2e_layer_${l} PRIVATE "${CMAKE_CURRENT_SOURCE_DIR}" "${CUSHIM_CUDA_INCLUDE}")
  # Like HAMi-core, never instrumented: its dlsym may run inside a sanitizer runtime's start-up.
  target_compile_options(e2e_layer_${l} PRIVATE ${CUSHIM_WARN_FLAGS} -Wno-deprecated-declarations -fno-sanitize=all)
  target_link_libraries(e2e_layer_${l} PRIVATE ${CMAKE_DL_LIBS} pthread)
  set_target_properties(e2e_layer_${l} PROPERTIES C_VISIBILITY_PRESET hidden)
endforeach()
target_link_libraries(e2e_layer_hami PRIVATE cushim_fake_cuda)   # HAMi-core links libcuda
e2e_program(e2e_stack e2e_stack.c)
target_link_libraries(e2e_stack PRIVATE cushim_fake_cuda)
e2e_program(e2e_stack_rt e2e_stack.c)
target_compile_definitions(e2e_stack_rt PRIVATE E2E_STACK_CUDART)
target_link_libraries(e2e_stack_rt PRIVATE cushim_fake_cudart)
add_dependencies(e2e_stack e2e_layer_hami e2e_layer_cuonly)
add_dependencies(e2e_stack_rt e2e_layer_hami e2e_layer_cuonly)
set(_stack_prefix "${_e2e_preload_prefix}")
if(_stack_prefix STREQUAL "")
  set(_stack_prefix -)   # an empty argument would vanish from the command line
endif()
set(_stack sh "${_sh}/run_stack.sh" "${_stack_prefix}" "${E2E_SHIM}")
foreach(l hami cuonly)
  foreach(o layer-first shim-first)
    set(_lib "$<TARGET_FILE:e2e_layer_${l}>")
    foreach(m direct dlsym procaddr)
      e2e_test(e2e_stack_${l}_${o}_${m} COMMAND ${_stack} ${_lib} ${o} "${E2E_FAKE}" "${E2E_OUT}"
        $<TARGET_FILE:e2e_stack> ${m} NO_PRELOAD)
    endforeach()
    e2e_test(e2e_stack_${l}_${o}_cudart COMMAND ${_stack} ${_lib} ${o} "${E2E_FAKE}" "${E2E_OUT}"
      $<TARGET_FILE:e2e_stack_rt> NO_PRELOAD)
  endforeach()
endforeach()

# --- item 7: dlvsym of CUDA names answers exactly as glibc (NULL for a version nothing defines)
e2e_program(e2e_dlvsym e2e_dlvsym.c)
e2e_test(e2e_dlvsym COMMAND ${_compare} fake $<TARGET_FILE:e2e_dlvsym> NO_PRELOAD)
e2e_test(e2e_dlvsym_nodriver COMMAND ${_compare} nofake $<TARGET_FILE:e2e_dlvsym> nodriver NO_PRELOAD NO_FAKE_PATH)

# --- item 11: RTLD_NEXT emulation does not see objects loaded RTLD_LOCAL by someone else
e2e_program(e2e_next_local e2e_next_local.c)
target_link_options(e2e_next_local PRIVATE -Wl,--export-dynamic-symbol=cuDriverGetVersion)
e2e_test(e2e_next_local COMMAND ${_compare} fake $<TARGET_FILE:e2e_next_local> NO_PRELOAD)

# --- item 8: a library linking libcuda, loaded RTLD_DEEPBIND: drop-in mode sees its calls, preload mode cannot
add_library(e2e_deepbind_lib SHARED e2e_deepbind_lib.c)
target_include_directories(e2e_deepbind_lib PRIVATE "${CUSHIM_CUDA_INCLUDE}" "${PROJECT_SOURCE_DIR}/tests/fake")
target_compile_options(e2e_deepbind_lib PRIVATE ${CUSHIM_WARN_FLAGS} -Wno-deprecated-declarations)
target_link_libraries(e2e_deepbind_lib PRIVATE cushim_fake_cuda ${CMAKE_DL_LIBS})
e2e_program(e2e_deepbind e2e_deepbind.c)
add_dependencies(e2e_deepbind e2e_deepbind_lib)
e2e_test(e2e_deepbind_dropin COMMAND ${_counts} $<TARGET_FILE:e2e_deepbind> $<TARGET_FILE:e2e_deepbind_lib>
  NO_PRELOAD NO_FAKE_PATH ENV E2E_RUN_TAG=.dropin E2E_RUN_PRELOAD= E2E_RUN_LDPATH=${E2E_DROPIN_DIR}
      E2E_RUN_EXPECT_SHIM= E2E_RUN_DRIVER_ONLY=1 CUSHIM_REAL_LIBCUDA=${E2E_FAKE_LIBCUDA})
e2e_test(e2e_deepbind_preload_limit COMMAND $<TARGET_FILE:e2e_deepbind> $<TARGET_FILE:e2e_deepbind_lib> preload-misses)
# ASan refuses to dlopen with RTLD_DEEPBIND (google/sanitizers#611).
set_property(TEST e2e_deepbind_dropin e2e_deepbind_preload_limit APPEND PROPERTY LABELS no_asan)
