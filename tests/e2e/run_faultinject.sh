#!/bin/sh
# run_faultinject.sh CASE PLUGIN PROGRAM REFERENCE VECADD DROPIN_DIR LAUNCHER
# The faultinject plugin loaded by the shim through CUSHIM_PLUGINS, against the fake driver: PROGRAM is
# e2e_faultinject (one output line per step with each call's result), REFERENCE fi_reference (the p=
# pattern the docs promise), VECADD the example. ctest sets LD_PRELOAD (the shim) and LD_LIBRARY_PATH
# (the fakes). Each CASE checks the program's lines, the shim's log on stderr, and, where a call was
# faulted, that the fake driver never received it (its own call counts, FAKE_CUDA_COUNTS).
# Exit status 0 pass, 1 fail, 77 skipped (a launcher without --fault).
set -u
case_=$1 plugin=$2 prog=$3 ref=$4 vecadd=$5 dropin=$6 launcher=$7
out=${E2E_OUT:-${TMPDIR:-/tmp}}/faultinject.$case_
rm -f "$out".*

fail() {
    echo "FAIL [$case_]: $*"
    for f in out err; do
        [ -f "$out.$f" ] && sed "s/^/  $f: /" "$out.$f"
    done
    exit 1
}

# run OPTIONS STEP... : the program with CUSHIM_PLUGINS=<plugin path>:OPTIONS
run() {
    opts=$1
    shift
    CUSHIM_PLUGINS="$plugin:$opts" FAKE_CUDA_COUNTS="$out.drv" FAKE_CUDART_COUNTS="$out.rt" \
        "$prog" "$@" >"$out.out" 2>"$out.err"
    rc=$?
    [ "$rc" = 0 ] || fail "the program exited with $rc"
}
line() { grep -qxF -- "$1" "$out.out" || fail "no output line '$1'"; }
err() { grep -qF -- "$1" "$out.err" || fail "stderr lacks '$1'"; }
noerr() { ! grep -qF -- "$1" "$out.err" || fail "stderr has '$1'"; }
# fake_count NAME N: the fake driver received NAME exactly N times
fake_count() {
    got=$(awk -F'\t' -v n="$1" '$1 == n { print $2 }' "$out.drv" 2>/dev/null)
    [ "${got:-0}" = "$2" ] || fail "the fake driver received $1 ${got:-0} times, expected $2"
}
summary() { err "faultinject: rule $1 '$2': $3"; }

R='cuMemAlloc*:CUDA_ERROR_OUT_OF_MEMORY'
case $case_ in
nth)
    run "rule=$R:nth=3" init alloc 6
    line "init 0"
    line "alloc 0 0 2 0 0 0"
    fake_count cuMemAlloc_v2 5            # the faulted call never reached the driver
    summary 1 "$R:nth=3" "6 calls matched, 1 fault injected"
    # at info, each fault is logged with the error's name (host->result_name)
    export CUSHIM_LOG=info
    run "rule=$R:nth=3" init alloc 6
    unset CUSHIM_LOG
    err "faultinject: cuMemAlloc_v2: injected CUDA_ERROR_OUT_OF_MEMORY (2): rule 1, its matching call 3"
    [ "$(grep -c 'injected CUDA_ERROR' "$out.err")" = 1 ] || fail "not exactly one fault logged"
    ;;
every)
    run "rule=$R:every=2" init alloc 6
    line "alloc 0 2 0 2 0 2"
    fake_count cuMemAlloc_v2 3
    summary 1 "$R:every=2" "6 calls matched, 3 faults injected"
    ;;
after)
    run "rule=$R:after=4" init alloc 6
    line "alloc 0 0 0 0 2 2"
    summary 1 "$R:after=4" "6 calls matched, 2 faults injected"
    ;;
probability)
    rule='cuMemAlloc_v2:CUDA_ERROR_OUT_OF_MEMORY:p=0.5'
    run "rule=$rule,seed=7" init alloc 64
    a=$(grep '^alloc' "$out.out")
    run "rule=$rule,seed=7" init alloc 64
    b=$(grep '^alloc' "$out.out")
    run "rule=$rule,seed=8" init alloc 64
    c=$(grep '^alloc' "$out.out")
    [ "$a" = "$b" ] || fail "seed 7 twice gave two patterns:\n$a\n$b"
    [ "$a" != "$c" ] || fail "seeds 7 and 8 gave the same pattern: $a"
    expected=$("$ref" "$rule" 7 64 2) || fail "fi_reference failed"
    [ "$a" = "$expected" ] || fail "seed 7: got\n  $a\nthe documented stream gives\n  $expected"
    case "$a" in *" 0"*" 2"*|*" 2"*" 0"*) ;; *) fail "p=0.5 over 64 calls gave no mix: $a" ;; esac
    ;;
