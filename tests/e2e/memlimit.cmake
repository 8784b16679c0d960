# memlimit end to end (e2e_memlimit.c): the plugin loaded by the preloaded shim against the fake driver
# and runtime (2 devices). Included at the end of tests/e2e/CMakeLists.txt.
if(NOT TARGET memlimit)
  return()
endif()
set(_ml_dir "${PROJECT_SOURCE_DIR}/plugins/memlimit")
# A memlimit end-to-end program (e2e_ml_common.h): NAME.c with the budget's code and the fake's headers; ARGN: the
# fake libraries it links.
function(ml_e2e_program name)
  add_executable(${name} ${name}.c "${_ml_dir}/ml_budget.c" "${_ml_dir}/ml_limits.c")
  target_include_directories(${name} PRIVATE "${CUSHIM_CUDA_INCLUDE}" "${_ml_dir}"
    "${PROJECT_SOURCE_DIR}/tests/fake" "${PROJECT_SOURCE_DIR}/sdk/include")
  target_compile_options(${name} PRIVATE ${CUSHIM_WARN_FLAGS} -Wno-deprecated-declarations)
  target_link_libraries(${name} PRIVATE ${ARGN} cushim_region pthread)
endfunction()
ml_e2e_program(e2e_memlimit cushim_fake_cuda cushim_fake_cudart)

set(_ml $<TARGET_FILE:e2e_memlimit>)
set(_ml_plugin $<TARGET_FILE:memlimit>)
set(_ml_env "FAKE_CUDA_DEVICES=2" "CUSHIM_LOG=warn")
# 1 GiB quota on every device: every role's path charged by what the fake allocated, credited on release.
e2e_test(memlimit_table COMMAND ${_ml} table 1073741824
  ENV ${_ml_env} "CUSHIM_PLUGINS=${_ml_plugin}:limit=1GiB")
# Per-device list: device 1's quota only (device 0 unlimited would fail the table's total check, so the
# table runs on a list naming both).
e2e_test(memlimit_table_list COMMAND ${_ml} table 536870912
  ENV ${_ml_env} "CUSHIM_PLUGINS=${_ml_plugin}:limit=0:512MiB\\,1:512MiB")
# A call another plugin skipped with success (a Lua policy answering cuMemAlloc itself) is charged nothing.
if(TARGET lua)
  e2e_test(memlimit_skipped COMMAND ${_ml} skipped 1073741824 ENV ${_ml_env}
    "CUSHIM_PLUGINS=${_ml_plugin}:limit=1GiB\n$<TARGET_FILE:lua>:script=${CMAKE_CURRENT_SOURCE_DIR}/lua/memskip.lua")   # a newline separates specs (a semicolon would split the list)
endif()
e2e_test(memlimit_underflow COMMAND ${_ml} underflow 268435456
  ENV ${_ml_env} "CUSHIM_PLUGINS=${_ml_plugin}:limit=256MiB")
# 1 000 000 async alloc/free pairs over 4 threads (200 000 under a sanitizer: same paths, CI time).
if(CUSHIM_SANITIZE)
  set(_ml_churn 200000)
else()
  set(_ml_churn 1000000)
endif()
e2e_test(memlimit_churn COMMAND ${_ml} churn 268435456 ${_ml_churn} 4
  ENV ${_ml_env} "CUSHIM_PLUGINS=${_ml_plugin}:limit=256MiB")
set_property(TEST memlimit_churn APPEND PROPERTY LABELS concurrency)
# HAMi-core's variables alone: the shim loads memlimit by itself (runtime/loader.c).
e2e_test(memlimit_hami COMMAND ${_ml} hami 3221225472
  ENV ${_ml_env} "CUDA_DEVICE_MEMORY_LIMIT=3g" "CUDA_DEVICE_MEMORY_LIMIT_1=3G")
# 16 forked workers on one shared budget, 1000 SIGKILLs at random instants (under a sanitizer, whose
# fork copies a large shadow: 8 workers, 100 kills).
if(CUSHIM_SANITIZE)
  set(_ml_kill 8 100)
else()
  set(_ml_kill 16 1000)
