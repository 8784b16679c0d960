-- name=kernA, grid=(7,1,1) [block] {x}
(%w+)=([%w(),]+)
%2:%1
cushim.before.cuCtxSynchronize = function(c) local s = ("a"):rep(40) return s:find(("a-"):rep(10) .. "b") end
