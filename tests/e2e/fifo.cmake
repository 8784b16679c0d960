# Nothing blocks on a file (run_fifo.sh, issue 42): a FIFO named where the shim, a plugin or a tool expects a file
# is refused with one line, at once. Included at the end of tests/e2e/CMakeLists.txt (its e2e_test() and E2E_*
# settings); a plugin that is not built skips its cases (77). Every case takes well under a second.
macro(_fifo_file _v _t)
  set(${_v} "$<$<TARGET_EXISTS:${_t}>:$<TARGET_FILE:${_t}>>")
endmacro()
_fifo_file(_fifo_lua lua)
_fifo_file(_fifo_trace trace)
foreach(_c plugin info lualib report summary cupti logfile counts realdrv stats)
  e2e_test(fifo_${_c} COMMAND sh "${CMAKE_CURRENT_SOURCE_DIR}/run_fifo.sh" ${_c} "$<TARGET_FILE:vecadd>"
    "${E2E_DROPIN_DIR}" "${_fifo_lua}" "${_fifo_trace}" "$<TARGET_FILE:cushim-info>" "$<TARGET_FILE:cushim-stats>"
    "${PROJECT_SOURCE_DIR}/tools/cushim" "${PROJECT_SOURCE_DIR}/plugins/lua/examples")
  set_tests_properties(fifo_${_c} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 60)
endforeach()
