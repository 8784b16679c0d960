#!/bin/sh
# run_plugin.sh MODE SHIM DROPIN_DIR FAKE_DIR PROBE BROKEN OUT_DIR PROGRAM
# Runs PROGRAM with plugins from CUSHIM_PLUGINS and checks the outcome. PROBE is the probe plugin
# (e2e_plugin_probe.c), BROKEN a build of it for another SDK ABI major (it never loads). E2E_SAN_PRELOAD
# (environment) is what must precede the shim in LD_PRELOAD under a sanitizer build ("lib.so:"), if anything.
#   load         preloaded; options of every type reach the plugin; its hooks saw exactly what the fake
#                driver received; fork_child ran in a forked child, which reports its own calls
#   signal_init  the plugin's init calls CUDA, and so does a signal handler raised in it (same thread,
#                initialisation in progress): no hang, both calls reach the driver
#   dropin       the same through the drop-in libcuda.so.1 (LD_LIBRARY_PATH), no LD_PRELOAD
#   by_name      CUSHIM_PLUGINS=probe (a NAME): found beside an installed-layout libcushim.so
#                (P/lib/cushim/plugins) and beside an installed drop-in (P/lib/cushim/dropin -> ../plugins)
#   ctor         the first CUDA call and dlsym come from another library's constructor: the plugin saw them
#   fail_closed  a required plugin fails: one error line, every call fails, the line repeated at the first
#                call; also with CUSHIM_LOG=off
#   optional     '?' before the broken plugin: a warning, and the other plugin and the program work
#   fork_init    fork() while another thread initialises the shim (a slow plugin init): the child finishes
set -u
mode=$1 shim=$2 dropin=$3 fake=$4 probe=$5 broken=$6 out=$7 prog=$8
san=${E2E_SAN_PRELOAD-}
d=$out/plugin.$mode
rm -rf "$d"
mkdir -p "$d"
status=0
fail() { echo "run_plugin.sh $mode: FAIL: $*"; status=1; }

# The probe's report: every API its hooks saw equals what the fake received.
check_report() {   # check_report FILE [API the plugin's own init called: it is not seen]
    [ -f "$1" ] || { fail "no report $1 (the plugin did not flush)"; return; }
    grep '^seen ' "$1" | awk '{print $2, $3}' | grep -v '^cuda' | sort > "$1.seen"
    grep '^fake ' "$1" | awk -v skip="${2-}" '$2 != skip {print $2, $3}' | sort > "$1.fake"
    [ -s "$1.fake" ] || fail "$1: the fake received nothing"
    diff -u "$1.fake" "$1.seen" || fail "$1: the hooks did not see what the fake received (- fake, + seen)"
}

opts='count=0x10,on=off,ratio=2.5,limit=1.5G,text=a\,b\;c\\d:e\=f,tag=x,tag=y'
case $mode in
load|signal_init)
    extra=""
    [ "$mode" = signal_init ] && extra=",cuda=1"
    env LD_PRELOAD="$san$shim" LD_LIBRARY_PATH="$fake" E2E_EXPECT_SHIM=1 \
        CUSHIM_PLUGINS="$probe:out=$d/probe,$opts$extra" "$prog" > "$d/stdout" 2> "$d/stderr" \
        || { cat "$d/stdout" "$d/stderr"; fail "the program failed"; }
    if [ "$mode" = signal_init ]; then
        # Calls made during initialisation on the initialising thread go straight through: the driver
        # received them, no hook saw them.
        check_report "$d/probe" cuDriverGetVersion
        grep -qx "init_cuda 1 1" "$d/probe" || fail "CUDA calls during init: $(grep init_cuda "$d/probe")"
        grep -qx "fake cuDriverGetVersion 2" "$d/probe" || fail "$(grep cuDriverGetVersion "$d/probe")"
        grep -q "^seen cuDriverGetVersion" "$d/probe" && fail "a hook saw a call made during initialisation"
    else
        check_report "$d/probe"
    fi
    for want in "opt count 16" "opt on 0" "opt ratio 2.5" "opt limit 1610612736" 'opt text a,b;c\d:e=f' \
                "opt tag x" "opt tag y" "opt data ok" "fork_child 0" "opt name probe"; do
        grep -qxF "$want" "$d/probe" || fail "report lacks '$want'"
    done
    child=$(ls "$d"/probe.[0-9]* 2>/dev/null | grep -v '\.seen$\|\.fake$' | head -1)
    if [ -z "$child" ]; then fail "the forked child wrote no report"; else
        grep -qx "fork_child 1" "$child" || fail "fork_child did not run in the child"
        grep -qx "seen cuMemAlloc_v2 2" "$child" || fail "the child's report is not its own: $(grep cuMemAlloc "$child")"
    fi
    ;;
