#!/usr/bin/env bash
# launcher_test.sh SRC_DIR BUILD_DIR VECADD PROJECT_VERSION [--with-faultinject]
# The source launcher (tools/cushim) against a build tree: help and usage errors (exit 2), exit status and
# death by signal of the program pass through (exec), relative paths made absolute against the launcher's
# directory, CUSHIM_PLUGINS composed and escaped from --plugin/--fault in order, --log validated,
# 'apis' globbing, 'version' against the headers, 'plugins' against the build's plugin directory, --fake
# in preload and drop-in mode, and (with faultinject built) a --fault that makes vecadd fail. Values are data,
# never syntax (issue 42): control characters refused, no globbing, a program named '-c', escapes at spec ends,
# '--x value', separators of the dynamic linker's lists. The compiled launcher (issue 41): --help of every
# subcommand, and 'cushim run' flags derived from the options the shipped plugins declare (--PLUGIN-OPTION=VALUE,
# checked by the declared type), for options the bash launcher re-declared, for ones it never had, and for a
# plugin built here that the launcher has never heard of.
# shellcheck disable=SC2015,SC2016 # ok() never fails; the single-quoted scripts expand in the child
set -u
src=$1 build=$2 vecadd=$3 version=$4 with_fault=${5:-}
cushim=$src/tools/cushim
export CUSHIM_BUILD_DIR=$build
unset CUSHIM_LIB CUSHIM_PLUGINS CUSHIM_COUNTS CUSHIM_LOG CUSHIM_LOG_FILE CUSHIM_REAL_LIBCUDA LD_PRELOAD
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }

# run_cap NAME CMD...: runs CMD, stdout to $t/NAME.out, stderr to $t/NAME.err, status in $rc.
run_cap() { local n=$1; shift; "$@" >"$t/$n.out" 2>"$t/$n.err"; rc=$?; }

# --- help and usage errors --------------------------------------------------------------------------
for c in "" run plugins apis version where stats usage; do
  if [ -z "$c" ]; then run_cap help "$cushim" --help; else run_cap help "$cushim" "$c" --help; fi
  if [ $rc -eq 0 ] && grep -q "^usage: cushim ${c:-COMMAND}" "$t/help.out" && [ ! -s "$t/help.err" ]; then
    ok "cushim $c --help"
  else fail "cushim $c --help: rc $rc, $(head -c 200 "$t/help.out" "$t/help.err")"; fi
  if [ -n "$c" ]; then
    run_cap help2 "$cushim" help "$c"
    cmp -s "$t/help.out" "$t/help2.out" || fail "cushim help $c differs from cushim $c --help"
  fi
done
bad_usage() {   # bad_usage EXPECTED_USAGE_LINE ARGS...: exit 2, usage on stderr, nothing on stdout
  local u=$1; shift
  run_cap bad "$cushim" "$@"
  if [ $rc -eq 2 ] && [ ! -s "$t/bad.out" ] && grep -q "^usage: cushim $u" "$t/bad.err"; then
    ok "usage error: cushim $*"
  else fail "cushim $*: expected exit 2 and usage on stderr, got rc $rc: $(cat "$t/bad.out" "$t/bad.err" | head -c 300)"; fi
}
bad_usage COMMAND
bad_usage COMMAND frobnicate
bad_usage run run --bogus -- true
bad_usage run run --counts -- true
bad_usage run run --log=loud -- true
bad_usage run run --log= -- true
bad_usage run run --fault= -- true
bad_usage run run --plugin= -- true
bad_usage run run '--plugin=a;b' -- true
bad_usage run run --fake
bad_usage run run --libs= -- true
bad_usage run run --libs=driver,opencl -- true
bad_usage apis apis -x
bad_usage apis apis 'cu*' 'cuda*'
bad_usage version version extra
bad_usage where where --all
bad_usage plugins plugins --bogus
bad_usage stats stats
bad_usage stats stats --format=xml t.json
bad_usage usage usage --bogus
bad_usage run run --trace-bogus=1 -- true

