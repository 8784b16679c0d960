# trees.cmake - the libraries of each generated tree (codegen/libs/<name>.lib) and the header folders
# beyond the CUDA include folder they need. Included by codegen/CMakeLists.txt (regenerate,
# verify-generated), tests/unit/codegen.cmake and the top-level build (include path of the runtime).
# CUSHIM_GEN_ARGS_<X_Y>: extra cushim-gen arguments for generated/cuda-<X.Y>.
set(CUSHIM_NVML_INCLUDE "${CUSHIM_EXTRA_HEADERS_DIR}/nvml-13.0/include")
set(CUSHIM_GEN_ARGS_13_0 --libs driver,runtime,nvml,nccl,cublas,cublaslt --include "${CUSHIM_NVML_INCLUDE}")
set(CUSHIM_GEN_ARGS_12_9)
set(CUSHIM_GEN_ARGS_11_8)
set(CUSHIM_GEN_ARGS_13_5)
