# The lua plugin end to end (run_lua.sh): policies loaded through CUSHIM_PLUGINS by the preloaded shim,
# against the fake driver and runtime; every example of plugins/lua/examples and every safety case.
# Included at the end of tests/e2e/CMakeLists.txt (its e2e_test() and E2E_* settings).
if(NOT TARGET lua)
  return()
endif()

function(e2e_lua_program name)
  add_executable(${name} e2e_lua.c)
  target_include_directories(${name} PRIVATE "${CUSHIM_CUDA_INCLUDE}")
  target_compile_options(${name} PRIVATE ${CUSHIM_WARN_FLAGS} -Wno-deprecated-declarations)
  target_link_libraries(${name} PRIVATE cushim_fake_cuda cushim_fake_cudart pthread)
endfunction()
e2e_lua_program(e2e_lua)
# LuaJIT-like unversioned lua_* symbols in the program's global scope, each ending the process if called.
add_library(e2e_fakelua SHARED e2e_fakelua.c)
target_compile_options(e2e_fakelua PRIVATE ${CUSHIM_WARN_FLAGS})
e2e_lua_program(e2e_lua_fakejit)
target_link_libraries(e2e_lua_fakejit PRIVATE -Wl,--no-as-needed e2e_fakelua -Wl,--as-needed)
# Programs that embed their own Lua, linked the ordinary way.
find_library(_lua54 NAMES lua5.4)
find_library(_lua53 NAMES lua5.3)
if(_lua54)
  e2e_lua_program(e2e_lua_embed54)
  target_compile_definitions(e2e_lua_embed54 PRIVATE E2E_EMBED_LUA)
  target_include_directories(e2e_lua_embed54 PRIVATE /usr/include/lua5.4)
  target_link_libraries(e2e_lua_embed54 PRIVATE ${_lua54})
endif()
if(_lua53 AND EXISTS /usr/include/lua5.3/lua.h)
  e2e_lua_program(e2e_lua_embed53)
  target_compile_definitions(e2e_lua_embed53 PRIVATE E2E_EMBED_LUA)
  target_include_directories(e2e_lua_embed53 PRIVATE /usr/include/lua5.3)
  target_link_libraries(e2e_lua_embed53 PRIVATE ${_lua53})
endif()

set(_lr sh "${CMAKE_CURRENT_SOURCE_DIR}/run_lua.sh")
set(_la "$<TARGET_FILE:lua>" "$<TARGET_FILE:e2e_lua>" "${PROJECT_SOURCE_DIR}/plugins/lua/examples"
    "${CMAKE_CURRENT_SOURCE_DIR}/lua")
foreach(_c quota deny slow faults launches rewrite api params types sandbox syntax runtime budget memory escape bridge shared
           closefds threads
           exports)
  e2e_test(lua_${_c} COMMAND ${_lr} ${_c} ${_la})
endforeach()
set_property(TEST lua_threads APPEND PROPERTY LABELS concurrency)
# 1 000 reloads while 4 threads call (200 under the sanitizers, which run it ~10x slower).
if(CUSHIM_SANITIZE)
  set(_rounds 200 norss)
else()
  set(_rounds 1000 rss)
endif()
e2e_test(lua_reload COMMAND ${_lr} reload ${_la} ${_rounds})
set_property(TEST lua_reload APPEND PROPERTY LABELS concurrency)
set(_lx "${PROJECT_SOURCE_DIR}/plugins/lua/examples" "${CMAKE_CURRENT_SOURCE_DIR}/lua")
e2e_test(lua_fakejit COMMAND ${_lr} fakejit "$<TARGET_FILE:lua>" "$<TARGET_FILE:e2e_lua_fakejit>" ${_lx})
find_file(_lua54_so liblua5.4.so.0 PATHS /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib NO_DEFAULT_PATH)
if(_lua54_so)
  e2e_test(lua_lualib COMMAND ${_lr} lualib ${_la} "${_lua54_so}")
endif()
if(TARGET e2e_lua_embed54)
  e2e_test(lua_embed54 COMMAND ${_lr} embed "$<TARGET_FILE:lua>" "$<TARGET_FILE:e2e_lua_embed54>" ${_lx}
    "Lua 5.4")
endif()
if(TARGET e2e_lua_embed53)
  e2e_test(lua_embed53 COMMAND ${_lr} embed "$<TARGET_FILE:lua>" "$<TARGET_FILE:e2e_lua_embed53>" ${_lx}
    "Lua 5.3")
endif()
# The launcher preloads the shim itself (without a sanitizer runtime first, which ASan refuses).
e2e_test(lua_launcher COMMAND ${_lr} launcher ${_la} "${PROJECT_SOURCE_DIR}/tools/cushim" NO_PRELOAD
  ENV "CUSHIM_LIB=$<TARGET_FILE:cushim>")
set_tests_properties(lua_launcher PROPERTIES SKIP_RETURN_CODE 77 LABELS "e2e;no_asan")
