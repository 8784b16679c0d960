-- sandbox.lua - what a policy can reach (run_lua.sh 'sandbox'); 'allow' says what the options enabled.
local allow = cushim.options.allow or ""
local function has(w) return allow:find(w, 1, true) ~= nil end
local function say(name, ok) cushim.report(string.format("sandbox %s %s", name, ok and "ok" or "FAIL")) end
say("os", (os ~= nil) == has("os"))
say("io", (io ~= nil) == has("io") and (dofile ~= nil) == has("io") and (loadfile ~= nil) == has("io"))
say("debug", (debug ~= nil) == has("debug"))
say("require", (require ~= nil) == has("require"))
if require then say("cmodules", (package.cpath == "" and package.searchers[3] == nil) == not has("cmodules")) end
local bin = string.dump(function() return 1 end)
local f, err = load(bin)
say("bytecode", (f ~= nil) == has("bytecode"))
say("text", load("return 6 * 7")() == 42)
say("print", pcall(print, "printed from the policy"))
cushim.before.cuInit = function(call) end