endif()
e2e_test(memlimit_killloop COMMAND ${_ml} killloop "${E2E_OUT}/memlimit-killloop.region" 3145728 ${_ml_kill}
  ENV ${_ml_env} "CUSHIM_PLUGINS=${_ml_plugin}:limit=3MiB,budget=${E2E_OUT}/memlimit-killloop.region")
set_property(TEST memlimit_killloop APPEND PROPERTY LABELS concurrency)
# 'cushim usage' (table and Prometheus) on a shared budget with a live, then a killed, holder.
e2e_test(memlimit_usage COMMAND sh "${CMAKE_CURRENT_SOURCE_DIR}/run_memlimit_usage.sh" ${_ml} ${_ml_plugin}
  "${PROJECT_SOURCE_DIR}/tools/cushim" ENV "CUSHIM_LIB=$<TARGET_FILE:cushim>")
# HAMi's variable beside CUSHIM_PLUGINS naming memlimit (by path): loaded once, not twice (twice would
# charge every allocation twice and fail the table).
e2e_test(memlimit_table_hami_dup COMMAND ${_ml} table 1073741824
  ENV ${_ml_env} "CUDA_DEVICE_MEMORY_LIMIT=1g" "CUSHIM_PLUGINS=${_ml_plugin}:limit=1GiB")
# NVML's memory queries report the quota (nvidia-smi's memory.total) of the physical device NVML's index names:
# 1 GiB everywhere; then device 1 alone visible (CUDA ordinal 0) with the 3 GiB the list gives physical device 1,
# while NVML device 0 (not visible to the process) keeps the fake's 16 GiB.
if(TARGET cushim_fake_nvml)
  target_compile_definitions(e2e_memlimit PRIVATE E2E_MEMLIMIT_NVML)
  target_include_directories(e2e_memlimit PRIVATE ${CUSHIM_LIB_INCLUDES})
  add_dependencies(e2e_memlimit cushim_fake_nvml)
  e2e_test(memlimit_nvml COMMAND ${_ml} nvml 1073741824 1073741824 0
    ENV ${_ml_env} "CUSHIM_PLUGINS=${_ml_plugin}:limit=1GiB")
  e2e_test(memlimit_nvml_visible COMMAND ${_ml} nvml 17179869184 3221225472 1
    ENV ${_ml_env} "CUDA_VISIBLE_DEVICES=1" "CUSHIM_PLUGINS=${_ml_plugin}:limit=0:1GiB\\,1:3GiB")
endif()
# HAMi's variable in our syntax (3GiB: HAMi's own reader takes 3 bytes of it) gives the same quota.
e2e_test(memlimit_hami_oursyntax COMMAND ${_ml} hami 3221225472
  ENV ${_ml_env} "CUDA_DEVICE_MEMORY_LIMIT=3GiB")
# A quota variable that cannot be read fails closed with one line (it gave no quota and no message before).
foreach(_bad abc -1 99999999999999999999 3MB!)
  string(MAKE_C_IDENTIFIER "${_bad}" _badn)
  e2e_test(memlimit_hami_typo_${_badn} COMMAND ${_ml} closed
    ENV ${_ml_env} "CUDA_DEVICE_MEMORY_LIMIT_1=${_bad}")
  set_tests_properties(memlimit_hami_typo_${_badn} PROPERTIES
    PASS_REGULAR_EXPRESSION "CUDA_DEVICE_MEMORY_LIMIT_1='.*' is not a size.*closed: 0 failures")
endforeach()
# A plugin option or a file that merely ends in /memlimit names no plugin: memlimit still loads by itself
# (a trace file or a policy of that name turned the quota off before).
if(TARGET trace)
  e2e_test(memlimit_hami_named_file COMMAND ${_ml} hami 3221225472
    ENV ${_ml_env} "CUDA_DEVICE_MEMORY_LIMIT=3g" "CUSHIM_PLUGINS=$<TARGET_FILE:trace>:summary=off,file=${E2E_OUT}/memlimit")
endif()
# CUSHIM_HAMI=0: the variables alone load nothing (the quota check must then fail).
e2e_test(memlimit_hami_off COMMAND ${_ml} hami 3221225472
  ENV ${_ml_env} "CUDA_DEVICE_MEMORY_LIMIT=3g" "CUSHIM_HAMI=0" WILL_FAIL)