# --- exec: exit status, death by signal, same process ----------------------------------------------
run_cap exit "$cushim" run --fake -- sh -c 'exit 7'
[ $rc -eq 7 ] && ok "exit status 7 passes through" || fail "exit status: expected 7, got $rc"
# A parent that can tell a signal death from an exit status: Python's negative returncode.
sig=$(python3 - "$cushim" <<'EOF'
import subprocess, sys
r = subprocess.run([sys.argv[1], "run", "--fake", "--", "sh", "-c", "kill -TERM $$"], stderr=subprocess.DEVNULL)
e = subprocess.run([sys.argv[1], "run", "--", "sh", "-c", "exit 143"], stderr=subprocess.DEVNULL)
# The program is the launcher's own process (exec): the pid Python started is the one the program reports.
p = subprocess.Popen([sys.argv[1], "run", "--", "sh", "-c", "echo $$"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
out = p.communicate()[0].decode().strip()
print(r.returncode, e.returncode, "same" if out == str(p.pid) else "other:%s/%s" % (out, p.pid))
EOF
)
[ "$sig" = "-15 143 same" ] && ok "SIGTERM death, exit 143 and the pid pass through (exec)" \
  || fail "signal/exec: expected '-15 143 same', got '$sig'"

# --- relative paths, --counts=-, --log ---------------------------------------------------------------
mkdir -p "$t/cwd"
( cd "$t/cwd" && "$cushim" run --fake --counts=rel.tsv --log-file=log.txt --log=info \
    -- sh -c 'cd / && exec "$0" 1000' "$vecadd" ) >"$t/rel.out" 2>"$t/rel.err"
rc=$?
if [ $rc -eq 0 ] && grep -q "^cuLaunchKernel	1$" "$t/cwd/rel.tsv" 2>/dev/null && [ ! -e /rel.tsv ]; then
  ok "--counts=rel.tsv lands in the launcher's directory though the program changed its own"
else fail "--counts=rel.tsv: rc $rc, $(ls "$t/cwd"), $(head -c 300 "$t/rel.err")"; fi
[ -f "$t/cwd/log.txt" ] && ok "--log-file=log.txt lands in the launcher's directory" || fail "--log-file=log.txt not in $t/cwd"
( cd "$t/cwd" && "$cushim" run --counts=- --log-file=sub/l --real-libcuda=../x/libcuda.so.1 --log=off \
    -- sh -c 'printf "%s|%s|%s|%s\n" "$CUSHIM_COUNTS" "$CUSHIM_LOG_FILE" "$CUSHIM_REAL_LIBCUDA" "$CUSHIM_LOG"' ) \
  >"$t/env.out" 2>/dev/null
[ "$(cat "$t/env.out")" = "-|$t/cwd/sub/l|$t/cwd/../x/libcuda.so.1|off" ] \
  && ok "--counts=- passed as '-', relative --log-file/--real-libcuda made absolute" \
  || fail "environment: got '$(cat "$t/env.out")'"
# the names --libs knows come from the build's apis.tsv (a library added by a descriptor needs no launcher change)
# (the 13.0 tree's: cublas, cublaslt, driver, nccl, nvml, runtime; a tree of driver and runtime alone: those two)
libs=$(grep -v '^#' "$build/tools/apis.tsv" | awk -F'\t' '$1 != "id" { print $6 }' | sort -u | paste -sd, - | sed 's/,/, /g')
case $libs in "driver, runtime"|*nvml*) ;; *) fail "the build's libraries: '$libs'" ;; esac
"$cushim" run --libs=driver,opencl -- true 2>"$t/libs.err" >/dev/null
grep -q "'opencl' is not one of $libs\$" "$t/libs.err" \
  && ok "--libs lists the build's libraries ($libs)" || fail "--libs error: $(cat "$t/libs.err")"
# --libs becomes CUSHIM_LIBS (universal shim: nccl where the build has it)
want=driver,runtime
case $libs in *nccl*) want=driver,runtime,nccl ;; esac
"$cushim" run --libs=$want -- sh -c 'printf "%s\n" "$CUSHIM_LIBS"' >"$t/libs.out" 2>/dev/null
[ "$(cat "$t/libs.out")" = "$want" ] && ok "--libs=$want sets CUSHIM_LIBS" \
  || fail "--libs: got '$(cat "$t/libs.out")'"
# ... and '-' reaches the program's stderr (the runtime reads it as the stderr the process started with).
"$cushim" run --fake --counts=- -- "$vecadd" 1000 >"$t/dash.out" 2>"$t/dash.err"
rc=$?
if [ $rc -eq 0 ] && grep -q '^cuLaunchKernel	1$' "$t/dash.err" && [ ! -e ./- ] && [ ! -e "$t/cwd/-" ]; then
  ok "--counts=-: the counts on the program's stderr"
else fail "--counts=-: rc $rc, stderr: $(head -c 300 "$t/dash.err")"; fi
for l in debug info warn error off INFO:info Warning:warn; do
  v=$("$cushim" run --log="${l%%:*}" -- printenv CUSHIM_LOG 2>/dev/null)
  [ "$v" = "${l#*:}" ] || fail "--log=${l%%:*} gave CUSHIM_LOG='$v'"
