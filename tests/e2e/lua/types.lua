-- types.lua - enums by name and structs by field, from the type metadata (run_lua.sh 'types').
cushim.report("const", cushim.C.CU_STREAM_NON_BLOCKING, cushim.C.cudaMemcpyHostToDevice,
              pcall(function() return cushim.C.NO_SUCH_CONSTANT end))
cushim.before.cuDeviceGetAttribute = function(call)
  cushim.report("attrib", call.attrib)                     -- the enum's name
  if call.attrib == "CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK" then
    call.attrib = "CU_DEVICE_ATTRIBUTE_WARP_SIZE"         -- written by name: the driver sees it
  end
end
cushim.before.cuLaunchKernelEx = function(call)
  local c = call.config                                    -- const CUlaunchConfig *: a read-only view
  cushim.report("config", c.gridDimX, c.gridDimY, c.blockDimX, c.sharedMemBytes, tostring(c))
  cushim.report("config readonly", not pcall(function() c.gridDimX = 5 end))
  cushim.report("config unknown", c.noSuchField == nil)
end
