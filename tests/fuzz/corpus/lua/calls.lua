-- every API of the fuzz host's table, read and written through the call object
cushim.before["all"] = function(c)
  local a = c.api
  for _, p in ipairs(a.params) do local v = c[p.name]; local r = c:raw(p.name) end
  c.state.t = cushim.now()
  return nil
end
cushim.after["all"] = function(c)
  for _, p in ipairs(c.api.params) do local v = c[p.name] end
  local r, code, s = c.result, c.code, c.skipped
  if c.name == "cuMemAlloc_v2" and c.dptr then c.dptr = c.dptr + 1 end
  if c.name == "cuDeviceGetAttribute" then c.pi = 7; c.result = "CUDA_SUCCESS" end
  tostring(c)
end
cushim.before.cuLaunchKernelEx = function(c)
  local v = c.config
  if v then
    local x = v.gridDimX + v.grid2.y + #v.pad + (v.label and #v.label or 0)
    local m = v.mtype
    pcall(function() v.gridDimX = 1 end)
    tostring(v)
  end
end
cushim.before.cudaLaunchKernel = function(c) c.gridDim.x = 2; c.blockDim.y = c.gridDim.x end
cushim.before.cuDeviceGetAttribute = function(c)
  if c.attrib == "CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK" then c.attrib = "CU_DEVICE_ATTRIBUTE_WARP_SIZE" end
end
cushim.before.cuMemAlloc = function(c)
  if cushim.shared.add("bytes", c.bytesize) > cushim.parse_bytes(cushim.options.limit) then
    cushim.shared.add("bytes", -c.bytesize)
    return cushim.skip("CUDA_ERROR_OUT_OF_MEMORY")
  end
end
cushim.at_exit(function() cushim.report("bytes", cushim.shared.counter("bytes")) end)
