# remote_program(NAME LIBS...): the e2e program NAME.c on the CUDA headers, linked against LIBS.
function(remote_program name)
  add_executable(${name} ${name}.c)
  target_include_directories(${name} PRIVATE "${CUSHIM_CUDA_INCLUDE}")
  target_compile_options(${name} PRIVATE ${CUSHIM_WARN_FLAGS})
  target_link_libraries(${name} PRIVATE ${ARGN})
endfunction()
# remote_test(NAME SCRIPT TIMEOUT ARGS...): the test NAME, bash SCRIPT BUILD_DIR ARGS... (e2e, remote, no_asan).
function(remote_test name script timeout)
  add_test(NAME ${name} COMMAND bash "${CMAKE_CURRENT_SOURCE_DIR}/${script}" "${CMAKE_BINARY_DIR}" ${ARGN})
  set_tests_properties(${name} PROPERTIES LABELS "e2e;remote;no_asan" TIMEOUT ${timeout})
endfunction()

# API forwarding end to end (docs/remote.md): cushim-serve on the fake driver, clients with the drop-in and the
# remote plugin and no driver on their path (run_remote.sh).
remote_program(e2e_remote_loss cushim_fake_cuda)
remote_program(e2e_remote_fast cushim_fake_cuda pthread)
remote_test(e2e_remote run_remote.sh 120
         "$<TARGET_FILE:vecadd>" "$<TARGET_FILE:e2e_remote_loss>" "${CMAKE_CURRENT_BINARY_DIR}"
         "$<TARGET_FILE:e2e_remote_fast>")

# Deployment (docs/remote-deploy.md): cushim serve --fake and cushim run --remote= over a unix socket and over TCP
# with a token; refused tokens; a server-side memory quota per client; --gpus; cushim apis --remote
# (run_remote_deploy.sh). The clients have no libcuda on their path.
remote_program(e2e_remote_quota cushim_fake_cuda)
remote_test(e2e_remote_deploy run_remote_deploy.sh 120
         "$<TARGET_FILE:vecadd>" "$<TARGET_FILE:e2e_remote_quota>" "$<TARGET_FILE:e2e_remote_loss>"
         "${CMAKE_CURRENT_BINARY_DIR}")

# Runtime-API programs (docs/remote.md, "Runtime-API programs"): e2e_remote_rt registers its fat binary and
# launches as nvcc's code does, linked only against the runtime (the fake libcudart.so.13); run_remote_rt.sh
# compares its output through cushim-serve with a local run's.
remote_program(e2e_remote_rt cushim_fake_cudart ${CMAKE_DL_LIBS} pthread)
target_compile_options(e2e_remote_rt PRIVATE -Wno-deprecated-declarations)
if(TARGET cushim_fake_nvml)   # NVML over remoting: the queries nvidia-smi makes
  add_executable(e2e_remote_nvml e2e_remote_nvml.c)
  target_include_directories(e2e_remote_nvml PRIVATE ${CUSHIM_LIB_INCLUDES})
  target_compile_options(e2e_remote_nvml PRIVATE ${CUSHIM_WARN_FLAGS})
  target_link_libraries(e2e_remote_nvml PRIVATE cushim_fake_nvml)
  set(_rm_nvml $<TARGET_FILE:e2e_remote_nvml>)
else()
  set(_rm_nvml "")
endif()
remote_test(e2e_remote_rt run_remote_rt.sh 120
         "$<TARGET_FILE:e2e_remote_rt>" "${CMAKE_CURRENT_BINARY_DIR}" ${_rm_nvml})

# Host functions (docs/remote.md, "Host functions"): cuLaunchHostFunc, cuStreamAddCallback and the runtime's
# forms run in the client after their stream drained on the server; the order and the data they see equal a local
# run's (run_remote_hostfn.sh).
remote_program(e2e_remote_hostfn cushim_fake_cuda pthread)
remote_test(e2e_remote_hostfn run_remote_hostfn.sh 60
         "$<TARGET_FILE:e2e_remote_hostfn>" "$<TARGET_FILE:e2e_remote_rt>" "${CMAKE_CURRENT_BINARY_DIR}")

# delay_us, a simulated network distance (docs/plugins/remote.md): round trips delayed by at least it, once each;
# batched calls not one by one (run_remote_delay.sh).
remote_program(e2e_remote_delay cushim_fake_cuda)
remote_test(e2e_remote_delay run_remote_delay.sh 120
         "$<TARGET_FILE:e2e_remote_delay>" "${CMAKE_CURRENT_BINARY_DIR}")

