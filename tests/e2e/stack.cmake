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
