#!/bin/sh
# run_smlimit.sh CASE E2E_SMLIMIT - smlimit end to end against the fake driver with simulated kernel
# durations. The loop's GPU share comes from the fake's own timeline (not a wall clock the test reads);
# bounds are generous: a loaded CI machine can only make the share smaller (a starved launcher), while
# the limiter's failure would give about 1.
#   native    no plugin: the kernels run back to back (share about 1; > 0.5 allows a stalled launcher)
#   limit     limit=25: share in (0.05, 0.40); the plugin's report shows waits and its own busy share
#   unlimited limit=100: no hook is registered (CUSHIM_COUNTS shows no event the plugin would record)
#   env       CUDA_DEVICE_SM_LIMIT=25 with smlimit loaded without limit=: the same as 'limit'
#   threads   two threads on two streams at limit=30: share in (0.05, 0.45)
#   launcher  cushim run --sm-limit composes the smlimit spec (per-device lists escaped), HAMi-core's
#             CUDA_DEVICE_SM_LIMIT alone loads smlimit, and the limit holds through the launcher
#   clockref  clock_ref_mhz=1455 where NVML gives no SM clock (no libnvidia-ml, or the fake's without
#             nvmlDeviceGetClockInfo): one warning, and the time share holds (as 'limit'); the report names
#             the reference; clock_ref_mhz=20000 is refused with its own error
#   weights   two processes at limit=60 in one group (shared region): limits above 100 in total are
#             scaled, so each reports that its share in force went down to 50%
set -u
case=$1 prog=$2 plugin=$3 launcher=${4:-}
out=${E2E_OUT:-/tmp}/smlimit.$case.$$
export FAKE_CUDA_KERNEL_US=2000
fail() { echo "smlimit e2e '$case': $*" >&2; cat "$out.err" >&2 2>/dev/null; exit 1; }
share_in() {   # share_in LOW HIGH
  s=$(sed -n 's/^share //p' "$out")
  [ -n "$s" ] || fail "no share printed"
  awk -v s="$s" -v lo="$1" -v hi="$2" 'BEGIN { exit !(s > lo && s < hi) }' || fail "share $s not in ($1, $2)"
  echo "share $s in ($1, $2)"
}
report_ok() {
  grep -q 'smlimit: device 0: limit 25%: busy .* waits' "$out.err" || fail "no report line"
  w=$(sed -n 's/.*admitted, \([0-9]*\) waits.*/\1/p' "$out.err")
  [ "${w:-0}" -gt 0 ] || fail "the limiter never made a launch wait"
}
case $case in
  native)
    CUSHIM_PLUGINS= "$prog" 200 >"$out" 2>"$out.err" || fail "exit $?"
    share_in 0.5 1.01 ;;
  limit)
    CUSHIM_PLUGINS="$plugin:limit=25,report=1,shared=0" "$prog" 200 >"$out" 2>"$out.err" || fail "exit $?"
    share_in 0.05 0.40; report_ok ;;
  env)
    CUDA_DEVICE_SM_LIMIT=25 CUSHIM_PLUGINS="$plugin:report=1,shared=0" "$prog" 200 >"$out" 2>"$out.err" || fail "exit $?"
    share_in 0.05 0.40; report_ok ;;
  unlimited)
    CUSHIM_COUNTS="$out.counts" CUSHIM_PLUGINS="$plugin:limit=100,report=1" "$prog" 100 >"$out" 2>"$out.err" ||
      fail "exit $?"
    share_in 0.5 1.01
    # the program itself records two events; the plugin, had it hooked, one per launch more
    ev=$(awk -F'\t' '$1 == "cuEventRecord" { print $2 }' "$out.counts")
    [ "${ev:-0}" -eq 2 ] || fail "cuEventRecord called ${ev:-0} times: the plugin hooked launches at limit 100"
    ! grep -q 'smlimit: device' "$out.err" || fail "a report at limit 100" ;;
  clockref)
    CUSHIM_PLUGINS="$plugin:limit=25,report=1,shared=0,clock_ref_mhz=1455" "$prog" 200 >"$out" 2>"$out.err" ||
      fail "exit $?"
    share_in 0.05 0.40; report_ok
    n=$(grep -c 'smlimit: clock_ref_mhz: .*time share' "$out.err")
    [ "$n" -eq 1 ] || fail "$n clock_ref_mhz warnings (want 1: NVML gives no clock here)"
    grep -q 'SM clock 0 MHz (ref 1455)' "$out.err" || fail "the report does not name the reference clock"
    CUSHIM_PLUGINS="$plugin:limit=25,clock_ref_mhz=20000" "$prog" 10 >"$out" 2>"$out.err"
    grep -q 'clock_ref_mhz=20000: give 0' "$out.err" || fail "clock_ref_mhz=20000 not refused" ;;
  threads)
    CUSHIM_PLUGINS="$plugin:limit=30,shared=0" "$prog" 200 threads >"$out" 2>"$out.err" || fail "exit $?"
    share_in 0.05 0.45 ;;
  weights)
    grp=e2e$$
    CUSHIM_PLUGINS="$plugin:limit=60,group=$grp,report=1" "$prog" 300 >"$out.b" 2>"$out.b.err" &
    pb=$!
    CUSHIM_PLUGINS="$plugin:limit=60,group=$grp,report=1" "$prog" 300 >"$out" 2>"$out.err" || fail "exit $?"
    wait $pb || fail "second process: exit $?"
    rm -f "/dev/shm/cushim-smlimit-$(id -u)-$grp"
    for f in "$out.err" "$out.b.err"; do
      grep -q 'limit 60%: .*(lowest 50%)' "$f" || { cat "$f" >&2; fail "a process did not scale its share to 50%"; }
    done
    cat "$out.err" "$out.b.err"; rm -f "$out.b" "$out.b.err" ;;
  launcher)
    L() { env -u LD_PRELOAD -u CUSHIM_PLUGINS "$launcher" run --fake "$@"; }
    v=$(L --sm-limit=0:30,1:50 -- sh -c 'echo "$CUSHIM_PLUGINS"') || fail "launcher exit $?"
    [ "$v" = 'smlimit:limit=0:30\,1:50' ] || fail "--sm-limit=0:30,1:50 gave CUSHIM_PLUGINS='$v'"
    v=$(CUDA_DEVICE_SM_LIMIT_1=40 L -- sh -c 'echo "$CUSHIM_PLUGINS"') || fail "launcher exit $?"
    [ "$v" = smlimit ] || fail "CUDA_DEVICE_SM_LIMIT_1 gave CUSHIM_PLUGINS='$v'"
    L --sm-limit= -- true 2>/dev/null && fail "--sm-limit= accepted"
    CUSHIM_LOG=warn L --sm-limit=25 -- "$prog" 200 >"$out" 2>"$out.err" || fail "exit $?"
    share_in 0.05 0.40 ;;
  *) fail "unknown case" ;;
esac
rm -f "$out" "$out.err" "$out.counts"