done

# --- CUSHIM_PLUGINS composition -------------------------------------------------------------------
# In option order after the environment's; all --fault rules in one faultinject spec at the first --fault's
# place, with ',' ';' '\' escaped; a relative plugin path made absolute, '?' and options kept verbatim.
( cd "$t/cwd" && CUSHIM_PLUGINS='pre:x=1' "$cushim" run \
    '--plugin=./my.so:a=b\,c,p=x:y=z' \
    --fault='cuMemAlloc:CUDA_ERROR_OUT_OF_MEMORY' \
    '--plugin=?name:k=v' \
    '--fault=glob:cuMem*,cuInit;x\y:CUDA_ERROR_INVALID_VALUE:after=2' \
    '--plugin=?../up/p.so' \
    -- printenv CUSHIM_PLUGINS ) >"$t/plugins.out" 2>"$t/plugins.err"
rc=$?
want="pre:x=1;$t/cwd/my.so:a=b\\,c,p=x:y=z;faultinject:rule=cuMemAlloc:CUDA_ERROR_OUT_OF_MEMORY,rule=glob:cuMem*\\,cuInit\\;x\\\\y:CUDA_ERROR_INVALID_VALUE:after=2;?name:k=v;?$t/cwd/../up/p.so"
if [ "$with_fault" = --with-faultinject ]; then
  [ "$(cat "$t/plugins.out")" = "$want" ] && ok "CUSHIM_PLUGINS composed in order and escaped" \
    || fail "CUSHIM_PLUGINS: got  '$(cat "$t/plugins.out")'"$'\n'"      want '$want'"
else
  # Without faultinject built, --fault is refused before the program runs.
  [ $rc -eq 2 ] && grep -q 'needs the shipped faultinject plugin' "$t/plugins.err" \
    && ok "--fault without faultinject: refused" || fail "--fault without faultinject: rc $rc $(cat "$t/plugins.err")"
  v=$( cd "$t/cwd" && CUSHIM_PLUGINS='pre:x=1' "$cushim" run '--plugin=./my.so:a=b\,c,p=x:y=z' '--plugin=?name:k=v' \
       '--plugin=?../up/p.so' -- printenv CUSHIM_PLUGINS 2>/dev/null)
  [ "$v" = "pre:x=1;$t/cwd/my.so:a=b\\,c,p=x:y=z;?name:k=v;?$t/cwd/../up/p.so" ] \
    && ok "CUSHIM_PLUGINS composed in order" || fail "CUSHIM_PLUGINS: got '$v'"
fi
# A directory holding the syntax's characters: escaped in the path (the shim unescapes paths too).
mkdir -p "$t/d:1;2,3\\4"
v=$(cd "$t/d:1;2,3\\4" && "$cushim" run --plugin=p.so/../q.so:k=v -- printenv CUSHIM_PLUGINS 2>/dev/null)
[ "$v" = "$t/d\\:1\\;2\\,3\\\\4/p.so/../q.so:k=v" ] && ok "a relative plugin path under a directory with : ; , \\ is escaped" \
  || fail "escaped directory: got '$v'"
run_cap noname "$cushim" run --plugin=no-such-plugin:x=1 -- true
[ $rc -eq 2 ] && grep -q "no shipped plugin 'no-such-plugin'" "$t/noname.err" && ok "an unknown shipped name is refused" \
  || fail "--plugin=no-such-plugin: rc $rc $(cat "$t/noname.err")"
v=$(CUSHIM_PLUGINS='a;' "$cushim" run --plugin=/p/b.so -- printenv CUSHIM_PLUGINS 2>/dev/null)
[ "$v" = "a;/p/b.so" ] && ok "appended to an environment value ending in ';'" || fail "CUSHIM_PLUGINS 'a;' + b gave '$v'"
v=$("$cushim" run --plugin='/p/x.so:v=a\;b' -- printenv CUSHIM_PLUGINS 2>/dev/null)
[ "$v" = '/p/x.so:v=a\;b' ] && ok "an escaped ';' stays inside one --plugin" || fail "--plugin='/p/x.so:v=a\\;b' gave '$v'"
v=$(CUSHIM_PLUGINS='keep' "$cushim" run -- printenv CUSHIM_PLUGINS 2>/dev/null)
[ "$v" = keep ] && ok "no --plugin: the environment's CUSHIM_PLUGINS untouched" || fail "CUSHIM_PLUGINS became '$v'"

