# trees.cmake - the libraries of each generated tree (codegen/libs/<name>.lib) and the header folders
# beyond the CUDA include folder they need. Included by codegen/CMakeLists.txt (regenerate,
# verify-generated), tests/unit/codegen.cmake and the top-level build (include path of the runtime).
# CUSHIM_GEN_ARGS_<X_Y>: extra cushim-gen arguments for generated/cuda-<X.Y>.
# CUSHIM_NVML_INCLUDE_<X_Y>: nvml.h of the tree's release (pinned nvidia-nvml-dev wheels); CUSHIM_NVML_INCLUDE is the
# 13.0 tree's, and the top-level CMakeLists.txt sets it to the built tree's.
set(CUSHIM_NVML_INCLUDE_13_0 "${CUSHIM_EXTRA_HEADERS_DIR}/nvml-13.0/include")
set(CUSHIM_NVML_INCLUDE_13_5 "${CUSHIM_EXTRA_HEADERS_DIR}/nvml-13.5/include")
set(CUSHIM_NVML_INCLUDE_12_9 "${CUSHIM_EXTRA_HEADERS_DIR}/nvml-12.9/include")
set(CUSHIM_NVML_INCLUDE_11_8 "${CUSHIM_EXTRA_HEADERS_DIR}/nvml-11.8/include")
set(CUSHIM_NVML_INCLUDE "${CUSHIM_NVML_INCLUDE_13_0}")
set(CUSHIM_GEN_ARGS_13_0 --libs driver,runtime,nvml,nccl,cublas,cublaslt --include "${CUSHIM_NVML_INCLUDE_13_0}")
# 12.9 (CUDA 12 programs: most deployed PyTorch, JAX and CuPy wheels): every library of the 13.0 tree, from CUDA 12.9's
# own headers (nvml.h, cuBLAS 12.9.1.4, NCCL 2.27.7: pinned wheels unpacked into the 12.9 include folder).
set(CUSHIM_GEN_ARGS_12_9 --libs driver,runtime,nvml,nccl,cublas,cublaslt --include "${CUSHIM_NVML_INCLUDE_12_9}")
# The headers beyond cuda.h a tree's libraries need, checked before generating (check-headers.cmake).
set(CUSHIM_GEN_NEEDS_12_9 cublas_api.h cublasLt.h nccl.h)
# 11.8: the default set (driver, runtime, NVML: nvml.h of nvidia-nvml-dev-cu11==11.8.86).
set(CUSHIM_GEN_ARGS_11_8 --libs driver,runtime,nvml --include "${CUSHIM_NVML_INCLUDE_11_8}")
# 13.5: the default set (driver, runtime, NVML); NCCL's and cuBLAS's headers come with the 13.0 toolkit only.
set(CUSHIM_GEN_ARGS_13_5 --libs driver,runtime,nvml --include "${CUSHIM_NVML_INCLUDE_13_5}")
