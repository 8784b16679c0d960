#!/bin/sh
# run_memlimit_usage.sh PROGRAM PLUGIN LAUNCHER: 'cushim usage' on a shared memlimit budget. A process holding
# 3 MiB shows in the table and in the Prometheus text; killed with SIGKILL it shows 'dead'; the next process
# that needs the room reclaims it (it can then have the whole budget) and the dead slot is gone.
# ctest sets LD_PRELOAD (the shim) and LD_LIBRARY_PATH (the fakes). The usage runs start under the shim with the
# budget configured (env): they allocate nothing, so they take no slot (the budget opens at the first allocation).
set -u
prog=$1 plugin=$2 launcher=$3
out=${E2E_OUT:-${TMPDIR:-/tmp}}/memlimit-usage
region=$out.region
rm -rf "$out".* "$region"
fail() { echo "FAIL: $*"; for f in "$out".table "$out".prom "$out".hold; do [ -f "$f" ] && sed "s|^|  $f: |" "$f"; done; exit 1; }
export CUSHIM_PLUGINS="$plugin:limit=16MiB,budget=$region" FAKE_CUDA_DEVICES=2
# started through a link whose name (the process's command) has a quote and a tab: the table shows the tab as
# '?' (no control byte reaches a terminal), the Prometheus text escapes the quote
mkdir -p "$out.d" && tab=$(printf '\t') && ln -sf "$prog" "$out.d/e2e_\"q${tab}z" || fail "link"
"$out.d/e2e_\"q${tab}z" hold 16777216 3145728 >"$out.hold" 2>&1 &
pid=$!
i=0
while ! grep -q held "$out.hold" 2>/dev/null; do
    i=$((i + 1)); [ $i -lt 500 ] || fail "the holder did not start"; sleep 0.02
done
env -u LD_PRELOAD "$launcher" usage "$region" >"$out.table" 2>&1 || fail "cushim usage failed"
grep -Eq "^[0-9]+ +$pid +e2e_\"q\\?z +alive +0 +3145728 " "$out.table" || fail "no live row for $pid with 3145728 bytes"
grep -q "^device 0: 3145728 of 16777216 bytes charged" "$out.table" || fail "no device total"
env -u LD_PRELOAD "$launcher" usage --prometheus "$region" >"$out.prom" 2>&1 || fail "cushim usage --prometheus failed"
grep -q "^cushim_memlimit_used_bytes{budget=\"$region\",pid=\"$pid\",command=\"e2e_\\\\\"q?z\",device=\"0\",alive=\"1\"} 3145728$" \
    "$out.prom" || fail "no Prometheus sample for $pid"
grep -q '^# TYPE cushim_memlimit_used_bytes gauge$' "$out.prom" || fail "no TYPE line"
kill -KILL $pid
wait $pid 2>/dev/null
env -u LD_PRELOAD "$launcher" usage "$region" >"$out.table" 2>&1
grep -Eq "^[0-9]+ +$pid +e2e_\"q\\?z +dead +0 +3145728 " "$out.table" || fail "the killed holder is not shown dead"
# the whole budget for the next process: the dead holder's 3 MiB are reclaimed
"$prog" underflow 16777216 >"$out.hold" 2>&1 || fail "the next process could not have the whole budget"
env -u LD_PRELOAD "$launcher" usage "$region" >"$out.table" 2>&1
! grep -q " $pid " "$out.table" || fail "the dead slot is still listed after reclaim"
grep -q "^device 0: 0 of 16777216 bytes charged" "$out.table" || fail "usage not back to 0"
# a name the kernel cuts mid-character (15 bytes: the first byte of a 2-byte one last) with an escape byte:
# the Prometheus text stays valid UTF-8 (node_exporter rejects the whole file otherwise) and no table carries
# a control byte
esc=$(printf '\033') && ln -sf "$prog" "$out.d/e2e${esc}[2Jabcdefg$(printf '\303\251')" || fail "link 2"
"$out.d/e2e${esc}[2Jabcdefg$(printf '\303\251')" hold 16777216 1048576 >"$out.hold2" 2>&1 &
pid2=$!
i=0
while ! grep -q held "$out.hold2" 2>/dev/null; do
    i=$((i + 1)); [ $i -lt 500 ] || fail "the second holder did not start"; sleep 0.02
done
env -u LD_PRELOAD "$launcher" usage --prometheus "$region" >"$out.prom" 2>&1 || fail "cushim usage --prometheus (2) failed"
python3 -c 'import sys; open(sys.argv[1], "rb").read().decode("utf-8")' "$out.prom" 2>/dev/null ||
    fail "the Prometheus text is not valid UTF-8"
grep -q "pid=\"$pid2\",command=\"e2e?\[2Jabcdefg?\"" "$out.prom" || fail "no Prometheus sample for $pid2 with the cleaned name"
env -u LD_PRELOAD "$launcher" usage "$region" >"$out.table" 2>&1 || fail "cushim usage (2) failed"
! LC_ALL=C grep -q "$(printf '[\001-\010\013-\037\177]')" "$out.table" || fail "a control byte reached the table"
kill -KILL $pid2
wait $pid2 2>/dev/null
rm -rf "$out".* "$region"
echo PASS
