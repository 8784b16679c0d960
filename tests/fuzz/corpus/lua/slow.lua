-- slow.lua - log the calls that take longer than slow_ms (default 10) milliseconds.
--   cushim run --lua=slow.lua:slow_ms=5,select=cat:sync+copy -- ./app
local limit_ns = math.floor((tonumber(cushim.options.slow_ms) or 10) * 1e6)
cushim.on{
  select = cushim.options.select or "all",
  before = function(call) call.state.t0 = cushim.now() end,
  after = function(call)
    local dt = cushim.now() - call.state.t0
    if dt >= limit_ns then
      cushim.log("warn", string.format("slow call: %s took %.3f ms (%s), thread %d, call %d",
                 call.name, dt / 1e6, tostring(call.result), call.tid, call.seq))
    end
  end,
}
