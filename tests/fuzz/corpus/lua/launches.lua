-- launches.lua - count kernel launches per kernel name; the report is printed at exit.
--   cushim run --lua=launches.lua -- python3 train.py
-- The name comes from the driver (cuFuncGetName, or cuKernelGetName for a CUkernel handle),
-- asked once per function handle and remembered in this thread's Lua state. A build from headers
-- older than CUDA 12.3 (generated/cuda-11.8) has neither: the handle's address stands for the name.
local names = {}
local function driver_name(query, f)
  if not cushim.api(query) then return nil end   -- not in this build's headers
  local r, n = cushim.real[query](f)
  if r == "CUDA_SUCCESS" then return n end
end
local function kernel_name(f)
  local n = names[f]
  if n then return n end
  n = driver_name("cuFuncGetName", f) or driver_name("cuKernelGetName", f) or string.format("<function 0x%x>", f)
  names[f] = n
  return n
end
cushim.before["cuLaunchKernel,cuLaunchKernelEx,cuLaunchCooperativeKernel"] = function(call)
  cushim.shared.add("launch:" .. kernel_name(call.f))
end
cushim.at_exit(function()
  local rows, total = {}, 0
  for key, n in pairs(cushim.shared.counters("launch:")) do
    rows[#rows + 1] = {key:sub(8), n}
    total = total + n
  end
  table.sort(rows, function(a, b) return a[2] > b[2] or (a[2] == b[2] and a[1] < b[1]) end)
  for _, row in ipairs(rows) do cushim.report(string.format("launches\t%d\t%s", row[2], row[1])) end
  cushim.report(string.format("launches\t%d\ttotal", total))
end)
