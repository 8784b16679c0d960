# API forwarding end to end (docs/remote.md): cushim-serve on the fake driver, clients with the drop-in and the
# remote plugin and no driver on their path (run_remote.sh).
add_executable(e2e_remote_loss e2e_remote_loss.c)
target_include_directories(e2e_remote_loss PRIVATE "${CUSHIM_CUDA_INCLUDE}")
target_compile_options(e2e_remote_loss PRIVATE ${CUSHIM_WARN_FLAGS})
target_link_libraries(e2e_remote_loss PRIVATE cushim_fake_cuda)
add_executable(e2e_remote_fast e2e_remote_fast.c)
target_include_directories(e2e_remote_fast PRIVATE "${CUSHIM_CUDA_INCLUDE}")
target_compile_options(e2e_remote_fast PRIVATE ${CUSHIM_WARN_FLAGS})
target_link_libraries(e2e_remote_fast PRIVATE cushim_fake_cuda pthread)
add_test(NAME e2e_remote COMMAND bash "${CMAKE_CURRENT_SOURCE_DIR}/run_remote.sh" "${CMAKE_BINARY_DIR}"
         "$<TARGET_FILE:vecadd>" "$<TARGET_FILE:e2e_remote_loss>" "${CMAKE_CURRENT_BINARY_DIR}"
         "$<TARGET_FILE:e2e_remote_fast>")
set_tests_properties(e2e_remote PROPERTIES LABELS "e2e;remote;no_asan" TIMEOUT 120)

# Deployment (docs/remote-deploy.md): cushim serve --fake and cushim run --remote= over a unix socket and over TCP
# with a token; refused tokens; a server-side memory quota per client; --gpus; cushim apis --remote
# (run_remote_deploy.sh). The clients have no libcuda on their path.
add_executable(e2e_remote_quota e2e_remote_quota.c)
target_include_directories(e2e_remote_quota PRIVATE "${CUSHIM_CUDA_INCLUDE}")
target_compile_options(e2e_remote_quota PRIVATE ${CUSHIM_WARN_FLAGS})
target_link_libraries(e2e_remote_quota PRIVATE cushim_fake_cuda)
add_test(NAME e2e_remote_deploy COMMAND bash "${CMAKE_CURRENT_SOURCE_DIR}/run_remote_deploy.sh" "${CMAKE_BINARY_DIR}"
         "$<TARGET_FILE:vecadd>" "$<TARGET_FILE:e2e_remote_quota>" "$<TARGET_FILE:e2e_remote_loss>"
         "${CMAKE_CURRENT_BINARY_DIR}")
set_tests_properties(e2e_remote_deploy PROPERTIES LABELS "e2e;remote;no_asan" TIMEOUT 120)

# Runtime-API programs (docs/remote.md, "Runtime-API programs"): e2e_remote_rt registers its fat binary and
# launches as nvcc's code does, linked only against the runtime (the fake libcudart.so.13); run_remote_rt.sh
# compares its output through cushim-serve with a local run's.
add_executable(e2e_remote_rt e2e_remote_rt.c)
target_include_directories(e2e_remote_rt PRIVATE "${CUSHIM_CUDA_INCLUDE}")
target_compile_options(e2e_remote_rt PRIVATE ${CUSHIM_WARN_FLAGS} -Wno-deprecated-declarations)
target_link_libraries(e2e_remote_rt PRIVATE cushim_fake_cudart ${CMAKE_DL_LIBS} pthread)
if(TARGET cushim_fake_nvml)   # NVML over remoting: the queries nvidia-smi makes
  add_executable(e2e_remote_nvml e2e_remote_nvml.c)
  target_include_directories(e2e_remote_nvml PRIVATE ${CUSHIM_LIB_INCLUDES})
  target_compile_options(e2e_remote_nvml PRIVATE ${CUSHIM_WARN_FLAGS})
  target_link_libraries(e2e_remote_nvml PRIVATE cushim_fake_nvml)
  set(_rm_nvml $<TARGET_FILE:e2e_remote_nvml>)
