-- The benchmarked policy: a before and an after hook on cuCtxGetCurrent; the after hook reads the
-- output parameter (the current context, through the pctx pointer).
local last
cushim.before.cuCtxGetCurrent = function(call) end
cushim.after.cuCtxGetCurrent = function(call) last = call.pctx end
