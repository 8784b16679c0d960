-- badptrs.lua - e2e_nokill_badptrs (run_nokill.sh): a policy reading the program's pointers in before and
-- after hooks of calls the driver refuses (e2e_trace badptrs): a name, an output and a struct by pointer that
-- point at memory that cannot be read read as nil; what can be read reads as it is. One report line per
-- hook (report=FILE): "NAME STAGE PARAM=VALUE...".
local function show(v)
  if v == nil then return "nil" end
  return tostring(v)
end
for _, stage in ipairs({"before", "after"}) do
  cushim[stage].cuModuleGetFunction = function(call)
    print(call.name, stage, "name=" .. show(call.name), "hfunc=" .. show(call.hfunc))
  end
  cushim[stage].cuGraphAddKernelNode = function(call)
    local p = call.nodeParams
    print(call.name, stage, "nodeParams=" .. (p == nil and "nil" or ("gridDimX:" .. show(p.gridDimX))))
  end
end
