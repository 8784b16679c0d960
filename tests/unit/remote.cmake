# The remoting's codec (remote/, docs/remote.md): every API the plans carry, round-tripped against the generated
# metadata of the built tree.
add_executable(rm_codec_test rm_codec_test.c "${PROJECT_SOURCE_DIR}/remote/rm_meta_gen.c"
               "${CUSHIM_GENERATED_DIR}/cushim_meta.c")
target_include_directories(rm_codec_test PRIVATE "${CUSHIM_GENERATED_DIR}" "${PROJECT_SOURCE_DIR}/sdk/include/cushim"
                           "${CUSHIM_CUDA_INCLUDE}" ${CUSHIM_LIB_INCLUDES})
target_link_libraries(rm_codec_test PRIVATE cushim_remote PkgConfig::CMOCKA)
target_compile_options(rm_codec_test PRIVATE ${CUSHIM_WARN_FLAGS} -Wno-deprecated-declarations)
add_test(NAME rm_codec COMMAND rm_codec_test)
set_tests_properties(rm_codec PROPERTIES LABELS "unit;remote")

# The remote client's cache of immutable answers (plugins/remote/rp_cache.c) over the codec and the plans.
add_executable(rp_cache_test rp_cache_test.c "${PROJECT_SOURCE_DIR}/plugins/remote/rp_cache.c"
               "${PROJECT_SOURCE_DIR}/remote/rm_meta_gen.c" "${CUSHIM_GENERATED_DIR}/cushim_meta.c")
target_include_directories(rp_cache_test PRIVATE "${CUSHIM_GENERATED_DIR}" "${PROJECT_SOURCE_DIR}/sdk/include/cushim"
                           "${PROJECT_SOURCE_DIR}/plugins/remote" "${CUSHIM_CUDA_INCLUDE}" ${CUSHIM_LIB_INCLUDES})
target_link_libraries(rp_cache_test PRIVATE cushim_remote PkgConfig::CMOCKA Threads::Threads)
target_compile_options(rp_cache_test PRIVATE ${CUSHIM_WARN_FLAGS} -Wno-deprecated-declarations)
add_test(NAME rp_cache COMMAND rp_cache_test)
set_tests_properties(rp_cache PROPERTIES LABELS "unit;remote")

# The shared area of a client and its back end on one host (remote/rm_shm.c): sealed, passed, mapped, bounds.
add_executable(rm_shm_test rm_shm_test.c "${PROJECT_SOURCE_DIR}/remote/rm_meta_gen.c" "${CUSHIM_GENERATED_DIR}/cushim_meta.c")
target_include_directories(rm_shm_test PRIVATE "${CUSHIM_GENERATED_DIR}" "${PROJECT_SOURCE_DIR}/sdk/include/cushim"
                           "${CUSHIM_CUDA_INCLUDE}" ${CUSHIM_LIB_INCLUDES})
target_link_libraries(rm_shm_test PRIVATE cushim_remote PkgConfig::CMOCKA)
target_compile_options(rm_shm_test PRIVATE ${CUSHIM_WARN_FLAGS})
add_test(NAME rm_shm COMMAND rm_shm_test)
set_tests_properties(rm_shm PROPERTIES LABELS "unit;remote")

# Addresses and the token check (remote/rm_sock.c, remote/rm_auth.c; docs/remote-deploy.md).
add_executable(rm_auth_test rm_auth_test.c)
target_link_libraries(rm_auth_test PRIVATE cushim_remote PkgConfig::CMOCKA)
target_compile_options(rm_auth_test PRIVATE ${CUSHIM_WARN_FLAGS})
add_test(NAME rm_auth COMMAND rm_auth_test)
set_tests_properties(rm_auth PROPERTIES LABELS "unit;remote")

