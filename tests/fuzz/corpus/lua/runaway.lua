-- runaways: caught budget errors, coroutines, handlers, closing
local function spin() while true do end end
cushim.before.cuCtxSynchronize = function(c)
  while true do pcall(spin) xpcall(spin, spin) pcall(coroutine.wrap(spin)) end
end
cushim.before.cuMemFree = function(c)
  local co = coroutine.create(function() local x <close> = setmetatable({}, {__close = spin}) spin() end)
  coroutine.resume(co)
end
cushim.after.cuMemFree = function(c) for i = 1, 1e9 do cushim.shared.set("k" .. i, string.rep("x", 60000)) end end
local ok = pcall(setmetatable, {}, {__gc = spin})
