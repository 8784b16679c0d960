# Unit tests of the shipped plugins (plugins/). faultinject: its rule parser and decider alone
# (fi_rules), and the whole plugin under a host table written in the test (fi_plugin).
find_package(Threads REQUIRED)
set(_fi_dir "${PROJECT_SOURCE_DIR}/plugins/faultinject")

add_executable(fi_rules_test fi_rules_test.c "${_fi_dir}/rules.c")
target_include_directories(fi_rules_test PRIVATE "${_fi_dir}")
target_link_libraries(fi_rules_test PRIVATE PkgConfig::CMOCKA m)
target_compile_options(fi_rules_test PRIVATE ${CUSHIM_WARN_FLAGS})
add_test(NAME fi_rules COMMAND fi_rules_test)

# cushim_results.inc of the generated tree gives the test host its result names.
add_executable(fi_plugin_test fi_plugin_test.c "${_fi_dir}/faultinject.c" "${_fi_dir}/rules.c")
target_include_directories(fi_plugin_test PRIVATE
  "${_fi_dir}" "${PROJECT_SOURCE_DIR}/sdk/include" "${CUSHIM_GENERATED_DIR}")
target_link_libraries(fi_plugin_test PRIVATE PkgConfig::CMOCKA Threads::Threads)
target_compile_options(fi_plugin_test PRIVATE ${CUSHIM_WARN_FLAGS})
add_test(NAME fi_plugin COMMAND fi_plugin_test)
set_tests_properties(fi_plugin PROPERTIES LABELS concurrency)

# smlimit: the admission logic alone (plugins/smlimit/core.c) under a simulated clock and GPU.
set(_sml_dir "${PROJECT_SOURCE_DIR}/plugins/smlimit")
add_executable(sml_core_test sml_core_test.c "${_sml_dir}/core.c")
target_include_directories(sml_core_test PRIVATE "${_sml_dir}")
target_link_libraries(sml_core_test PRIVATE PkgConfig::CMOCKA m)
target_compile_options(sml_core_test PRIVATE ${CUSHIM_WARN_FLAGS})
add_test(NAME sml_core COMMAND sml_core_test)
# The shared region's turn (shm.c): take, give, hand-off, gone holders and waiters, nonsense.
add_executable(sml_shm_test sml_shm_test.c "${_sml_dir}/shm.c")
target_include_directories(sml_shm_test PRIVATE "${_sml_dir}" "${PROJECT_SOURCE_DIR}/sdk/include")
target_link_libraries(sml_shm_test PRIVATE PkgConfig::CMOCKA rt cushim_region)
target_compile_options(sml_shm_test PRIVATE ${CUSHIM_WARN_FLAGS})
add_test(NAME sml_shm COMMAND sml_shm_test)
# The physical GPU of a CUDA ordinal by CUDA_VISIBLE_DEVICES (plugins/common/visible.c: memlimit's and smlimit's
# regions and per-device limits are by physical device).
add_executable(visible_test visible_test.c)
target_link_libraries(visible_test PRIVATE PkgConfig::CMOCKA cushim_region)
target_compile_options(visible_test PRIVATE ${CUSHIM_WARN_FLAGS})
add_test(NAME visible COMMAND visible_test)
# The fatal signals' handlers chained to the program's (plugins/common/fatal.c: the trace's and the flight
# recorder's last words).
add_executable(fatal_test fatal_test.c)
target_link_libraries(fatal_test PRIVATE PkgConfig::CMOCKA cushim_region)
target_compile_options(fatal_test PRIVATE ${CUSHIM_WARN_FLAGS})
add_test(NAME fatal COMMAND fatal_test)
# A selector of API ids built one at a time (plugins/common/idsel.c: memlimit's, the flight recorder's and the
# trace's hook groups).
add_executable(idsel_test idsel_test.c)
target_link_libraries(idsel_test PRIVATE PkgConfig::CMOCKA cushim_region)
target_compile_options(idsel_test PRIVATE ${CUSHIM_WARN_FLAGS})
add_test(NAME idsel COMMAND idsel_test)
# ... and the reading of its limits (the option and HAMi-core's variables).
add_executable(sml_limits_test sml_limits_test.c "${_sml_dir}/limitspec.c")
target_include_directories(sml_limits_test PRIVATE "${PROJECT_SOURCE_DIR}/sdk/include")
target_include_directories(sml_limits_test PRIVATE "${_sml_dir}")
target_link_libraries(sml_limits_test PRIVATE PkgConfig::CMOCKA)
target_compile_options(sml_limits_test PRIVATE ${CUSHIM_WARN_FLAGS})
add_test(NAME sml_limits COMMAND sml_limits_test)