else()
  set(_rm_nvml "")
endif()
add_test(NAME e2e_remote_rt COMMAND bash "${CMAKE_CURRENT_SOURCE_DIR}/run_remote_rt.sh" "${CMAKE_BINARY_DIR}"
         "$<TARGET_FILE:e2e_remote_rt>" "${CMAKE_CURRENT_BINARY_DIR}" ${_rm_nvml})
set_tests_properties(e2e_remote_rt PROPERTIES LABELS "e2e;remote;no_asan" TIMEOUT 120)

# Host functions (docs/remote.md, "Host functions"): cuLaunchHostFunc, cuStreamAddCallback and the runtime's
# forms run in the client after their stream drained on the server; the order and the data they see equal a local
# run's (run_remote_hostfn.sh).
add_executable(e2e_remote_hostfn e2e_remote_hostfn.c)
target_include_directories(e2e_remote_hostfn PRIVATE "${CUSHIM_CUDA_INCLUDE}")
target_compile_options(e2e_remote_hostfn PRIVATE ${CUSHIM_WARN_FLAGS})
target_link_libraries(e2e_remote_hostfn PRIVATE cushim_fake_cuda pthread)
add_test(NAME e2e_remote_hostfn COMMAND bash "${CMAKE_CURRENT_SOURCE_DIR}/run_remote_hostfn.sh" "${CMAKE_BINARY_DIR}"
         "$<TARGET_FILE:e2e_remote_hostfn>" "$<TARGET_FILE:e2e_remote_rt>" "${CMAKE_CURRENT_BINARY_DIR}")
set_tests_properties(e2e_remote_hostfn PROPERTIES LABELS "e2e;remote;no_asan" TIMEOUT 60)

# delay_us, a simulated network distance (docs/plugins/remote.md): round trips delayed by at least it, once each;
# batched calls not one by one (run_remote_delay.sh).
add_executable(e2e_remote_delay e2e_remote_delay.c)
target_include_directories(e2e_remote_delay PRIVATE "${CUSHIM_CUDA_INCLUDE}")
target_compile_options(e2e_remote_delay PRIVATE ${CUSHIM_WARN_FLAGS})
target_link_libraries(e2e_remote_delay PRIVATE cushim_fake_cuda)
add_test(NAME e2e_remote_delay COMMAND bash "${CMAKE_CURRENT_SOURCE_DIR}/run_remote_delay.sh" "${CMAKE_BINARY_DIR}"
         "$<TARGET_FILE:e2e_remote_delay>" "${CMAKE_CURRENT_BINARY_DIR}")
set_tests_properties(e2e_remote_delay PROPERTIES LABELS "e2e;remote;no_asan" TIMEOUT 120)

# Stream capture and graphs (docs/remote.md, "Graphs"): captured launches and copies, graphs launched N times,
# kernel nodes with arguments, an error inside a capture at its own call, pinned memory in a graph, and what is
# refused (run_remote_graph.sh).
add_executable(e2e_remote_graph e2e_remote_graph.c)
target_include_directories(e2e_remote_graph PRIVATE "${CUSHIM_CUDA_INCLUDE}")
target_compile_options(e2e_remote_graph PRIVATE ${CUSHIM_WARN_FLAGS})
target_link_libraries(e2e_remote_graph PRIVATE cushim_fake_cuda)
add_executable(e2e_remote_graph_rt e2e_remote_graph_rt.c)
target_include_directories(e2e_remote_graph_rt PRIVATE "${CUSHIM_CUDA_INCLUDE}")
target_compile_options(e2e_remote_graph_rt PRIVATE ${CUSHIM_WARN_FLAGS})
target_link_libraries(e2e_remote_graph_rt PRIVATE cushim_fake_cudart)
add_test(NAME e2e_remote_graph COMMAND bash "${CMAKE_CURRENT_SOURCE_DIR}/run_remote_graph.sh" "${CMAKE_BINARY_DIR}"
         "$<TARGET_FILE:e2e_remote_graph>" "${CMAKE_CURRENT_BINARY_DIR}"
         "$<TARGET_FILE:e2e_remote_graph_rt>")
