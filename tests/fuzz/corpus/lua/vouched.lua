-- an after hook that overrides a failed call's result, then reads and writes its outputs
cushim.after["all"] = function(c)
  if c.code ~= nil then c.code = 0 end
  for _, p in ipairs(c.api.params) do local v = c[p.name] end
  if c.name == "cuMemAlloc_v2" then c.dptr = 1 end
end
cushim.before.cuDeviceGetAttribute = function(c) c.pi = 3 end
