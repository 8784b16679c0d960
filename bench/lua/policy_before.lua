-- policy.lua's hooks, with the output parameter read in the before hook: the driver has not written it yet,
-- so the read goes through cushim_read_mem (a process_vm_readv; under a seccomp filter an rt_sigprocmask probe
-- per 4 KiB piece, then a copy) - the cost of a Lua read through a pointer the driver has not vouched for.
local last
cushim.before.cuCtxGetCurrent = function(call) last = call.pctx end
cushim.after.cuCtxGetCurrent = function(call) end