# The shared region's file truncated under the process (it faulted with SIGBUS): it lives on, its allocations
# charged to a budget of its own, with one line.
e2e_test(memlimit_region_shrink COMMAND ${_ml} shrink 67108864 "${E2E_OUT}/memlimit-shrink.region"
  ENV ${_ml_env} "CUSHIM_PLUGINS=${_ml_plugin}:limit=64MiB,budget=${E2E_OUT}/memlimit-shrink.region")
set_tests_properties(memlimit_region_shrink PROPERTIES
  PASS_REGULAR_EXPRESSION "was truncated under this process.*shrink: 0 failures")
# A region another user can write is never joined, root included; anyone reads one (run_region_owner.sh).
e2e_test(memlimit_region_owner COMMAND sh "${CMAKE_CURRENT_SOURCE_DIR}/run_region_owner.sh" ${_ml} ${_ml_plugin}
  $<TARGET_FILE:cushim-usage>)
set_tests_properties(memlimit_region_owner PROPERTIES SKIP_RETURN_CODE 77)
# One budget, a second process in its own PID namespace: neither reclaims the other's slot.
e2e_test(memlimit_pidns COMMAND sh "${CMAKE_CURRENT_SOURCE_DIR}/run_memlimit_pidns.sh" ${_ml} ${_ml_plugin}
  $<TARGET_FILE:cushim-usage>)
set_tests_properties(memlimit_pidns PROPERTIES SKIP_RETURN_CODE 77)
# What the quota adds to an allocation pair (run_memlimit_cost.sh): the driver calls per pair on the fake with
# one and two devices (none with one, one cuCtxGetDevice per allocation with two), and the GPU check's
# in-process comparison (bench/gpu/memlimit_bench.c, MEMLIMIT_BENCH_INPROC) against the fake.
add_executable(gpubench_memlimit_fake "${PROJECT_SOURCE_DIR}/bench/gpu/memlimit_bench.c")
target_include_directories(gpubench_memlimit_fake PRIVATE "${CUSHIM_CUDA_INCLUDE}")
target_compile_options(gpubench_memlimit_fake PRIVATE ${CUSHIM_WARN_FLAGS})
target_link_libraries(gpubench_memlimit_fake PRIVATE cushim_fake_cuda ${CMAKE_DL_LIBS})
# One device visible, no context current: the driver's own error, past the quota or not (the device taken as 0
# without asking must not turn it into an out-of-memory), nothing left charged.
e2e_test(memlimit_nocontext COMMAND ${_ml} nocontext 268435456
  ENV "FAKE_CUDA_DEVICES=1" "CUSHIM_LOG=warn" "CUSHIM_PLUGINS=${_ml_plugin}:limit=256MiB")
foreach(_c drivercalls inproc)
  e2e_test(memlimit_${_c} COMMAND sh "${CMAKE_CURRENT_SOURCE_DIR}/run_memlimit_cost.sh" ${_c}
    $<TARGET_FILE:gpubench_memlimit_fake> ${_ml_plugin})
endforeach()
# Per-device quotas and a shared budget under reordered CUDA_VISIBLE_DEVICES (1,0 / 2,0 / 0,2 / 2,1 on three
# devices): limits by physical device, by the option and by HAMi's variables, and each process reads the
# physical device's figures (run_memlimit_devmap.sh).
e2e_test(memlimit_devmap COMMAND sh "${CMAKE_CURRENT_SOURCE_DIR}/run_memlimit_devmap.sh" ${_ml} ${_ml_plugin})
# Live limits: 'cushim limit' lowers a running process's budget (refused past it, nothing freed), then drops it.
e2e_test(memlimit_live COMMAND sh "${CMAKE_CURRENT_SOURCE_DIR}/run_memlimit_live.sh" ${_ml} ${_ml_plugin}
  "${PROJECT_SOURCE_DIR}/tools/cushim" ENV "CUSHIM_LIB=$<TARGET_FILE:cushim>")
