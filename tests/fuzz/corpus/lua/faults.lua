-- faults.lua - inject faults: every Nth call of the selected APIs fails (counted over all threads).
--   cushim run --lua=faults.lua:select=cuMemAlloc,every=3,error=CUDA_ERROR_OUT_OF_MEMORY -- ./app
local every = tonumber(cushim.options.every) or 10
local err = cushim.options.error or "CUDA_ERROR_UNKNOWN"
cushim.before[cushim.options.select or "cat:alloc&lib:driver"] = function(call)
  if cushim.shared.add("faults.calls") % every == 0 then
    cushim.shared.add("faults.injected")
    return cushim.skip(err)
  end
end
cushim.at_exit(function()
  cushim.report(string.format("faults: %d calls, %d failed on purpose",
                cushim.shared.counter("faults.calls"), cushim.shared.counter("faults.injected")))
end)