set_tests_properties(e2e_remote_graph PROPERTIES LABELS "e2e;remote;no_asan" TIMEOUT 60)
# cuBLAS and cuBLASLt (docs/remote.md, "cuBLAS and cuBLASLt"): the calls PyTorch makes, linked against the fake
# runtime, cuBLAS and cuBLASLt; run_remote_cublas.sh compares a run through cushim-serve with a local one's.
if(TARGET cushim_fake_cublas)
  add_executable(e2e_remote_cublas e2e_remote_cublas.c)
  target_include_directories(e2e_remote_cublas PRIVATE ${CUSHIM_LIB_INCLUDES} "${CUSHIM_CUDA_INCLUDE}")
  target_compile_options(e2e_remote_cublas PRIVATE ${CUSHIM_WARN_FLAGS})
  target_link_libraries(e2e_remote_cublas PRIVATE cushim_fake_cudart cushim_fake_cublas cushim_fake_cublaslt
                        ${CMAKE_DL_LIBS})
  # a hostile client speaking the wire itself: pointer-mode lies refused by the back end (rb_cublas.c)
  add_executable(e2e_remote_liar e2e_remote_liar.c "${PROJECT_SOURCE_DIR}/remote/rm_meta_gen.c"
                 "${CUSHIM_GENERATED_DIR}/cushim_meta.c")
  target_include_directories(e2e_remote_liar PRIVATE "${CUSHIM_GENERATED_DIR}" "${PROJECT_SOURCE_DIR}/sdk/include/cushim"
                             "${CUSHIM_CUDA_INCLUDE}" ${CUSHIM_LIB_INCLUDES})
  target_compile_options(e2e_remote_liar PRIVATE ${CUSHIM_WARN_FLAGS} -Wno-deprecated-declarations)
  target_link_libraries(e2e_remote_liar PRIVATE cushim_remote)
  add_test(NAME e2e_remote_cublas COMMAND bash "${CMAKE_CURRENT_SOURCE_DIR}/run_remote_cublas.sh" "${CMAKE_BINARY_DIR}"
           "$<TARGET_FILE:e2e_remote_cublas>" "${CMAKE_CURRENT_BINARY_DIR}" "$<TARGET_FILE:e2e_remote_liar>")
  set_tests_properties(e2e_remote_cublas PROPERTIES LABELS "e2e;remote;no_asan" TIMEOUT 60)
endif()

# Virtual memory management (docs/remote.md, "Virtual memory management"): JAX's allocator's calls - granularity,
# create, reserve, map, set access, memory used through the mapping, unmap, free, release - equal a local run;
# exportable handle types refused; the server's quota charges cuMemCreate (run_remote_vmm.sh).
add_executable(e2e_remote_vmm e2e_remote_vmm.c)
target_include_directories(e2e_remote_vmm PRIVATE "${CUSHIM_CUDA_INCLUDE}")
target_compile_options(e2e_remote_vmm PRIVATE ${CUSHIM_WARN_FLAGS})
target_link_libraries(e2e_remote_vmm PRIVATE cushim_fake_cuda)
add_test(NAME e2e_remote_vmm COMMAND bash "${CMAKE_CURRENT_SOURCE_DIR}/run_remote_vmm.sh" "${CMAKE_BINARY_DIR}"
         "$<TARGET_FILE:e2e_remote_vmm>" "${CMAKE_CURRENT_BINARY_DIR}")
set_tests_properties(e2e_remote_vmm PROPERTIES LABELS "e2e;remote;no_asan" TIMEOUT 60)
