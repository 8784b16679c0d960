-- badargs.lua - the bridge's C functions given what they do not take (run_lua.sh 'bridge'): each must refuse
-- with an error, never read the value as its own (call.raw(call.config, "f") crashed the program).
-- Reports "badargs WHAT N refused", or "badargs WHAT accepted ..." for the first one that was not.
local function check(what, cases)
  for i, c in ipairs(cases) do
    local ok, err = pcall(table.unpack(c, 1, c.n or #c))
    if ok or not tostring(err):find("expected, got") and not tostring(err):find("own, called by the policy") then
      cushim.report("badargs", what, "accepted", i, ok, err)
      return
    end
  end
  cushim.report("badargs", what, #cases, "refused")
end

cushim.before.cuLaunchKernelEx = function(call)
  local view = call.config
  local others = {view, cushim.skip(0), coroutine.create(function() end), 1, "s", {}, print}
  local cases = {}
  for _, f in ipairs{call.raw, call.set_raw} do
    for _, x in ipairs(others) do cases[#cases + 1] = {f, x, "f", 1} end
  end
  check("raw", cases)
  if debug then   -- the metamethods themselves, as debug.getmetatable hands them out
    cases = {}
    local co = coroutine.create(print)
    for mt, wrong in pairs{[debug.getmetatable(call)] = {view, cushim.skip(0), co, 1, io.stdout},
                           [debug.getmetatable(view)] = {call, cushim.skip(0), co, 1, io.stdout}} do
      for _, k in ipairs{"__index", "__newindex", "__tostring"} do
        for _, x in ipairs(wrong) do cases[#cases + 1] = {mt[k], x, "gridDimX", 1} end
      end
    end
    check("meta", cases)
  end
end

-- two functions on one stage: the plugin's own C function calls them (debug.getinfo reaches it)
cushim.on{select = "cuCtxSynchronize", before = function(call) end}
cushim.on{select = "cuCtxSynchronize", before = function(call)
  if not debug then return end
  local f = debug.getinfo(2, "Sf")
  if f.what ~= "C" then cushim.report("badargs internal: no C function at level 2") return end
  local _, token = debug.getlocal(2, 1)
  local ok, err = pcall(f.func, token)
  local ok2 = pcall(f.func, cushim.skip(0))
  local ok3 = pcall(f.func)
  cushim.report("badargs internal", (ok or ok2 or ok3) and "accepted" or "refused", err)
end}

-- the one that runs this top level
if debug then
  local f = debug.getinfo(2, "Sf")
  local _, token = debug.getlocal(2, 1)
  local ok = f and f.what == "C" and (pcall(f.func, token) or pcall(f.func, cushim.skip(0)) or pcall(f.func))
  cushim.report("badargs setup", f and f.what == "C" and not ok and "refused" or "accepted")
end