# --- values are data, never syntax (issue 42) ---------------------------------------------------------
# refused WHAT ARGS...: cushim ARGS exits 2 before running anything, the first line of its stderr contains WHAT.
refused() {
  local w=$1; shift
  run_cap ref "$cushim" "$@"
  [ $rc -eq 2 ] && [ ! -s "$t/ref.out" ] && head -n 1 "$t/ref.err" | grep -qF -- "$w" && return 0
  fail "cushim $(printf '%q ' "$@"): expected exit 2 and '$w', got rc $rc: $(head -c 300 "$t/ref.out" "$t/ref.err")"
  return 1
}
# A newline ends a CUSHIM_PLUGINS spec (--trace=$'x.json\nfaultinject:...' loaded faultinject); no option value
# may hold a control character, whichever variable it reaches.
n=0
inj=$'\nfaultinject:rule=cuInit:CUDA_ERROR_UNKNOWN'
for o in "--trace=x.json$inj" "--mem-budget=b$inj" "--mem-limit=1GiB$inj" "--sm-limit=30$inj" \
         "--lua=p.lua:k=v$inj" "--plugin=/p/a.so$inj" "--fault=cuInit:CUDA_ERROR_UNKNOWN$inj" \
         "--trace-filter=cuInit$inj" "--trace-toggle=USR1"$'\t' "--trace-capture=nvtx:a"$'\r' \
         "--trace-buffer=1MiB"$'\x01' "--counts=c$inj" "--log-file=l"$'\r' "--real-libcuda=/x/libcuda.so.1$inj" \
         "--libs=driver"$'\n'"runtime"; do
  refused 'an option value cannot hold a control character' run "$o" -- printenv CUSHIM_PLUGINS && n=$((n + 1))
done
grep -qF "'--libs=driver\\x0aruntime'" "$t/ref.err" || fail "the refusal shows the value as one line: $(cat "$t/ref.err")"
[ $n = 15 ] && ok "a control character in any of $n option values: refused, shown as \\xNN"
# ... nor through the working directory that a relative path is made absolute against.
mkdir "$t/nl$inj"
n=0
for o in --trace=t.json --plugin=./p.so --lua=p.lua; do
  ( cd "$t/nl$inj" && refused "has a control character in its name" run "$o" -- printenv CUSHIM_PLUGINS ) \
    && n=$((n + 1)) || failures=$((failures + 1))
done
[ $n = 3 ] && ok "a relative --trace/--plugin/--lua path under a directory named with a newline: refused"
v=$(cd "$t/nl$inj" && "$cushim" run --plugin=/p/a.so -- printenv CUSHIM_PLUGINS 2>/dev/null)
[ "$v" = /p/a.so ] && ok "... an absolute one is taken" || fail "absolute --plugin from $t/nl...: got '$v'"
# ',' ';' '\' are escaped where a path or value enters a spec, and so are trailing spaces (the shim trims a spec).
[ -f "$build/plugins/trace.so" ] && [ -f "$build/plugins/memlimit.so" ] && {
  v=$(cd "$t/cwd" && "$cushim" run '--trace=a,b;c\d.json' '--mem-budget=b ' -- printenv CUSHIM_PLUGINS 2>/dev/null)
  [ "$v" = "trace:file=$t/cwd/a\\,b\\;c\\\\d.json;memlimit:budget=b\\ " ] \
    && ok "--trace=a,b;c\\d.json escaped, a trailing space kept" || fail "escaped values: got '$v'"
}
# Unquoted expansions globbed: --lua=p.lua:apis=cu* reached the policy as apis=cuEVIL, --libs=driver,runtim?
# passed as 'runtime', with such files in the current directory.
mkdir -p "$t/glob" && touch "$t/glob/apis=cuEVIL" "$t/glob/runtime"
[ -f "$build/plugins/lua.so" ] && {
  v=$(cd "$t/glob" && "$cushim" run '--lua=p.lua:apis=cu*,report=r;1.txt' -- printenv CUSHIM_PLUGINS 2>/dev/null)
  [ "$v" = "lua:script=$t/glob/p.lua,opt=apis=cu*,report=$t/glob/r\\;1.txt" ] \
    && ok "--lua=p.lua:apis=cu* reaches the policy as written" || fail "--lua globbing: got '$v'"
}
( cd "$t/glob" && refused "'runtim?' is not one of" run '--libs=driver,runtim?' -- printenv CUSHIM_LIBS ) \
  && ok "--libs=driver,runtim? is no library name" || failures=$((failures + 1))
