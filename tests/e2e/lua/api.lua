-- api.lua - the policy API surface, checked from inside a policy (run_lua.sh 'api'): each check
-- reports "check NAME ok" or raises (fail closed: the call then fails, and the test sees it).
local function check(name, cond, ...)
  if not cond then error("check " .. name .. " failed " .. table.concat({...}, " "), 2) end
  cushim.report("check " .. name .. " ok")
end

-- metadata, constants, options, at load time
local m = cushim.api("cuMemAlloc_v2")
check("meta", m.name == "cuMemAlloc_v2" and m.base == "cuMemAlloc" and m.library == "driver"
      and m.categories.alloc and m.params[2].name == "bytesize" and m.params[1].dir == "out"
      and cushim.api(m.id).name == "cuMemAlloc_v2" and cushim.api("noSuchApi") == nil)
check("consts", cushim.C.CUDA_ERROR_OUT_OF_MEMORY == 2 and cushim.error("cudaErrorMemoryAllocation") == 2)
check("options", cushim.options.greeting == "hello=world" and cushim.options.missing == nil)
check("generation", cushim.generation == 1 and cushim.script:match("api%.lua$"))
check("parse_bytes", cushim.parse_bytes("8GiB") == 8 * 2^30 and cushim.parse_bytes("512K") == 524288
      and cushim.parse_bytes("4096") == 4096 and not pcall(cushim.parse_bytes, "nan")
      and not pcall(cushim.parse_bytes, "1e300") and not pcall(cushim.parse_bytes, "8388608T"))
check("on_errors", not pcall(cushim.on, {select = "cuInit"}) and not pcall(cushim.on, {before = print}))

-- parameters: a before hook changes bytesize, the driver sees it (FAKE_CUDA_MEM is small)
cushim.before.cuMemAlloc = function(call)
  call.state.seen = call.bytesize
  call.state.t0 = cushim.now()
  if call.bytesize == 100 then call.bytesize = 1 << 40 end       -- too large for the fake driver
end
cushim.after.cuMemAlloc = function(call)
  local s = call.state
  check("state", s.seen ~= nil and cushim.now() >= s.t0)
  check("ids", call.seq > 0 and call.tid == cushim.thread_id() and call.depth <= 1 and call.after)
  if call.depth == 1 then cushim.shared.add("nested") end   -- cudaMalloc's own cuMemAlloc_v2
  if s.seen == 100 then
    check("modified", call.result == "CUDA_ERROR_OUT_OF_MEMORY" and call.code == 2 and not call.skipped)
  else
    check("output", call.result == "CUDA_SUCCESS" and call.dptr ~= 0 and call:raw("dptr") ~= call.dptr)
    check("readonly", not pcall(function() call.bytesize = 5 end))
  end
end

-- results overridden after the call; real functions called from a hook
cushim.after.cuCtxSynchronize = function(call)
  local r, v = cushim.real.cuDriverGetVersion()
  check("real", r == "CUDA_SUCCESS" and v > 0)
  check("skip_kind", not pcall(function() call.result = "cudaErrorMemoryAllocation" end))
  call.result = "CUDA_ERROR_LAUNCH_FAILED"
end

-- a stale call object, unknown fields, writes to missing parameters
local kept
cushim.before.cuDeviceGetCount = function(call)
  kept = call
  check("unknown", call.nosuch == nil and not pcall(function() call.nosuch = 1 end))
end
cushim.after.cuDeviceGetCount = function(call)
  call.count = 42                            -- an output written by the policy
  check("tostring", tostring(call):match("cuDeviceGetCount"))
end
cushim.before.cuDriverGetVersion = function(call)
  return cushim.skip(cushim.C.CUDA_ERROR_NOT_PERMITTED)    -- by number
end
-- selectors by category, glob and library
cushim.on{select = "cat:sync&lib:driver", before = function(call) cushim.shared.add("sel.cat") end}
cushim.on{select = "cuCtxSync*", after = function(call) cushim.shared.add("sel.glob") end}
cushim.on{select = "lib:runtime", before = function(call)
  cushim.shared.add("sel.rt")
  if call.name == "cudaMalloc" then cushim.shared.add("sel.cudamalloc") end
end}

-- hook tables read back; declaring after load is refused
check("readback", type(cushim.before.cuMemAlloc) == "function" and cushim.after.cuInit == nil)
cushim.at_exit(function()
  check("late_decl", not pcall(function() cushim.before.cuInit = print end))
  check("stale", kept ~= nil and not pcall(function() return kept.count end))
  local c = cushim.shared.counter
  check("selectors", c("sel.cat") == 1 and c("sel.glob") == 1 and c("sel.cudamalloc") == 1 and c("sel.rt") >= 1
        and c("nested") == 1, c("sel.cat"), c("sel.glob"), c("sel.cudamalloc"), c("nested"))
end)
