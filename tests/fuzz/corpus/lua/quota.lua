-- quota.lua - a device-memory quota for the whole process, all threads together:
--   cushim run --lua=quota.lua:limit=8GiB -- python3 train.py
-- An allocation that would pass 'limit' fails with CUDA_ERROR_OUT_OF_MEMORY, as a full GPU would.
-- (cuMemAlloc/cuMemFree, which cudaMalloc/cudaFree use; pools, managed and VMM memory are not counted.)
local limit = cushim.parse_bytes(cushim.options.limit or "8GiB")
local shared = cushim.shared

cushim.before.cuMemAlloc = function(call)              -- base name: every ABI variant
  if shared.add("quota.bytes", call.bytesize) > limit then   -- reserve first: no race between threads
    shared.add("quota.bytes", -call.bytesize)
    return cushim.skip("CUDA_ERROR_OUT_OF_MEMORY")
  end
end
cushim.after.cuMemAlloc = function(call)
  if call.skipped then return end
  if call.result == "CUDA_SUCCESS" then
    shared.set("quota.ptr:" .. call.dptr, call.bytesize)   -- call.dptr: the new device pointer
  else
    shared.add("quota.bytes", -call.bytesize)               -- refused by the driver: give it back
  end
end
cushim.before.cuMemFree = function(call)
  local key = "quota.ptr:" .. call.dptr
  local size = shared.get(key)
  if size then shared.set(key, nil); shared.add("quota.bytes", -size) end
end
