-- params.lua - parameters by name through the call object's caches (run_lua.sh 'params'): one call
-- object serving APIs that share parameter names at other positions, nested calls (each depth its own
-- object and call.state), names made at run time, keys that are no parameter, outputs before and after.
-- Each check reports "check NAME ok" or raises (fail closed: the call then fails, and the test sees it).
local function check(name, cond, ...)
  if not cond then error("check " .. name .. " failed " .. table.concat({...}, " "), 2) end
  cushim.report("check " .. name .. " ok")
end
local long = string.rep("x", 100)   -- longer than any string Lua interns

cushim.before.cuMemAlloc = function(call)
  local size = call.bytesize
  check("alloc.size", size == 64 or size == 128, tostring(size))
  check("alloc.runtime_name", call["byte" .. "size"] == size)       -- a key built while running
  check("alloc.others", call.count == nil and call.size == nil and call.attrib == nil and call[1] == nil
        and call[long] == nil)
  for i, p in ipairs(call.api.params) do                               -- every name from the metadata
    check("alloc.meta" .. i, p.name ~= "bytesize" or call[p.name] == size)
  end
  call.state.tag = "drv" .. call.depth
end
cushim.after.cuMemAlloc = function(call)
  check("alloc.out", call.dptr ~= 0 and call.bytesize > 0 and call.state.tag == "drv" .. call.depth)
  cushim.shared.set("p" .. call.dptr, call.bytesize)
end
cushim.before.cuMemFree = function(call)
  -- the depth-0 call object served cuMemAlloc last: dptr is parameter 1 here too, bytesize none
  check("free.ptr", cushim.shared.get("p" .. call.dptr) == 64, tostring(call.dptr))
  check("free.others", call.bytesize == nil)
end
cushim.before.cudaMalloc = function(call)
  check("rt.size", call.size == 128 and call.bytesize == nil and call.devPtr ~= nil)
  call.state.tag = "rt"
end
cushim.after.cudaMalloc = function(call)
  -- the nested cuMemAlloc_v2 (depth 1) had its own object and state
  check("rt.nested", call.state.tag == "rt" and call.result == "cudaSuccess" and call.devPtr ~= 0
        and cushim.shared.get("p" .. call.devPtr) == 128)
end
cushim.before.cuDeviceGetAttribute = function(call)
  check("attr.before", call.pi == -1 and call.dev == 0 and type(call.attrib) == "string")
end
cushim.after.cuDeviceGetAttribute = function(call)
  check("attr.after", call.pi == 32 and call.attrib == "CU_DEVICE_ATTRIBUTE_WARP_SIZE")
  call.pi = call.pi + 1                                                -- written through the same lookup
end