# Memory by library: a program allocating through two libraries of its own (driver and runtime) and directly;
# 'cushim usage --by-library' names each, a free credits the allocating library, the Prometheus text parses
# and sums to the per-process totals (prom_check.py).
foreach(_l a b)
  add_library(e2e_usage_${_l} SHARED e2e_usage_lib.c)
  target_include_directories(e2e_usage_${_l} PRIVATE "${CUSHIM_CUDA_INCLUDE}")
  target_compile_options(e2e_usage_${_l} PRIVATE ${CUSHIM_WARN_FLAGS} -Wno-deprecated-declarations)
  target_compile_definitions(e2e_usage_${_l} PRIVATE USAGE_LIB_FN=e2e_usage_${_l}_alloc)
  set_target_properties(e2e_usage_${_l} PROPERTIES C_VISIBILITY_PRESET hidden)
endforeach()
target_compile_definitions(e2e_usage_a PRIVATE USAGE_LIB_RUNTIME=0)
target_compile_definitions(e2e_usage_b PRIVATE USAGE_LIB_RUNTIME=1)
target_link_libraries(e2e_usage_a PRIVATE cushim_fake_cuda)
target_link_libraries(e2e_usage_b PRIVATE cushim_fake_cudart)
add_executable(e2e_usage_libs e2e_usage_libs.c)
target_include_directories(e2e_usage_libs PRIVATE "${CUSHIM_CUDA_INCLUDE}")
target_compile_options(e2e_usage_libs PRIVATE ${CUSHIM_WARN_FLAGS} -Wno-deprecated-declarations)
target_link_libraries(e2e_usage_libs PRIVATE e2e_usage_a e2e_usage_b cushim_fake_cuda)
e2e_test(memlimit_bylib COMMAND sh "${CMAKE_CURRENT_SOURCE_DIR}/run_memlimit_bylib.sh" $<TARGET_FILE:e2e_usage_libs>
  ${_ml_plugin} "${PROJECT_SOURCE_DIR}/tools/cushim" "${CMAKE_CURRENT_SOURCE_DIR}/prom_check.py" $<TARGET_FILE:smlimit>
  ENV "CUSHIM_LIB=$<TARGET_FILE:cushim>")

# Oversubscription and the wait policy (e2e_oversub.c, docs/plugins/memlimit.md "Oversubscription").
ml_e2e_program(e2e_oversub cushim_fake_cuda cushim_fake_cudart)
set(_ov $<TARGET_FILE:e2e_oversub>)
# Past the 8 MiB quota: host-backed up to 16 MiB (ratio 2); frees credit the right pool; other kinds refused.
e2e_test(memlimit_oversub COMMAND ${_ov} quota "${E2E_OUT}/memlimit-oversub.region"
  ENV ${_ml_env} "CUSHIM_PLUGINS=${_ml_plugin}:limit=8MiB,oversubscribe=2,budget=${E2E_OUT}/memlimit-oversub.region")
# The device (64 MiB) full before the quota: HAMi's CUDA_OVERSUBSCRIBE=true by preload alone (the total bounded
# by HAMi's limit, 96 MiB); oversubscribe=1.5 with no quota (bounded by the device's memory x 1.5, 96 MiB); HAMi's
# limit without CUDA_OVERSUBSCRIBE refused as before.
e2e_test(memlimit_oversub_hami COMMAND ${_ov} devfull "${E2E_OUT}/memlimit-oversub-hami.region" 100663296 100663296
  ENV ${_ml_env} "FAKE_CUDA_MEM=67108864" "CUDA_DEVICE_MEMORY_LIMIT=96m" "CUDA_OVERSUBSCRIBE=true"
  "CUDA_DEVICE_MEMORY_SHARED_CACHE=${E2E_OUT}/memlimit-oversub-hami.region")
e2e_test(memlimit_oversub_devfull COMMAND ${_ov} devfull "${E2E_OUT}/memlimit-oversub-dev.region" 67108864 100663296
  ENV ${_ml_env} "FAKE_CUDA_MEM=67108864"
  "CUSHIM_PLUGINS=${_ml_plugin}:oversubscribe=1.5,budget=${E2E_OUT}/memlimit-oversub-dev.region")
e2e_test(memlimit_oversub_hami_off COMMAND ${_ov} devfull "${E2E_OUT}/memlimit-oversub-off.region" 100663296 0 off
  ENV ${_ml_env} "FAKE_CUDA_MEM=67108864" "CUDA_DEVICE_MEMORY_LIMIT=96m" "CUDA_OVERSUBSCRIBE=false"
  "CUDA_DEVICE_MEMORY_SHARED_CACHE=${E2E_OUT}/memlimit-oversub-off.region")
