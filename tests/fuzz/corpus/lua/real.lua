-- real calls, constants, metadata, options
local r, ptr = cushim.real.cuMemAlloc(64)
local e = cushim.error("CUDA_ERROR_UNKNOWN") + cushim.C.CU_MEMORYTYPE_DEVICE
local a = cushim.api("cuMemAlloc_v2")
for k, v in pairs(cushim.stats()) do end
cushim.log("info", "loaded", cushim.generation, cushim.script, cushim.cuda_version, cushim.options.select)
cushim.on{select = cushim.options.select, before = function(c) return cushim.skip(2) end,
          after = function(c) c.code = 0 end}
cushim.before["lib:runtime&!cudaMalloc"] = function(c) print(c.name, c.seq, c.tid, c.depth) end
cushim.after.cuGetErrorString = function(c) local s = c.pStr; cushim.real.cudaGetErrorString(2) end
cushim.after.cuDeviceGetName = function(c) local n = c.name end