# trace: its renderer, summary maths and buffers alone (trace_render), and the buffers under
# concurrent producers and a writer (trace_buf_threads).
set(_tr_dir "${PROJECT_SOURCE_DIR}/plugins/trace")
# the Perfetto encoder alone, past its interning bound (tests/e2e/pftrace.py checks the file)
add_executable(trace_pf_encode trace_pf_encode.c "${_tr_dir}/tr_pf.c" "${_tr_dir}/tr_pfev.c")
target_include_directories(trace_pf_encode PRIVATE "${_tr_dir}")
target_link_libraries(trace_pf_encode PRIVATE trace_text)
target_compile_options(trace_pf_encode PRIVATE ${CUSHIM_WARN_FLAGS})
add_test(NAME trace_pf_reset COMMAND sh "${CMAKE_CURRENT_SOURCE_DIR}/trace_pf_reset_test.sh"
  "$<TARGET_FILE:trace_pf_encode>" "${PROJECT_SOURCE_DIR}/tests/e2e/pftrace.py")
set_tests_properties(trace_pf_reset PROPERTIES TIMEOUT 300)
add_executable(trace_render_test trace_render_test.c "${_tr_dir}/tr_render.c" "${_tr_dir}/tr_buf.c")
target_include_directories(trace_render_test PRIVATE "${_tr_dir}" "${PROJECT_SOURCE_DIR}/sdk/include")
target_link_libraries(trace_render_test PRIVATE trace_text PkgConfig::CMOCKA m ${CMAKE_DL_LIBS})
target_compile_options(trace_render_test PRIVATE ${CUSHIM_WARN_FLAGS})
add_test(NAME trace_render COMMAND trace_render_test)

add_executable(trace_buf_threads_test trace_buf_threads_test.c "${_tr_dir}/tr_buf.c")
target_include_directories(trace_buf_threads_test PRIVATE "${_tr_dir}")
target_link_libraries(trace_buf_threads_test PRIVATE Threads::Threads)
target_compile_options(trace_buf_threads_test PRIVATE ${CUSHIM_WARN_FLAGS})
add_test(NAME trace_buf_threads COMMAND trace_buf_threads_test)
set_tests_properties(trace_buf_threads PROPERTIES LABELS concurrency)
# ... and their chunk pool (recycling, the limit, the idle cap, refill, fork).
add_executable(trace_pool_test trace_pool_test.c "${_tr_dir}/tr_buf.c")
target_include_directories(trace_pool_test PRIVATE "${_tr_dir}")
target_link_libraries(trace_pool_test PRIVATE PkgConfig::CMOCKA Threads::Threads)
target_compile_options(trace_pool_test PRIVATE ${CUSHIM_WARN_FLAGS})
add_test(NAME trace_pool COMMAND trace_pool_test)
set_tests_properties(trace_pool PROPERTIES LABELS concurrency TIMEOUT 60)   # a drain that waits for the lock hangs

# trace: its files follow the layering table in docs/plugins/trace.md ("Parts and layers": no upward include, no
# circle between modules) and each .c is in its table of source files (tools/check-layers.py, as runtime_layers).
add_test(NAME trace_layers COMMAND python3 "${PROJECT_SOURCE_DIR}/tools/check-layers.py" "${PROJECT_SOURCE_DIR}" trace)

# trace: bench/cpu/trace_ablate.c (the ablated query hooks, bench only) is plugins/trace/tr_query.c's hook but for
# its TR_ABLATE blocks, and the product names no TR_ABLATE.
add_test(NAME trace_ablate_same COMMAND python3 "${CMAKE_CURRENT_SOURCE_DIR}/trace_ablate_same.py" "${PROJECT_SOURCE_DIR}")

