#!/bin/sh
# run_memlimit_bylib.sh PROGRAM PLUGIN LAUNCHER CHECKER: memory by library (memlimit, 'cushim usage --by-library').
# e2e_usage_libs allocates through two libraries of its own (libe2e_usage_a.so by cuMemAlloc, libe2e_usage_b.so by
# cudaMalloc) and directly, and frees one of library a's allocations itself; 'cushim usage --by-library' must
# attribute each byte to the library that allocated it (the free credited to library a), the rows must sum to
# the region's per-process totals, and the Prometheus text must parse (prom_check.py). With by_library=false every
# byte shows as '(not attributed)'. ctest sets LD_PRELOAD (the shim) and LD_LIBRARY_PATH (the fakes).
set -u
prog=$1 plugin=$2 launcher=$3 checker=$4
out=${E2E_OUT:-${TMPDIR:-/tmp}}/memlimit-bylib
region=$out.region
rm -rf "$out".* "$region"
fail() { echo "FAIL: $*"; for f in "$out".table "$out".prom "$out".hold "$out".check; do [ -f "$f" ] && sed "s|^|  $f: |" "$f"; done; exit 1; }
hold() {   # start the program with plugin options $1; its pid in $pid
    CUSHIM_PLUGINS="$plugin:limit=64MiB,budget=$region$1" FAKE_CUDA_DEVICES=2 "$prog" >"$out.hold" 2>&1 &
    pid=$!
    i=0
    while ! grep -q held "$out.hold" 2>/dev/null; do
        i=$((i + 1)); [ $i -lt 500 ] || fail "the program did not start"; sleep 0.02
    done
}
row() {   # row DEV LIBRARY BYTES: the by-library table has it for $pid
    grep -Eq "^[0-9]+ +$pid +e2e_usage_libs +$1 +$(printf '%s' "$2" | sed 's/[().]/\\&/g') +$3\$" "$out.table" ||
        fail "no row: device $1, $2, $3 bytes"
}
hold ""
env -u LD_PRELOAD "$launcher" usage --by-library "$region" >"$out.table" 2>&1 || fail "cushim usage --by-library failed"
row 0 libe2e_usage_a.so 2097152
row 0 libe2e_usage_b.so 2097152
row 0 '(program)' 524288
row 1 '(program)' 262144
n=$(grep -Ec "^[0-9]+ +$pid +e2e_usage_libs +[0-9]+ " "$out.table")
[ "$n" -eq 4 ] || fail "$n by-library rows for $pid, not 4"
grep -Eq "^[0-9]+ +$pid +e2e_usage_libs +alive +0 +4718592 " "$out.table" || fail "device 0's total is not 4718592"
grep -q "not attributed" "$out.table" && fail "bytes not attributed"
env -u LD_PRELOAD "$launcher" usage --prometheus "$region" >"$out.prom" 2>&1 || fail "cushim usage --prometheus failed"
python3 "$checker" "$out.prom" >"$out.check" 2>&1 || fail "the Prometheus text does not check"
grep -q "^cushim_memlimit_library_used_bytes{budget=\"$region\",pid=\"$pid\",command=\"e2e_usage_libs\",device=\"0\",library=\"libe2e_usage_b.so\",alive=\"1\"} 2097152$" \
    "$out.prom" || fail "no Prometheus sample for library b"
# --watch where stdout is not a terminal: printed once, not redrawn
env -u LD_PRELOAD "$launcher" usage --watch --by-library "$region" </dev/null >"$out.table" 2>&1 || fail "--watch failed"
[ "$(grep -c '^memory by library' "$out.table")" -eq 1 ] || fail "--watch not at a terminal did not print once"
grep -q "$(printf '\033')" "$out.table" && fail "--watch not at a terminal wrote escape sequences"
kill -KILL $pid; wait $pid 2>/dev/null
# by_library=false: nothing named, everything '(not attributed)'
hold ",by_library=false"
env -u LD_PRELOAD "$launcher" usage --by-library "$region" >"$out.table" 2>&1 || fail "cushim usage (2) failed"
row 0 '(not attributed)' 4718592
grep -q "libe2e_usage" "$out.table" && fail "libraries named with by_library=false"
kill -KILL $pid; wait $pid 2>/dev/null
rm -rf "$out".* "$region"
echo PASS