# Stream capture and graphs (docs/remote.md, "Graphs"): captured launches and copies, graphs launched N times,
# kernel nodes with arguments, an error inside a capture at its own call, pinned memory in a graph, and what is
# refused (run_remote_graph.sh).
remote_program(e2e_remote_graph cushim_fake_cuda)
remote_program(e2e_remote_graph_rt cushim_fake_cudart)
remote_test(e2e_remote_graph run_remote_graph.sh 60
         "$<TARGET_FILE:e2e_remote_graph>" "${CMAKE_CURRENT_BINARY_DIR}"
         "$<TARGET_FILE:e2e_remote_graph_rt>")
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
  remote_test(e2e_remote_cublas run_remote_cublas.sh 60
           "$<TARGET_FILE:e2e_remote_cublas>" "${CMAKE_CURRENT_BINARY_DIR}" "$<TARGET_FILE:e2e_remote_liar>")
endif()

# Virtual memory management (docs/remote.md, "Virtual memory management"): JAX's allocator's calls - granularity,
# create, reserve, map, set access, memory used through the mapping, unmap, free, release - equal a local run;
# exportable handle types refused; the server's quota charges cuMemCreate (run_remote_vmm.sh).
remote_program(e2e_remote_vmm cushim_fake_cuda)
remote_test(e2e_remote_vmm run_remote_vmm.sh 60
         "$<TARGET_FILE:e2e_remote_vmm>" "${CMAKE_CURRENT_BINARY_DIR}")
# Pointer attributes (docs/remote.md, "Values sized by their attribute"): every attribute of device, pinned and
# pageable memory equal to a local run, pinned memory's addresses translated, an unknown attribute refused
# (run_remote_ptrattr.sh).
remote_program(e2e_remote_ptrattr cushim_fake_cuda)
remote_test(e2e_remote_ptrattr run_remote_ptrattr.sh 60
         "$<TARGET_FILE:e2e_remote_ptrattr>" "${CMAKE_CURRENT_BINARY_DIR}")
# Managed memory (docs/remote.md, "Managed memory"): cuMemAllocManaged and cudaMallocManaged mirrored in the client
# at the server's address, host writes seen by kernels and copies, results seen after synchronisation, over a unix
# socket and TCP; the managed-access attributes 0; a taken address asked again, then refused (run_remote_managed.sh).
remote_program(e2e_remote_managed cushim_fake_cudart ${CMAKE_DL_LIBS})
remote_test(e2e_remote_managed run_remote_managed.sh 60
         "$<TARGET_FILE:e2e_remote_managed>" "${CMAKE_CURRENT_BINARY_DIR}")
# NCCL (docs/remote.md, "NCCL"): two ranks, each a client of one cushim-serve, meet through the server's (fake)
# NCCL: an all-reduce outside a group and a group of two equal a local run's; the group batched
# (run_remote_nccl.sh).
if(TARGET cushim_fake_nccl)
  add_executable(e2e_remote_nccl e2e_remote_nccl.c)
  target_include_directories(e2e_remote_nccl PRIVATE ${CUSHIM_LIB_INCLUDES} "${CUSHIM_CUDA_INCLUDE}")
  target_compile_options(e2e_remote_nccl PRIVATE ${CUSHIM_WARN_FLAGS})
  target_link_libraries(e2e_remote_nccl PRIVATE cushim_fake_cudart cushim_fake_nccl ${CMAKE_DL_LIBS})
  remote_test(e2e_remote_nccl run_remote_nccl.sh 60 "$<TARGET_FILE:e2e_remote_nccl>" "${CMAKE_CURRENT_BINARY_DIR}")
endif()
# CUDA IPC handles (docs/remote.md, "IPC"): two clients of one tenant share device memory and an event through the
# server's table of exported handles; another tenant's (another token) and unknown handles refused
# (run_remote_ipc.sh).
remote_program(e2e_remote_ipc cushim_fake_cuda cushim_fake_cudart)
remote_test(e2e_remote_ipc run_remote_ipc.sh 60 "$<TARGET_FILE:e2e_remote_ipc>" "${CMAKE_CURRENT_BINARY_DIR}")
# JIT options, links and tensor maps (docs/remote.md, "JIT options" and "Tensor maps"): what Triton, Inductor, CuPy
# and Numba ask, equal to a local run over a unix socket and TCP; refused options logged by name
# (run_remote_jit.sh).
remote_program(e2e_remote_jit cushim_fake_cuda)
remote_test(e2e_remote_jit run_remote_jit.sh 60
         "$<TARGET_FILE:e2e_remote_jit>" "${CMAKE_CURRENT_BINARY_DIR}")

# The GPU check 'remotestep' (tests/gpu/checks/remotestep.sh: PyTorch steps over remoting timed against local) run
# without a GPU: cushim-serve on the fake driver, a stand-in python that runs vecadd through the plugin and prints
# invented step times; every run happens, the ratios, round trips per call (from the plugin's exit lines) and
# verdicts come out, a differing loss and a client that loads a driver are caught (run_remote_step_dryrun.sh).
remote_test(e2e_remote_step_dryrun run_remote_step_dryrun.sh 60 "${CMAKE_CURRENT_BINARY_DIR}")