# trace: the recording fast path (tr_plan.h, tr_plan_fast) against the general path it replaces.
add_executable(trace_fast_test trace_fast_test.c "${_tr_dir}/tr_plan.c")
target_include_directories(trace_fast_test PRIVATE "${_tr_dir}" "${PROJECT_SOURCE_DIR}/sdk/include")
target_link_libraries(trace_fast_test PRIVATE trace_text PkgConfig::CMOCKA)
target_compile_options(trace_fast_test PRIVATE ${CUSHIM_WARN_FLAGS})
add_test(NAME trace_fast COMMAND trace_fast_test)

# trace: CALL records (one per fast-path call) through the real writer against the ENTER/EXIT pairs they
# replace, the open-call stack and the unfinished calls written from it.
find_package(ZLIB REQUIRED)
add_executable(trace_call_test trace_call_test.c "${_tr_dir}/tr_plan.c" "${_tr_dir}/tr_writer.c"
  "${_tr_dir}/tr_wfile.c" "${_tr_dir}/tr_pf.c" "${_tr_dir}/tr_pfev.c" "${_tr_dir}/tr_wevents.c" "${_tr_dir}/tr_render.c" "${_tr_dir}/tr_link.c"
  "${_tr_dir}/tr_buf.c" "${_tr_dir}/tr_clock.c" "${PROJECT_SOURCE_DIR}/tools/stats-nvtx.c")
target_include_directories(trace_call_test PRIVATE "${_tr_dir}" "${PROJECT_SOURCE_DIR}/sdk/include"
  "${PROJECT_SOURCE_DIR}/tools")
target_link_libraries(trace_call_test PRIVATE trace_text cushim_region PkgConfig::CMOCKA ZLIB::ZLIB Threads::Threads m)
target_compile_options(trace_call_test PRIVATE ${CUSHIM_WARN_FLAGS})
add_test(NAME trace_call COMMAND trace_call_test)
set_tests_properties(trace_call PROPERTIES LABELS concurrency)

# trace: a fork waits for the start-up of a thread of the plugin's (a sanitizer's locks held there, inherited held by
# the child: e2e trace_gpu_fork's child hung at exit).
add_executable(trace_fork_start_test trace_fork_start_test.c "${_tr_dir}/tr_writer.c" "${_tr_dir}/tr_base.c"
  "${_tr_dir}/tr_wfile.c" "${_tr_dir}/tr_pf.c" "${_tr_dir}/tr_pfev.c" "${_tr_dir}/tr_wevents.c" "${_tr_dir}/tr_render.c" "${_tr_dir}/tr_link.c"
  "${_tr_dir}/tr_buf.c" "${_tr_dir}/tr_clock.c" "${PROJECT_SOURCE_DIR}/tools/stats-nvtx.c")
target_include_directories(trace_fork_start_test PRIVATE "${_tr_dir}" "${PROJECT_SOURCE_DIR}/sdk/include"
  "${PROJECT_SOURCE_DIR}/tools")
target_link_libraries(trace_fork_start_test PRIVATE trace_text cushim_region PkgConfig::CMOCKA ZLIB::ZLIB Threads::Threads m)
target_compile_options(trace_fork_start_test PRIVATE ${CUSHIM_WARN_FLAGS})
add_test(NAME trace_fork_start COMMAND trace_fork_start_test)

# trace: the writer's conversion of the hooks' TSC times (tr_clock.c), its pairs and table.
add_executable(trace_clock_test trace_clock_test.c "${_tr_dir}/tr_clock.c")
target_include_directories(trace_clock_test PRIVATE "${_tr_dir}")
target_link_libraries(trace_clock_test PRIVATE PkgConfig::CMOCKA cushim_region)
target_compile_options(trace_clock_test PRIVATE ${CUSHIM_WARN_FLAGS})
add_test(NAME trace_clock_unit COMMAND trace_clock_test)

# trace: a runtime call's CUPTI record linked to the traced call inside it (tr_link.c).
add_executable(trace_link_test trace_link_test.c "${_tr_dir}/tr_link.c")
target_include_directories(trace_link_test PRIVATE "${_tr_dir}")
target_link_libraries(trace_link_test PRIVATE PkgConfig::CMOCKA)
target_compile_definitions(trace_link_test PRIVATE TR_LINK_KEEP=16384u)
target_compile_options(trace_link_test PRIVATE ${CUSHIM_WARN_FLAGS})
add_test(NAME trace_link COMMAND trace_link_test)