# A program named '-c' is a program: 'exec -c' ran it unshimmed with an empty environment.
mkdir -p "$t/bin" && printf '#!/bin/sh\nprintf "%%s|%%s\\n" "$LD_PRELOAD" "$1"\n' >"$t/bin/-c" && chmod +x "$t/bin/-c"
v=$(PATH="$t/bin:$PATH" "$cushim" run -- -c arg 2>&1)
[ "$v" = "$build/runtime/libcushim.so|arg" ] && ok "cushim run -- -c arg runs the program '-c' under the shim" \
  || fail "cushim run -- -c arg: got '$v'"
# A lone '\' at the end of a spec escaped the ';' that joins the next one (which was then never loaded).
refused "a lone '\\' at the end" run "--plugin=/p/a.so:v=x\\" --plugin=/p/b.so -- printenv CUSHIM_PLUGINS \
  && ok "--plugin ending in a lone '\\': refused"
v=$(CUSHIM_PLUGINS="/p/a.so:v=x\\" "$cushim" run --plugin=/p/b.so -- printenv CUSHIM_PLUGINS 2>/dev/null)
w=$(CUSHIM_PLUGINS='/p/a.so:v=x\;' "$cushim" run --plugin=/p/b.so -- printenv CUSHIM_PLUGINS 2>/dev/null)
[ "$v" = '/p/a.so:v=x\\;/p/b.so' ] && [ "$w" = '/p/a.so:v=x\;;/p/b.so' ] \
  && ok "appended after an environment value ending in '\\' or in an escaped ';'" || fail "appending: got '$v', '$w'"
# HAMi's CUDA_DEVICE_SM_LIMIT loads smlimit unless CUSHIM_PLUGINS loads it: by its specs, not by a substring
# (a trace file /x/smlimit.json turned the limit off), and by the variable's name, not by a line of 'env'.
[ -f "$build/plugins/smlimit.so" ] && {
  v=$(CUDA_DEVICE_SM_LIMIT=50 CUSHIM_PLUGINS='?/p/t.so:file=/x/smlimit.json' "$cushim" run -- printenv CUSHIM_PLUGINS 2>/dev/null)
  w=$(CUDA_DEVICE_SM_LIMIT=50 CUSHIM_PLUGINS=' ? /p/smlimit.so :limit=5' "$cushim" run -- printenv CUSHIM_PLUGINS 2>/dev/null)
  x=$(FOO=$'x\nCUDA_DEVICE_SM_LIMIT=5' "$cushim" run -- printenv CUSHIM_PLUGINS 2>/dev/null)
  [ "$v" = '?/p/t.so:file=/x/smlimit.json;smlimit' ] && [ "$w" = ' ? /p/smlimit.so :limit=5' ] && [ -z "$x" ] \
    && ok "CUDA_DEVICE_SM_LIMIT: smlimit added unless a spec loads it; a value's line is no variable" \
    || fail "CUDA_DEVICE_SM_LIMIT: got '$v', '$w', '$x'"
}
# '--x value' for an option that takes '--x=value': '--trace out.json CMD' ran out.json.
refused "the trace file is given as --trace=out.json" run --trace out.json true && ok "--trace out.json: refused"
n=0
for o in --lua --trace-toggle --trace-capture --trace-capture-end --trace-delay --trace-duration \
         --trace-gpu-detach --trace-buffer; do
  refused "$o needs a value: $o=..." run "$o" x -- true && n=$((n + 1))
done
[ $n = 8 ] && ok "$n options given a value without '=': 'needs a value'"
# Paths in the dynamic linker's lists, which have no escapes: a space or ':' split the shim's path in two.
mkdir -p "$t/a b" "$t/c:d/runtime"
ln -s "$build/runtime/libcushim.so" "$t/a b/libcushim.so"
ln -s "$build/runtime/libcushim.so" "$t/c:d/runtime/libcushim.so" && ln -s "$build/dropin" "$t/c:d/dropin"
CUSHIM_LIB="$t/a b/libcushim.so" refused "cannot go into LD_PRELOAD" run -- printenv LD_PRELOAD \
  && ok "a shim path with a ' ' (LD_PRELOAD): refused"
CUSHIM_LIB="$t/c:d/runtime/libcushim.so" refused "cannot go into LD_LIBRARY_PATH" run --dropin -- printenv LD_LIBRARY_PATH \
  && ok "a drop-in directory with a ':' (LD_LIBRARY_PATH): refused"

