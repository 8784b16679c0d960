-- nvmlskip.lua - e2e_nokill_nvmlbad (run_nokill.sh): an NVML error from a policy - every
-- nvmlDeviceGetMemoryInfo skipped with NVML_ERROR_GPU_IS_LOST (15), by name, as a CUDA call's would be.
cushim.before.nvmlDeviceGetMemoryInfo = function(call)
  return cushim.skip("NVML_ERROR_GPU_IS_LOST")
end
