# The shim's and the plugins' own writes never end the program (run_nokill.sh: SIGXFSZ past the file size limit,
# SIGPIPE on a pipe with no reader; sdk/include/cushim/cushim_io.h), nor do its reads of the program's pointers
# (NULL or pointing nowhere, where the driver answers an error). Included at the end of
# tests/e2e/CMakeLists.txt; a plugin that is not built leaves its part out.
macro(_nk_file _v _t)
  set(${_v} "$<$<TARGET_EXISTS:${_t}>:$<TARGET_FILE:${_t}>>")
endmacro()
_nk_file(_nk_prog e2e_trace)
_nk_file(_nk_trace trace)
_nk_file(_nk_lua lua)
_nk_file(_nk_ml memlimit)
_nk_file(_nk_sml smlimit)
# badptrs-seccomp: badptrs with every program under a seccomp filter that kills on process_vm_readv
# (e2e_seccomp_run; skipped, 77, where no filter can be installed)
e2e_program(e2e_seccomp_run e2e_seccomp_run.c)
foreach(_c fsize epipe nulls badptrs badptrs-seccomp fd2)
  e2e_test(e2e_nokill_${_c} COMMAND bash "${CMAKE_CURRENT_SOURCE_DIR}/run_nokill.sh" ${_c} "$<TARGET_FILE:vecadd>"
    "${_nk_prog}" "${_nk_trace}" "${_nk_lua}" "${PROJECT_SOURCE_DIR}/plugins/lua/examples" "${_nk_ml}" "${_nk_sml}"
    ENV "NOKILL_SECCOMP_RUN=$<TARGET_FILE:e2e_seccomp_run>")
  set_tests_properties(e2e_nokill_${_c} PROPERTIES SKIP_RETURN_CODE 77)
endforeach()

# sigmask: the threads of the shim and the plugins block the program's signals (e2e_sigmask)
e2e_program(e2e_sigmask e2e_sigmask.c)
target_include_directories(e2e_sigmask PRIVATE "${CUSHIM_CUDA_INCLUDE}")
target_link_libraries(e2e_sigmask PRIVATE cushim_fake_cuda)
e2e_test(e2e_nokill_sigmask COMMAND bash "${CMAKE_CURRENT_SOURCE_DIR}/run_nokill.sh" sigmask "$<TARGET_FILE:vecadd>"
  "$<TARGET_FILE:e2e_sigmask>" "${_nk_trace}" "${_nk_lua}" "${PROJECT_SOURCE_DIR}/plugins/lua/examples" "${_nk_ml}"
  "${_nk_sml}")

# nvmlbad: NVML calls refused before their outputs are written, the outputs into unreadable memory
# (e2e_nvml_badptrs, linked with the fake NVML)
if(TARGET cushim_fake_nvml)
  e2e_program(e2e_nvml_badptrs e2e_nvml_badptrs.c)
  target_include_directories(e2e_nvml_badptrs PRIVATE ${CUSHIM_LIB_INCLUDES})
  target_link_libraries(e2e_nvml_badptrs PRIVATE cushim_fake_nvml)
  e2e_test(e2e_nokill_nvmlbad COMMAND bash "${CMAKE_CURRENT_SOURCE_DIR}/run_nokill.sh" nvmlbad "$<TARGET_FILE:vecadd>"
    "$<TARGET_FILE:e2e_nvml_badptrs>" "${_nk_trace}" "${_nk_lua}" "${PROJECT_SOURCE_DIR}/plugins/lua/examples" "${_nk_ml}"
    "${_nk_sml}" ENV "NOKILL_FAULTINJECT=$<$<TARGET_EXISTS:faultinject>:$<TARGET_FILE:faultinject>>")
endif()

# A program whose locale says ',' is the decimal point (run_locale.sh: the trace's float outputs and table, the
# quota plugins' and the lua plugin's numbers read after the program's setlocale, in drop-in mode).
e2e_program(e2e_locale e2e_locale.c)
target_include_directories(e2e_locale PRIVATE "${CUSHIM_CUDA_INCLUDE}")
target_link_libraries(e2e_locale PRIVATE ${CMAKE_DL_LIBS})
add_dependencies(e2e_locale cushim_dropin)
_nk_file(_nk_stats cushim-stats)
e2e_test(e2e_locale COMMAND bash "${CMAKE_CURRENT_SOURCE_DIR}/run_locale.sh" "${_nk_prog}" "$<TARGET_FILE:e2e_locale>"
  "${_nk_stats}" "${E2E_DROPIN_DIR}" "${_nk_trace}" "${_nk_ml}" "${_nk_sml}" "${_nk_lua}")
set_tests_properties(e2e_locale PROPERTIES SKIP_RETURN_CODE 77)