# --- flags derived from the plugins' declared options (issue 41) ----------------------------------------
# 'cushim run --help' lists a flag for every option every shipped plugin declares ('cushim plugins' lists them).
run_cap runhelp "$cushim" run --help
"$cushim" plugins 2>/dev/null | awk '/^[a-z0-9_-]+ / { p = $1 } /^    [a-z0-9_-]+=/ { sub(/^    /, ""); sub(/=.*/, ""); gsub(/_/, "-"); print "--" p "-" $0 }' \
  >"$t/declared"
n=0
while IFS= read -r f; do
  n=$((n + 1))
  grep -q -- "^  $f[=[]" "$t/runhelp.out" || fail "run --help does not list $f"
done <"$t/declared"
[ -s "$t/declared" ] || [ ! -f "$build/plugins/trace.so" ] || fail "no declared option read from cushim plugins"
ok "run --help lists the $n flags of the shipped plugins' declared options"
if [ -f "$build/plugins/trace.so" ]; then
  # options the bash launcher declared again itself: now the trace plugin's own, '-' and '_' alike
  v=$("$cushim" run --trace-buffer=8MiB --trace-capture=cudaProfilerApi --trace-capture_end=stop --trace-gpu \
      -- printenv CUSHIM_PLUGINS 2>/dev/null)
  [ "$v" = "trace:buffer=8MiB,capture=cudaProfilerApi,capture_end=stop,gpu=1" ] && ok "--trace-buffer, --trace-capture_end, --trace-gpu: derived" \
    || fail "derived trace flags gave '$v'"
  refused "--trace-buffer: 'lots' is not a size" run --trace-buffer=lots -- true && ok "--trace-buffer=lots: refused by its declared type"
  refused "--trace-gpu: 'maybe' is not a bool" run --trace-gpu=maybe -- true && ok "--trace-gpu=maybe: refused by its declared type"
  refused "the trace plugin declares no option 'bogus'" run --trace-bogus=1 -- true && ok "--trace-bogus: not declared, refused"
  # options the bash launcher never had a flag for: --trace-kernel-names, --trace-summary, --trace-summary-file (a path)
  v=$(cd "$t/cwd" && "$cushim" run --trace-kernel-names=off --trace-summary-file=sum.txt -- printenv CUSHIM_PLUGINS 2>&1)
  [ "$v" = "trace:kernel_names=off,summary_file=$t/cwd/sum.txt" ] && ok "--trace-kernel-names, --trace-summary-file: derived" \
    || fail "never-declared trace flags gave '$v'"
  run_cap sum "$cushim" run --fake --trace="$t/s1.json" -- "$vecadd" 1000
  run_cap nosum "$cushim" run --fake --trace="$t/s0.json" --trace-summary=off -- "$vecadd" 1000
  if [ $rc -eq 0 ] && grep -q 'cuda_api_sum' "$t/sum.err" && ! grep -q 'cuda_api_sum' "$t/nosum.err" && [ -s "$t/s0.json" ]; then
    ok "--trace-summary=off: vecadd traced, no table at exit"
  else fail "--trace-summary=off: rc $rc, $(head -c 300 "$t/nosum.err")"; fi
fi
if [ -f "$build/plugins/memlimit.so" ] && [ -f "$build/plugins/smlimit.so" ]; then
  v=$("$cushim" run --mem-limit=1GiB --memlimit-managed=count --sm-limit=30 --smlimit-window-ms=50 -- printenv CUSHIM_PLUGINS 2>&1)
  [ "$v" = "smlimit:limit=30,window_ms=50;memlimit:limit=1GiB,managed=count" ] \
    && ok "--memlimit-managed, --smlimit-window-ms join --mem-limit's and --sm-limit's specs" || fail "memlimit/smlimit flags gave '$v'"
  # oversubscription and the wait policy (issue 44): the flag alone, with a ratio, and --mem-wait=SEC
  v=$("$cushim" run --mem-limit=1GiB --mem-oversubscribe --mem-wait=30 -- printenv CUSHIM_PLUGINS 2>&1)
  [ "$v" = "memlimit:limit=1GiB,oversubscribe=true,on_full=wait:30" ] \
    && ok "--mem-oversubscribe, --mem-wait=SEC" || fail "--mem-oversubscribe/--mem-wait gave '$v'"
  v=$("$cushim" run --mem-oversubscribe=1.5 -- printenv CUSHIM_PLUGINS 2>&1)
  [ "$v" = "memlimit:oversubscribe=1.5" ] && ok "--mem-oversubscribe=RATIO" || fail "--mem-oversubscribe=1.5 gave '$v'"
  run_cap memwait "$cushim" run --mem-wait -- true
  [ "$rc" = 2 ] && ok "--mem-wait without seconds is a usage error" || fail "--mem-wait alone: status $rc"
  refused "--smlimit-window-ms: '5x' is not an int" run --sm-limit=30 --smlimit-window-ms=5x -- true \
    && ok "--smlimit-window-ms=5x: refused by its declared type"
