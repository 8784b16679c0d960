-- escape.lua - runaways that try to get out of the instruction budget (run_lua.sh 'escape'); cushim.options.mode
-- picks one. Each catches the budget's error and goes on, or runs where Lua turns hooks off.
local mode = cushim.options.mode
local function spin() while true do end end
local stopped
local runaway = {
  pcall = function() while true do pcall(spin) end end,
  xpcall = function() while true do xpcall(spin, function(m) return m end) end end,
  handler = function() while true do xpcall(error, spin) end end,                -- a message handler that loops
  wrap = function() while true do pcall(coroutine.wrap(spin)) end end,
  resume = function() while true do coroutine.resume(coroutine.create(spin)) end end,
  close = function()                                                              -- a to-be-closed variable's __close
    while true do pcall(function() local x <close> = setmetatable({}, {__close = spin}) end) end
  end,
  gc = function() setmetatable({}, {__gc = spin}) end,                            -- a finalizer (hooks off)
  coclose = function()          -- a coroutine stopped by the budget is closed: its __close (hooks off)
    while true do
      pcall(coroutine.wrap(function() local x <close> = setmetatable({}, {__close = spin}) spin() end))
    end
  end,
  closelater = function()       -- the same in the next call
    if stopped then cushim.report("closelater", coroutine.close(stopped)) return end
    stopped = coroutine.create(function() local x <close> = setmetatable({}, {__close = spin}) spin() end)
    coroutine.resume(stopped)
  end,
  pattern = function()           -- one call of a backtracking search (liblua's own matcher: minutes)
    return ("a"):rep(40):find(("a-"):rep(10) .. "b")
  end,
  alloc = function()             -- one instruction that makes 100 KB, again and again: its bytes are charged
    while true do cushim.shared.add("allocs") local s = string.rep("x", 100000) end
  end,
  many = function()              -- short coroutines, each under a count event: each resume is charged
    local n = 0
    while true do
      n = n + 1
      cushim.shared.set("coroutines", n)
      coroutine.wrap(function() for i = 1, 400 do end end)()
    end
  end,
}
if mode == "top" then runaway.pcall() end                 -- the file's top level
if mode == "topgc" then setmetatable({}, {__gc = spin}) end -- collected at lua_close: the start hung
if runaway[mode] then cushim.before.cuCtxSynchronize = runaway[mode] end
if mode == "many" then
  cushim.at_exit(function() cushim.report("coroutines", cushim.shared.get("coroutines")) end)
end
if mode == "alloc" then
  cushim.at_exit(function() cushim.report("allocs", cushim.shared.counter("allocs")) end)
end

-- what the guards leave working
if mode == "coroutines" then
  cushim.before.cuCtxSynchronize = function(call)
    local gen = coroutine.wrap(function() for i = 1, 3 do coroutine.yield(i) end end)
    local sum = gen() + gen() + gen()
    local closed = false
    local ok, err = pcall(coroutine.wrap(function()
      local x <close> = setmetatable({}, {__close = function() closed = true end})
      error("inner")
    end))
    local co = coroutine.create(function(a) local b = coroutine.yield(a + 1) return b * 2 end)
    local _, x = coroutine.resume(co, 1)
    local _, y = coroutine.resume(co, 5)
    cushim.report("coroutines", sum, ok, err, closed, x, y, coroutine.status(co),
                  coroutine.resume(co), select(2, pcall(gen)) ~= nil)
    local t = setmetatable({}, {__index = function(_, k) return k .. "!" end})
    cushim.report("metatables", t.hi, getmetatable(t) ~= nil)
  end
end
if mode == "guards" then   -- allow=debug: nothing of it takes the hook away or adds a finalizer
  cushim.report("guard sethook", pcall(debug.sethook))
  cushim.report("guard setmetatable", pcall(debug.setmetatable, {}, {__gc = false}))
  cushim.report("guard upvalue", debug.getupvalue(setmetatable, 1), debug.getupvalue(coroutine.resume, 1),
                debug.getupvalue(load, 1))
  local f = debug.getinfo(2, "f")   -- the plugin's own C function that runs the top level
  cushim.report("guard internal", f and pcall(f.func, select(2, debug.getlocal(2, 1))))
end