window)
    # the first calls run well within 1 s of the process start, the last ones after 1.5 s
    run "rule=$R:window=1-1000" init alloc 2 sleep 1500 alloc 2
    line "alloc 0 0"
    line "alloc 2 2"
    run "rule=$R:window=0-1000+every=2" init alloc 4
    line "alloc 0 2 0 2"
    run "rule=$R:window=1000-" init alloc 2
    line "alloc 0 0"
    ;;
several)
    # each rule counts the calls it selects; of two that fire on one call, the first given wins
    r1='cuMemAlloc_v2:CUDA_ERROR_OUT_OF_MEMORY:every=2'
    r2='cat:alloc:CUDA_ERROR_INVALID_VALUE:every=3'
    run "rule=$r1,rule=$r2" init alloc 6 allochost 3
    line "alloc 0 2 1 2 0 2"
    line "allochost 0 0 1"
    summary 1 "$r1" "6 calls matched, 3 faults injected"
    summary 2 "$r2" "9 calls matched, 2 faults injected"
    ;;
selectors)
    run "rule=name:cuMemAlloc_v2:CUDA_ERROR_OUT_OF_MEMORY:nth=1" init alloc 2 allochost 1
    line "alloc 2 0"
    line "allochost 0"
    run "rule=cuMemAlloc:CUDA_ERROR_OUT_OF_MEMORY" init alloc 2 allochost 1     # a base name
    line "alloc 2 2"
    line "allochost 0"
    run "rule=glob:cuMemAlloc*:CUDA_ERROR_OUT_OF_MEMORY" init alloc 1 allochost 1 sync 1
    line "alloc 2"
    line "allochost 2"
    line "sync 0"
    run "rule=cat:sync:CUDA_ERROR_LAUNCH_FAILED" init alloc 1 sync 2
    line "alloc 0"
    line "sync 719 719"
    run "rule=lib:driver:CUDA_ERROR_NOT_INITIALIZED:nth=1" init
    line "init 3"
    run "rule=lib:runtime:cudaErrorMemoryAllocation:nth=1" init cudamalloc 2 alloc 1
    line "cudamalloc 2 0"
    line "alloc 0"
    # a union: ',' escaped in CUSHIM_PLUGINS
    run 'rule=cuMemAlloc_v2\,cat:sync:CUDA_ERROR_UNKNOWN' init alloc 1 sync 1 allochost 1
    line "alloc 999"
    line "sync 999"
    line "allochost 0"
    # an intersection, and an error given as a number
    run 'rule=lib:driver&cat:alloc:2:nth=2' init alloc 1 allochost 1 alloc 1
    line "alloc 0"
    line "allochost 2"
    ;;
nested)
    # a number applies to driver and runtime APIs; the cuMemAlloc_v2 each cudaMalloc makes is the same
    # call for a rule that selects both, so it is counted once
    run "rule=cat:alloc:2:every=2" init cudamalloc 4
    line "cudamalloc 0 2 0 2"
    summary 1 "cat:alloc:2:every=2" "4 calls matched, 2 faults injected"
    # a driver error applies to the driver APIs only: cudaMalloc fails through its cuMemAlloc_v2
    run "rule=cat:alloc:CUDA_ERROR_OUT_OF_MEMORY:nth=2" init cudamalloc 3
    line "cudamalloc 0 2 0"
    ;;
errname)
    # a rule on the allocations leaves cuGetErrorName alone
    run "rule=$R" init alloc 1 errname 2
    line "alloc 2"
    line "errname CUDA_ERROR_OUT_OF_MEMORY"
    ;;
summary)
    run "rule=$R:nth=1,summary=false" init alloc 2
    line "alloc 2 0"
    noerr "calls matched"
    run "rule=cuInit:CUDA_ERROR_UNKNOWN:nth=5" init
    summary 1 "cuInit:CUDA_ERROR_UNKNOWN:nth=5" "1 call matched, 0 faults injected"
    ;;
