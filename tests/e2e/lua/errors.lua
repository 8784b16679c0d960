-- errors.lua - hooks that fail in each way (run_lua.sh 'safety'): cushim.options.mode picks one.
local mode = cushim.options.mode
cushim.before.cuCtxSynchronize = function(call)
  if mode == "error" then error("boom in a hook")
  elseif mode == "loop" then while true do end
  elseif mode == "memory" then local t = {} for i = 1, 1e9 do t[i] = {i} end
  elseif mode == "badskip" then return cushim.skip("cudaErrorMemoryAllocation")   -- wrong library
  elseif mode == "skip1" then return (cushim.skip("CUDA_ERROR_INVALID_VALUE"))    -- the code cut off
  elseif mode == "values" then return 1, "two", {}                               -- not a skip: ignored
  elseif mode == "heavy" then local n = 0 for i = 1, 30000 do n = n + i end       -- ~60% of budget=100000
  end
end
if mode == "heavy" then   -- each stage's count starts again: two such stages pass the budget only together
  cushim.after.cuCtxSynchronize = function(call) local n = 0 for i = 1, 30000 do n = n + i end end
end
