# The GPU benchmarks' plumbing against the fake libraries (bench/gpu/dryrun.sh): the checks 'tracebench' and
# 'universal bench' and bench/gpu/run.sh with stand-ins for the GPU programs; every configuration runs, the trace
# plugin's cost line is parsed, each result is PASS with its figures and verdicts. Included at the end of
# tests/e2e/CMakeLists.txt. Not under ASan (stand-in shell scripts, python3 and gcc run under the shim).
if(NOT TARGET trace OR NOT TARGET cushim_fake_nvml OR NOT TARGET cushim_fake_cublas)
  return()
endif()
e2e_test(gpubench_dryrun COMMAND bash "${PROJECT_SOURCE_DIR}/bench/gpu/dryrun.sh" "${PROJECT_BINARY_DIR}" NO_PRELOAD)
set_tests_properties(gpubench_dryrun PROPERTIES LABELS "e2e;no_asan")
