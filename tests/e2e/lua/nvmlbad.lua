-- nvmlbad.lua - e2e_nokill_nvmlbad (run_nokill.sh): a policy reading NVML's outputs after each call of
-- e2e_nvml_badptrs: after a call the library refused, an output pointing at memory that cannot be read reads
-- as nil; after one that succeeded, the value it wrote. One report line per hook: "WHAT CODE PARAM=VALUE".
local function show(v)
  if v == nil then return "nil" end
  return tostring(v)
end
cushim.after.nvmlDeviceGetCount_v2 = function(call)
  print("count", show(call.code), "deviceCount=" .. show(call.deviceCount))
end
cushim.after.nvmlDeviceGetHandleByIndex_v2 = function(call)
  print("handle", show(call.code), "device=" .. (call.device == nil and "nil" or (call.device ~= 0 and "set" or "0")))
end