# The table of CUDA IPC handles the back ends of one server share (remote/rm_ipc.c; docs/remote.md, "IPC").
add_executable(rm_ipc_test rm_ipc_test.c "${PROJECT_SOURCE_DIR}/remote/rm_ipc.c")
target_include_directories(rm_ipc_test PRIVATE "${PROJECT_SOURCE_DIR}/remote")
target_link_libraries(rm_ipc_test PRIVATE PkgConfig::CMOCKA Threads::Threads)
target_compile_options(rm_ipc_test PRIVATE ${CUSHIM_WARN_FLAGS})
add_test(NAME rm_ipc COMMAND rm_ipc_test)
set_tests_properties(rm_ipc PROPERTIES LABELS "unit;remote" TIMEOUT 30)

# The back end's worker per client thread (remote/rm_workers.c): one thread each, the least recently used one
# evicted past RM_MAX_WORKERS.
add_executable(rm_workers_test rm_workers_test.c "${PROJECT_SOURCE_DIR}/remote/rm_workers.c")
target_include_directories(rm_workers_test PRIVATE "${PROJECT_SOURCE_DIR}/remote")
target_link_libraries(rm_workers_test PRIVATE cushim_remote PkgConfig::CMOCKA Threads::Threads)   # rm_bell_relax
target_compile_options(rm_workers_test PRIVATE ${CUSHIM_WARN_FLAGS})
add_test(NAME rm_workers COMMAND rm_workers_test)
set_tests_properties(rm_workers PROPERTIES LABELS "unit;remote;concurrency")

# The remote client's rule for host functions (plugins/remote/rp_hostfn.c): capture refused, the stream
# synchronised, then the function; with stand-ins for the server's calls.
add_executable(rp_hostfn_test rp_hostfn_test.c "${PROJECT_SOURCE_DIR}/plugins/remote/rp_hostfn.c"
  "${PROJECT_SOURCE_DIR}/remote/rm_names.c")
target_include_directories(rp_hostfn_test PRIVATE "${PROJECT_SOURCE_DIR}/sdk/include/cushim"
                           "${PROJECT_SOURCE_DIR}/sdk/include" "${PROJECT_SOURCE_DIR}/plugins/remote"
                           "${PROJECT_SOURCE_DIR}/remote")
target_link_libraries(rp_hostfn_test PRIVATE PkgConfig::CMOCKA)
target_compile_options(rp_hostfn_test PRIVATE ${CUSHIM_WARN_FLAGS})
add_test(NAME rp_hostfn COMMAND rp_hostfn_test)
set_tests_properties(rp_hostfn PROPERTIES LABELS "unit;remote")

# the connection's receive buffer and TCP options (remote/rm_sock.c)
add_executable(rm_sock_test rm_sock_test.c)
target_link_libraries(rm_sock_test PRIVATE cushim_remote PkgConfig::CMOCKA Threads::Threads)
target_compile_options(rm_sock_test PRIVATE ${CUSHIM_WARN_FLAGS})
add_test(NAME rm_sock COMMAND rm_sock_test)

# cuBLAS and cuBLASLt objects by number (remote/rm_num.c): the plans' marks from the metadata, numbering, refusals.
add_executable(rm_num_test rm_num_test.c "${PROJECT_SOURCE_DIR}/remote/rm_meta_gen.c" "${CUSHIM_GENERATED_DIR}/cushim_meta.c")
target_include_directories(rm_num_test PRIVATE "${CUSHIM_GENERATED_DIR}" "${PROJECT_SOURCE_DIR}/sdk/include/cushim"
                           "${CUSHIM_CUDA_INCLUDE}" ${CUSHIM_LIB_INCLUDES})
target_link_libraries(rm_num_test PRIVATE cushim_remote PkgConfig::CMOCKA)
target_compile_options(rm_num_test PRIVATE ${CUSHIM_WARN_FLAGS})
add_test(NAME rm_num COMMAND rm_num_test)
set_tests_properties(rm_num PROPERTIES LABELS "unit;remote")