# Under CUDA_VISIBLE_DEVICES=1,0 the host-backed memory is advised to the process's ordinal (the driver's
# numbering) and charged to the physical device's pool (the budget's).
e2e_test(memlimit_oversub_devmap COMMAND ${_ov} devmap "${E2E_OUT}/memlimit-oversub-devmap.region"
  ENV ${_ml_env} "CUDA_VISIBLE_DEVICES=1,0"
  "CUSHIM_PLUGINS=${_ml_plugin}:limit=1:8MiB,oversubscribe=2,budget=${E2E_OUT}/memlimit-oversub-devmap.region")
# cushim usage: the host-backed bytes per process, table and Prometheus.
e2e_test(memlimit_oversub_usage COMMAND ${_ov} usage "${E2E_OUT}/memlimit-oversub-usage.region"
  $<TARGET_FILE:cushim-usage>
  ENV ${_ml_env} "CUSHIM_PLUGINS=${_ml_plugin}:limit=8MiB,oversubscribe=2,budget=${E2E_OUT}/memlimit-oversub-usage.region")
# Oversubscription of VMM physical memory (e2e_oversub_vmm.c): past the quota, cuMemCreate at a host location where
# the device supports one (FAKE_CUDA_HOST_VMM), the program's map/access/unmap/release unchanged, charged to and
# credited from the host-backed pool; refused where the device supports none, without oversubscribe, or when the
# size is not a multiple of the host granularity; the driver's own refusal (a full device) host-backed too.
ml_e2e_program(e2e_oversub_vmm cushim_fake_cuda)
# memlimit_oversub_vmm<SUFFIX>: e2e_oversub_vmm MODE on a budget of its own, memlimit's OPTS; ARGN: the fake's settings.
function(ml_ovv_test suffix mode opts)
  set(region "${E2E_OUT}/memlimit-ovvmm${suffix}.region")
  e2e_test(memlimit_oversub_vmm${suffix} COMMAND $<TARGET_FILE:e2e_oversub_vmm> ${mode} "${region}"
    ENV ${_ml_env} ${ARGN} "CUSHIM_PLUGINS=${_ml_plugin}:${opts},budget=${region}")
endfunction()
set(_ovv_opts "limit=8MiB,oversubscribe=2")
ml_ovv_test("" numa ${_ovv_opts} "FAKE_CUDA_HOST_VMM=1")
ml_ovv_test(_host host ${_ovv_opts} "FAKE_CUDA_HOST_VMM=host")
ml_ovv_test(_noattr refused ${_ovv_opts} "FAKE_CUDA_HOST_VMM=0")
ml_ovv_test(_off refused limit=8MiB "FAKE_CUDA_HOST_VMM=1")
ml_ovv_test(_gran gran ${_ovv_opts} "FAKE_CUDA_HOST_VMM=1" "FAKE_CUDA_HOST_VMM_GRANULARITY=4194304")
ml_ovv_test(_devfull devfull oversubscribe=1.5 "FAKE_CUDA_HOST_VMM=1" "FAKE_CUDA_MEM=16777216")
# on_full=wait: another process holds 6 of the budget's 8 MiB; 4 MiB more waits until it frees (after 300 ms,
# within the 5 s wait), or gives up at a 300 ms deadline while it holds for 1.5 s.
e2e_test(memlimit_wait COMMAND ${_ov} wait "${E2E_OUT}/memlimit-wait.region" ${_ov} 4194304 5000 300 ok
  ENV ${_ml_env} "CUSHIM_PLUGINS=${_ml_plugin}:limit=8MiB,on_full=wait:5,budget=${E2E_OUT}/memlimit-wait.region")
e2e_test(memlimit_wait_timeout COMMAND ${_ov} wait "${E2E_OUT}/memlimit-wait-to.region" ${_ov} 4194304 300 1500 oom
  ENV ${_ml_env} "CUSHIM_PLUGINS=${_ml_plugin}:limit=8MiB,on_full=wait:0.3,budget=${E2E_OUT}/memlimit-wait-to.region")