bad)
    # each fails the plugin's load with one line naming the rule and the reason
    for spec in \
        "rule=$R:nth=0|rule 1 '$R:nth=0': nth=0: expected a whole number >= 1" \
        "rule=cuMemAlloc*:CUDA_ERROR_NOPE|unknown error 'CUDA_ERROR_NOPE'" \
        "rule=cuNoSuchApi:CUDA_ERROR_UNKNOWN|selector 'cuNoSuchApi' matches no API of this build" \
        "rule=cudaMalloc:CUDA_ERROR_OUT_OF_MEMORY|is a driver error (CUresult), but selector 'cudaMalloc' matches only APIs returning cudaError_t" \
        "rule=$R:sometimes=2|unknown WHEN condition 'sometimes'" \
        "rule=$R,rule=cuInit:0|rule 2 'cuInit:0': error 0 is success" \
        "rule=$R:p=2|p=2: expected a probability from 0 to 1"; do
        opts=${spec%%|*}
        message=${spec#*|}
        CUSHIM_PLUGINS="$plugin:$opts" "$prog" init alloc 1 >"$out.out" 2>"$out.err"
        err "$message"
        [ "$(grep -c 'error: faultinject:' "$out.err")" = 1 ] || fail "$opts: not exactly one error line of the plugin"
        # the load failed, so the shim fails closed: no call goes through, none is faulted by the rule
        grep -qxF "alloc 0" "$out.out" && fail "$opts: a call went through although the plugin failed to load"
        grep -qxF "alloc 2" "$out.out" && fail "$opts: the rule was applied although it is invalid"
    done
    ;;
threads)
    # one counter per rule: every third call of all threads fails, exactly
    run "rule=cuMemAlloc_v2:CUDA_ERROR_OUT_OF_MEMORY:every=3" init threads 8 600
    line "threads 1600"
    summary 1 "cuMemAlloc_v2:CUDA_ERROR_OUT_OF_MEMORY:every=3" "4800 calls matched, 1600 faults injected"
    ;;
vecadd)
    # the README's example: the second allocation fails, named, and the program exits non-zero
    CUSHIM_PLUGINS="faultinject:rule=cuMemAlloc*:CUDA_ERROR_OUT_OF_MEMORY:nth=2" "$vecadd" 4096 \
        >"$out.out" 2>"$out.err"
    rc=$?
    [ "$rc" != 0 ] || fail "vecadd exited 0 under the fault"
    err "vecadd: cuMemAlloc(&db, bytes) failed: CUDA_ERROR_OUT_OF_MEMORY (2)"
    summary 1 "cuMemAlloc*:CUDA_ERROR_OUT_OF_MEMORY:nth=2" "2 calls matched, 1 fault injected"
    # proof that the rule did it: one that never fires leaves vecadd passing
    CUSHIM_PLUGINS="faultinject:rule=cuMemAlloc*:CUDA_ERROR_OUT_OF_MEMORY:nth=100" "$vecadd" 4096 \
        >"$out.out" 2>"$out.err" || fail "vecadd failed under a rule that never fires"
    ;;
launcher)
    grep -q -- '--fault=' "$launcher" || { echo "SKIP: $launcher has no --fault option yet"; exit 77; }
    env -u LD_PRELOAD "$launcher" run --fake --fault='cuMemAlloc*:CUDA_ERROR_OUT_OF_MEMORY:nth=2' -- "$vecadd" 4096 \
        >"$out.out" 2>"$out.err"
    rc=$?
    [ "$rc" != 0 ] || fail "vecadd exited 0 under the fault"
    err "vecadd: cuMemAlloc(&db, bytes) failed: CUDA_ERROR_OUT_OF_MEMORY (2)"
    ;;
dropin)
    # the drop-in libcuda.so.1 loads the plugin the same way (no LD_PRELOAD)
    export LD_PRELOAD=
    export LD_LIBRARY_PATH="$dropin"
    export CUSHIM_REAL_LIBCUDA="${E2E_FAKE_LIBCUDA:?}"
    run "rule=$R:nth=2" init alloc 3
    line "alloc 0 2 0"
    fake_count cuMemAlloc_v2 2
    summary 1 "$R:nth=2" "3 calls matched, 1 fault injected"
    CUSHIM_PLUGINS="$plugin:rule=$R:nth=2" "$vecadd" 4096 >"$out.out" 2>"$out.err" && fail "vecadd exited 0"
    err "vecadd: cuMemAlloc(&db, bytes) failed: CUDA_ERROR_OUT_OF_MEMORY (2)"
    ;;
*)
    echo "run_faultinject.sh: unknown case '$case_'"
    exit 2
    ;;
esac
echo "PASS [$case_]"
exit 0
