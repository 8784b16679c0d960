-- rewrite.lua - change an argument before the real call sees it: every stream the program creates
-- is non-blocking (it does not synchronise with the legacy default stream).
--   cushim run --lua=rewrite.lua -- ./app
local NON_BLOCKING = 1   -- CU_STREAM_NON_BLOCKING
cushim.before["cuStreamCreate,cuStreamCreateWithPriority"] = function(call)
  if call.Flags then call.Flags = call.Flags | NON_BLOCKING       -- cuStreamCreate(phStream, Flags)
  else call.flags = call.flags | NON_BLOCKING end                 -- ...WithPriority(phStream, flags, priority)
end
