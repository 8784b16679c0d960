-- nvmlfake.lua - e2e_nokill_nvmlbad (run_nokill.sh): a policy that answers nvmlDeviceGetCount_v2 and
-- nvmlDeviceGetHandleByIndex_v2 itself - skipped with NVML_SUCCESS, their outputs left as the program left them
-- (here: pointers into unreadable memory, and the program's own variables): the trace must read those outputs
-- without a fault.
cushim.before.nvmlDeviceGetCount_v2 = function(call)
  return cushim.skip("NVML_SUCCESS")
end
cushim.before.nvmlDeviceGetHandleByIndex_v2 = function(call)
  return cushim.skip(0)
end
