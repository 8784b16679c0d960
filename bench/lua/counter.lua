-- counter.lua - a policy of a more usual shape for instr.sh (POLICY=bench/lua/counter.lua): a shared counter and
-- a limit before the call, the result and an output read after it.
local limit = 1e12
cushim.before.cuCtxGetCurrent = function(call)
  if cushim.shared.add("calls", 1) > limit then return cushim.skip("CUDA_ERROR_OUT_OF_MEMORY") end
end
cushim.after.cuCtxGetCurrent = function(call)
  if call.result == "CUDA_SUCCESS" and call.pctx ~= 0 then cushim.shared.add("ok", 1) end
end
