-- deny.lua - refuse some APIs: the call is not made and fails with "not permitted".
--   cushim run --lua=deny.lua:apis=cuCtxSetLimit+cudaDeviceReset -- ./app
-- 'apis' is a '+'-separated list of selectors (names, base names, globs, cat:..., lib:...).
local apis = cushim.options.apis or "cuDevicePrimaryCtxReset"
for sel in apis:gmatch("[^+]+") do
  cushim.before[sel] = function(call)
    cushim.log("warn", call.name .. " denied by " .. cushim.script)
    if call.api.library == "runtime" then return cushim.skip("cudaErrorNotPermitted") end
    return cushim.skip("CUDA_ERROR_NOT_PERMITTED")
  end
end