# memlimit: its host-free parts (limits and HAMi's variables, the budget region, the pointer table).
set(_ml_dir "${PROJECT_SOURCE_DIR}/plugins/memlimit")
add_executable(ml_unit_test ml_unit_test.c "${_ml_dir}/ml_limits.c" "${_ml_dir}/ml_budget.c" "${_ml_dir}/ml_table.c"
  "${_ml_dir}/ml_caller.c" "${_ml_dir}/ml_ovopts.c")
target_include_directories(ml_unit_test PRIVATE "${_ml_dir}" "${PROJECT_SOURCE_DIR}/sdk/include")
target_link_libraries(ml_unit_test PRIVATE PkgConfig::CMOCKA Threads::Threads cushim_region)
target_compile_options(ml_unit_test PRIVATE ${CUSHIM_WARN_FLAGS})
# A yield between the budget's check and its add: racing threads interleave there, so the test bites.
target_compile_definitions(ml_unit_test PRIVATE ML_BUDGET_RACE_WINDOW)
add_test(NAME ml_unit COMMAND ml_unit_test)
set_tests_properties(ml_unit PROPERTIES LABELS concurrency)

# lua: its files follow the layering table in docs/lua-policies.md ("Layers": no upward include, no circle between
# modules) and each .c is in its table of source files (tools/check-layers.py, as runtime_layers); lua_symbols checks
# the compiled files as well (a call into a higher layer, or calls in a circle, which includes need not show), and
# lua_symbols_selftest that this check fails on a circle and an upward call of a small tree of its own.
add_test(NAME lua_layers COMMAND python3 "${PROJECT_SOURCE_DIR}/tools/check-layers.py" "${PROJECT_SOURCE_DIR}" lua)
add_test(NAME lua_symbols_selftest COMMAND bash "${PROJECT_SOURCE_DIR}/tests/check_layers_objects.sh" "${PROJECT_SOURCE_DIR}")
if(TARGET lua)
  add_test(NAME lua_symbols COMMAND python3 "${PROJECT_SOURCE_DIR}/tools/check-layers.py" "${PROJECT_SOURCE_DIR}" lua
           --objects "$<TARGET_OBJECTS:lua>")
endif()

# lua: the bridge under the fuzz harness's host (tests/fuzz/fuzz_lua.c), each seed policy of its corpus replayed
# without libFuzzer: crashes, runaways (the test's timeout), broken program memory and string patterns that differ from
# liblua's own fail it.
if(TARGET lua)
  set(_lp_dir "${PROJECT_SOURCE_DIR}/plugins/lua")
  file(GLOB _lp_sources "${_lp_dir}/*.c")   # the plugin's files, whatever they are
  add_executable(lp_fuzz_replay "${PROJECT_SOURCE_DIR}/tests/fuzz/fuzz_lua.c" ${_lp_sources})
  target_include_directories(lp_fuzz_replay PRIVATE "${_lp_dir}" "${PROJECT_SOURCE_DIR}/sdk/include"
    "${PROJECT_SOURCE_DIR}/tests/fuzz" "${CUSHIM_LUA54_INCLUDE}")
  target_compile_definitions(lp_fuzz_replay PRIVATE FUZZ_LUA_MAIN)
  target_compile_options(lp_fuzz_replay PRIVATE ${CUSHIM_WARN_FLAGS})
  target_link_libraries(lp_fuzz_replay PRIVATE ${CMAKE_DL_LIBS} Threads::Threads)
  file(GLOB _lp_seeds "${PROJECT_SOURCE_DIR}/tests/fuzz/corpus/lua/*.lua")
  add_test(NAME lp_fuzz_replay COMMAND lp_fuzz_replay ${_lp_seeds})
  set_tests_properties(lp_fuzz_replay PROPERTIES TIMEOUT 60)
endif()
# The flight recorder's TSC times and their conversion to CLOCK_MONOTONIC (plugins/flight/fl_clock.c).
add_executable(fl_clock_test fl_clock_test.c "${PROJECT_SOURCE_DIR}/plugins/flight/fl_clock.c")
target_include_directories(fl_clock_test PRIVATE "${PROJECT_SOURCE_DIR}/plugins/flight")
target_link_libraries(fl_clock_test PRIVATE PkgConfig::CMOCKA cushim_region)
target_compile_options(fl_clock_test PRIVATE ${CUSHIM_WARN_FLAGS})
add_test(NAME flight_clock_unit COMMAND fl_clock_test)
