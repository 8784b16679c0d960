# Included by tests/unit/runtime.cmake (RT_TEST_DIR, RT_TEST_FLAGS, rt_stub_cuda defined there).

# A failed driver search is tried again after the program loads a driver: preload (linked with
# libcushim.so) and drop-in (linked with the drop-in, only its directory on the library path).
foreach(v shim dropin)
  add_executable(rt_reload_retry_${v}_test "${RT_TEST_DIR}/rt_reload_retry_test.c")
  target_compile_options(rt_reload_retry_${v}_test PRIVATE ${RT_TEST_FLAGS})
  target_compile_definitions(rt_reload_retry_${v}_test PRIVATE
    RT_STUB_DRIVER="${CMAKE_CURRENT_BINARY_DIR}/rt_stub/libcuda.so.1" RT_RETRY_DROPIN=$<STREQUAL:${v},dropin>)
  target_link_options(rt_reload_retry_${v}_test PRIVATE -Wl,--no-as-needed)
  add_dependencies(rt_reload_retry_${v}_test rt_stub_cuda)
  add_test(NAME rt_reload_retry_${v}_test COMMAND rt_reload_retry_${v}_test)
endforeach()
target_link_libraries(rt_reload_retry_shim_test PRIVATE cushim PkgConfig::CMOCKA ${CMAKE_DL_LIBS})
target_link_libraries(rt_reload_retry_dropin_test PRIVATE cushim_dropin PkgConfig::CMOCKA ${CMAKE_DL_LIBS})
set_tests_properties(rt_reload_retry_shim_test PROPERTIES ENVIRONMENT
  "CUSHIM_REAL_LIBCUDA=/nonexistent/libcuda.so.1;CUSHIM_LOG=off")
set_tests_properties(rt_reload_retry_dropin_test PROPERTIES ENVIRONMENT
  "LD_LIBRARY_PATH=${CMAKE_BINARY_DIR}/dropin;CUSHIM_LOG=off")