dropin)
    env LD_PRELOAD="$san" LD_LIBRARY_PATH="$dropin:$fake" E2E_EXPECT_SHIM=1 E2E_DROPIN=1 \
        CUSHIM_PLUGINS="$probe:out=$d/probe" "$prog" > "$d/stdout" 2> "$d/stderr" \
        || { cat "$d/stdout" "$d/stderr"; fail "the program failed"; }
    check_report "$d/probe"
    ;;
by_name)
    mkdir -p "$d/p/lib/cushim/plugins" "$d/p/lib/cushim/dropin"
    ln -s "$shim" "$d/p/lib/libcushim.so"
    ln -s "$probe" "$d/p/lib/cushim/plugins/probe.so"
    ln -s "$dropin/libcuda.so.1" "$d/p/lib/cushim/dropin/libcuda.so.1"
    env LD_PRELOAD="$san$d/p/lib/libcushim.so" LD_LIBRARY_PATH="$fake" E2E_EXPECT_SHIM=1 \
        CUSHIM_PLUGINS="probe:out=$d/probe" "$prog" > "$d/stdout" 2> "$d/stderr" \
        || { cat "$d/stdout" "$d/stderr"; fail "the program failed (preload)"; }
    check_report "$d/probe"
    env LD_PRELOAD="$san" LD_LIBRARY_PATH="$d/p/lib/cushim/dropin:$fake" E2E_EXPECT_SHIM=1 E2E_DROPIN=1 \
        CUSHIM_PLUGINS="probe:out=$d/probe2" "$prog" > "$d/stdout2" 2> "$d/stderr2" \
        || { cat "$d/stdout2" "$d/stderr2"; fail "the program failed (drop-in)"; }
    check_report "$d/probe2"
    ;;
ctor)
    env LD_PRELOAD="$san$shim" LD_LIBRARY_PATH="$fake" E2E_EXPECT_SHIM=1 \
        CUSHIM_PLUGINS="$probe:out=$d/probe" "$prog" > "$d/stdout" 2> "$d/stderr" \
        || { cat "$d/stdout" "$d/stderr"; fail "the program failed"; }
    check_report "$d/probe"
    grep -qx "seen cuInit 1" "$d/probe" || fail "the constructor's cuInit was not seen"
    ;;
fail_closed)
    for log in warn off; do
        env LD_PRELOAD="$san$shim" LD_LIBRARY_PATH="$fake" E2E_EXPECT_SHIM=1 CUSHIM_LOG=$log \
            CUSHIM_PLUGINS="$broken" "$prog" --fail-closed > "$d/stdout.$log" 2> "$d/stderr.$log" \
            || { cat "$d/stdout.$log" "$d/stderr.$log"; fail "CUSHIM_LOG=$log: the program failed"; }
        n=$(grep -c "error: plugin 'probe-major': was built for SDK ABI 2.0, this shim provides [0-9]*\.[0-9]*; failing closed" \
            "$d/stderr.$log")
        [ "$n" = 1 ] || fail "CUSHIM_LOG=$log: $n failure lines"
        n=$(grep -c "error: cuInit refused: every CUDA call returns an initialisation error, as plugin 'probe-major'" \
            "$d/stderr.$log")
        [ "$n" = 1 ] || fail "CUSHIM_LOG=$log: $n lines at the first refused call"
        [ $status = 0 ] || cat "$d/stderr.$log"
    done
    ;;
optional)
    env LD_PRELOAD="$san$shim" LD_LIBRARY_PATH="$fake" E2E_EXPECT_SHIM=1 \
        CUSHIM_PLUGINS="?$broken;$probe:out=$d/probe" "$prog" > "$d/stdout" 2> "$d/stderr" \
        || { cat "$d/stdout" "$d/stderr"; fail "the program failed"; }
    grep -q "warn: plugin 'probe-major': was built for SDK ABI 2.0, this shim provides [0-9]*\.[0-9]* (optional: the others keep working)" \
        "$d/stderr" || { cat "$d/stderr"; fail "no warning for the optional plugin"; }
    check_report "$d/probe"
    ;;
fork_init)
    env LD_PRELOAD="$san" LD_LIBRARY_PATH="$dropin:$fake" CUSHIM_LOG=info \
        CUSHIM_PLUGINS="?$probe:sleep_ms=700,started=$d/started" "$prog" "$d/started" > "$d/stdout" 2> "$d/stderr" \
        || { cat "$d/stdout" "$d/stderr"; fail "the program failed"; }
    grep -q "plugin 'probe': fork() in another thread interrupted its init; not loaded in the child" "$d/stderr" \
        || { cat "$d/stderr"; fail "the child did not report the interrupted plugin"; }
    grep -q "plugin 'probe' 1.0 loaded" "$d/stderr" || fail "the parent did not load the plugin"
    ;;
*)
    fail "unknown mode"
    ;;
esac
[ $status = 0 ] && echo "run_plugin.sh $mode: ok"
exit $status