fi
# A plugin the launcher has never heard of, built here: its options are flags as soon as it is shipped.
cc=$(command -v cc || command -v gcc || true)
if [ -n "$cc" ]; then
  mkdir -p "$t/tree/runtime" "$t/tree/plugins"
  ln -s "$build/runtime/libcushim.so" "$t/tree/runtime/libcushim.so"
  cat >"$t/acme.c" <<'EOF'
#include <cushim/cushim.h>
static int acme_init(const cushim_host *host, cushim_plugin *self) { (void)host; (void)self; return 0; }
static const cushim_option acme_options[] = {
    {"level", CUSHIM_OPT_INT, "1", "how hard"},
    {"out_dir", CUSHIM_OPT_STRING, NULL, "where"},
    {"strict", CUSHIM_OPT_BOOL, "false", "refuse more"},
    {"tag", CUSHIM_OPT_STRING | CUSHIM_OPT_REPEAT, NULL, "a tag"},
    {NULL, 0, NULL, NULL},
};
static const cushim_plugin_def acme_def = {
    .size = sizeof(cushim_plugin_def), .abi_version = CUSHIM_ABI_VERSION, .name = "acme", .version = "1",
    .description = "a plugin the launcher never heard of", .options = acme_options, .init = acme_init,
};
CUSHIM_PLUGIN(acme_def)
EOF
  if "$cc" -shared -fPIC -I"$src/sdk/include" -o "$t/tree/plugins/acme.so" "$t/acme.c" 2>"$t/cc.err"; then
    v=$(CUSHIM_LIB="$t/tree/runtime/libcushim.so" "$cushim" run --acme-level=3 --acme-out-dir='a,b' --acme-strict \
        --acme-tag=x --acme_tag=y -- printenv CUSHIM_PLUGINS 2>&1)
    [ "$v" = 'acme:level=3,out_dir=a\,b,strict=1,tag=x,tag=y' ] && ok "a new plugin's options are flags with no launcher change" \
      || fail "acme flags gave '$v'"
    CUSHIM_LIB="$t/tree/runtime/libcushim.so" refused "--acme-level: 'high' is not an int" run --acme-level=high -- true \
      && ok "... checked by their declared types"
    CUSHIM_LIB="$t/tree/runtime/libcushim.so" run_cap acmehelp "$cushim" run --help
    grep -q -- '^  --acme-out-dir=STRING' "$t/acmehelp.out" && ok "... and listed by run --help" \
      || fail "run --help: no --acme-out-dir: $(grep -A3 '^acme' "$t/acmehelp.out")"
  else fail "building a plugin with $cc: $(head -c 300 "$t/cc.err")"; fi
fi

# --- apis, version, where, plugins ---------------------------------------------------------------------
run_cap apis "$cushim" apis 'cuMemAlloc*'
if [ $rc -eq 0 ] && grep -q '	cuMemAlloc_v2	' "$t/apis.out" && grep -q '	cuMemAllocManaged	' "$t/apis.out" \
   && [ "$(tail -n +2 "$t/apis.out" | cut -f2 | grep -vc '^cuMemAlloc')" = 0 ]; then
  ok "apis 'cuMemAlloc*' ($(($(wc -l < "$t/apis.out") - 1)) APIs)"
else fail "apis 'cuMemAlloc*': rc $rc: $(head -c 300 "$t/apis.out")"; fi
run_cap apis "$cushim" apis 'cuMemAlloc.*'
[ $rc -eq 1 ] && [ "$(wc -l < "$t/apis.out")" = 1 ] && ok "apis takes a glob, not a regex (exit 1 when none matches)" \
  || fail "apis 'cuMemAlloc.*': rc $rc, $(wc -l < "$t/apis.out") lines"
run_cap apis "$cushim" apis
[ "$(wc -l < "$t/apis.out")" = "$(grep -vc '^#' "$build/tools/apis.tsv")" ] && ok "apis lists every API" \
  || fail "apis: $(wc -l < "$t/apis.out") lines"

