cushim.before.cudaMalloc = function(c)
  cushim.shared.set("s", string.rep("y", 1000)); cushim.shared.set("n", 1.5); cushim.shared.set("b", true)
  local s = cushim.shared.get("s") .. tostring(cushim.shared.get("n")) .. tostring(cushim.shared.get("b"))
  cushim.shared.add("c", math.maxinteger); cushim.shared.add("c", math.maxinteger)
  for k, v in pairs(cushim.shared.counters("")) do end
  cushim.shared.set("s", nil)
end
