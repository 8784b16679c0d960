-- shared.lua - cushim.shared is bounded by mem= (run_lua.sh 'shared', mem=1MiB): 64 KiB strings until the
-- error, every key deleted, the bytes usable again; past the limit, the error fails the call as fail= says.
local big = string.rep("x", 65536)
cushim.before.cuCtxSynchronize = function(call)
  local stored = 0
  local ok, err = pcall(function()
    for i = 1, 100 do cushim.shared.set("k" .. i, big); stored = i end
  end)
  cushim.report("shared stored", stored, "of 100")
  for i = 1, 100 do cushim.shared.set("k" .. i, nil) end
  cushim.report("shared again", pcall(cushim.shared.set, "again", big))
  cushim.shared.set("again", nil)
  local n = 0   -- counter names count too
  ok = pcall(function() for i = 1, 20000 do cushim.shared.add(string.rep("c", 1000) .. i); n = i end end)
  cushim.report("shared counters", not ok and n > 100 and n < 1100)
  for i = 1, 100 do cushim.shared.set("k" .. i, big) end   -- the error reaches the call: fail closed
end
cushim.before.cuCtxGetCurrent = function(call) end
