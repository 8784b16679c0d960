# The shim's and the plugins' own writes never end the program (run_nokill.sh: SIGXFSZ past the file size limit,
# SIGPIPE on a pipe with no reader; sdk/include/cushim/cushim_io.h). Included at the end of
# tests/e2e/CMakeLists.txt; a plugin that is not built leaves its part out.
macro(_nk_file _v _t)
  set(${_v} "$<$<TARGET_EXISTS:${_t}>:$<TARGET_FILE:${_t}>>")
endmacro()
_nk_file(_nk_prog e2e_trace)
_nk_file(_nk_trace trace)
_nk_file(_nk_lua lua)
_nk_file(_nk_ml memlimit)
_nk_file(_nk_sml smlimit)
foreach(_c fsize epipe)
  e2e_test(e2e_nokill_${_c} COMMAND bash "${CMAKE_CURRENT_SOURCE_DIR}/run_nokill.sh" ${_c} "$<TARGET_FILE:vecadd>"
    "${_nk_prog}" "${_nk_trace}" "${_nk_lua}" "${PROJECT_SOURCE_DIR}/plugins/lua/examples" "${_nk_ml}" "${_nk_sml}")
endforeach()