cuda=$(sed -n 's/^# DO NOT EDIT: generated by cushim-gen [^ ]* from CUDA \([0-9.]*\) headers.*/\1/p' "$build/tools/apis.tsv")
maj=$(sed -n 's/^#define CUSHIM_ABI_MAJOR \([0-9]*\)$/\1/p' "$src/sdk/include/cushim/cushim.h")
min=$(sed -n 's/^#define CUSHIM_ABI_MINOR \([0-9]*\)$/\1/p' "$src/sdk/include/cushim/cushim.h")
run_cap ver "$cushim" version
[ "$(cat "$t/ver.out")" = "cushim $version, CUDA $cuda headers, SDK ABI $maj.$min" ] && ok "version: $(cat "$t/ver.out")" \
  || fail "version: got '$(cat "$t/ver.out")', want 'cushim $version, CUDA $cuda headers, SDK ABI $maj.$min'"

# ... and equal to what the shim itself says (host->version() through cushim_host_get, from a preloaded run).
shimver=$("$cushim" run -- python3 - $(((maj << 16) | min)) 2>/dev/null <<'EOF'
import ctypes, sys
get = ctypes.CDLL(None).cushim_host_get
get.restype, get.argtypes = ctypes.c_void_p, [ctypes.c_uint32]
class Host(ctypes.Structure):   # 6 uint32 (size .. cuda_version), then the 'version' slot
    _fields_ = [("head", ctypes.c_uint32 * 6), ("version", ctypes.CFUNCTYPE(ctypes.c_char_p))]
print(Host.from_address(get(int(sys.argv[1]))).version().decode())
EOF
)
[ "$shimver" = "$(cat "$t/ver.out")" ] && ok "version equals the shim's host->version()" \
  || fail "version: the shim says '$shimver', cushim version '$(cat "$t/ver.out")'"

run_cap where "$cushim" where
plugins=$build/plugins
[ -d "$plugins" ] || plugins="?"
for k in "shim	$build/runtime/libcushim.so" "dropin	$build/dropin" "fake	$build/tests/fake" \
         "plugins	$plugins" "info	$build/tools/cushim-info" "apis	$build/tools/apis.tsv"; do
  grep -qxF "$k" "$t/where.out" || fail "where: no line '$k' in: $(cat "$t/where.out")"
done

run_cap plugins "$cushim" plugins
n=0
for f in "$build"/plugins/*.so; do
  [ -e "$f" ] || continue
  n=$((n + 1))
  name=$(basename "$f" .so)
  grep -q "^$name " "$t/plugins.out" || fail "plugins: $name not listed: $(head -c 300 "$t/plugins.out")"
  grep -q "^  file: $f$" "$t/plugins.out" || fail "plugins: no file line for $f"
done
if [ $rc -eq 0 ] && { [ $n -gt 0 ] || grep -qx 'no shipped plugins found' "$t/plugins.out"; }; then
  ok "plugins: $n shipped plugin(s) described"
else fail "plugins: rc $rc, $(head -c 300 "$t/plugins.out" "$t/plugins.err")"; fi
run_cap plugins "$cushim" plugins no-such-plugin
[ $rc -eq 1 ] && grep -q "no shipped plugin named 'no-such-plugin'" "$t/plugins.err" && ok "plugins: an unknown name fails" \
  || fail "plugins no-such-plugin: rc $rc"

# --- the fake driver in both modes ----------------------------------------------------------------------
for mode in "" --dropin; do
  rm -f "$t/c.tsv"
  run_cap fake "$cushim" run --fake $mode --counts="$t/c.tsv" -- "$vecadd" 1000
  if [ $rc -eq 0 ] && grep -q "^cuLaunchKernel	1$" "$t/c.tsv" 2>/dev/null; then ok "run --fake $mode: vecadd counted"
  else fail "run --fake $mode: rc $rc, $(head -c 300 "$t/fake.err")"; fi
done

# --- --fault through the shipped faultinject plugin -------------------------------------------------------
if [ "$with_fault" = --with-faultinject ]; then
  for mode in "" --dropin; do
    run_cap fault "$cushim" run --fake $mode --fault='cuMemAlloc:CUDA_ERROR_OUT_OF_MEMORY' -- "$vecadd" 1000
    if [ $rc -ne 0 ] && grep -q 'cuMemAlloc.*CUDA_ERROR_OUT_OF_MEMORY' "$t/fault.err"; then
      ok "--fault $mode: vecadd's cuMemAlloc failed with CUDA_ERROR_OUT_OF_MEMORY"
    else fail "--fault $mode: rc $rc, $(head -c 300 "$t/fault.out" "$t/fault.err")"; fi
  done
fi

[ $failures -eq 0 ] && { echo "launcher_test: all checks passed"; exit 0; }
echo "launcher_test: $failures check(s) failed"
exit 1
