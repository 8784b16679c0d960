#!/bin/sh
# run_memlimit_bylib.sh PROGRAM PLUGIN LAUNCHER CHECKER SMLIMIT: memory by library (memlimit, 'cushim usage --by-library').
# e2e_usage_libs allocates through two libraries of its own (libe2e_usage_a.so by cuMemAlloc, libe2e_usage_b.so by
# cudaMalloc) and directly, and frees one of library a's allocations itself; 'cushim usage --by-library' must
# attribute each byte to the library that allocated it (the free credited to library a), the rows must sum to
# the region's per-process totals, and the Prometheus text must parse (prom_check.py) - with by_library=true; without it
# (the default) every
# byte shows as '(not attributed)'. With smlimit (limit 50%, priority high, its group named as the budget) and 20
# launches of 2 ms (simulated), the table and the Prometheus text show 20 kernels, at least 30 ms busy (40 simulated), the
# 50% share and the priority. ctest sets LD_PRELOAD (the shim) and LD_LIBRARY_PATH (the fakes).
set -u
prog=$1 plugin=$2 launcher=$3 checker=$4 smlimit=$5
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
hold ",by_library=true"
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
env -u LD_PRELOAD python3 "$checker" "$out.prom" >"$out.check" 2>&1 || fail "the Prometheus text does not check"
grep -q "^cushim_memlimit_library_used_bytes{budget=\"$region\",pid=\"$pid\",command=\"e2e_usage_libs\",device=\"0\",library=\"libe2e_usage_b.so\",alive=\"1\"} 2097152$" \
    "$out.prom" || fail "no Prometheus sample for library b"
# --watch where stdout is not a terminal: printed once, not redrawn
env -u LD_PRELOAD "$launcher" usage --watch --by-library "$region" </dev/null >"$out.table" 2>&1 || fail "--watch failed"
[ "$(grep -c '^memory by library' "$out.table")" -eq 1 ] || fail "--watch not at a terminal did not print once"
grep -q "$(printf '\033')" "$out.table" && fail "--watch not at a terminal wrote escape sequences"
kill -KILL $pid; wait $pid 2>/dev/null
# by_library=false (the default): nothing named, everything '(not attributed)'
hold ""
env -u LD_PRELOAD "$launcher" usage --by-library "$region" >"$out.table" 2>&1 || fail "cushim usage (2) failed"
row 0 '(not attributed)' 4718592
grep -q "libe2e_usage" "$out.table" && fail "libraries named with by_library=false"
kill -KILL $pid; wait $pid 2>/dev/null
# smlimit beside memlimit: busy time, kernels, share and priority per process and device
name=bylib$$
region=/dev/shm/cushim-budget-$name
smr=/dev/shm/cushim-smlimit4-$(id -u)-$name
rm -f "$region" "$smr"
CUSHIM_PLUGINS="$plugin:limit=64MiB,budget=$name;$smlimit:limit=50,group=$name,priority=high" FAKE_CUDA_DEVICES=2 \
    FAKE_CUDA_KERNEL_US=2000 "$prog" 20 >"$out.hold" 2>&1 &
pid=$!
i=0
while ! grep -q held "$out.hold" 2>/dev/null; do
    i=$((i + 1)); [ $i -lt 1000 ] || fail "the launching program did not start"; sleep 0.02
done
# smlimit publishes at its heartbeat (50 ms; later on a loaded machine): wait up to 10 s for the 20 launches
i=0
while :; do
    env -u LD_PRELOAD "$launcher" usage --by-library "$name" >"$out.table" 2>&1 || fail "cushim usage (3) failed"
    line=$(grep -E "^[0-9]+ +$pid +e2e_usage_libs +alive +0 " "$out.table") || fail "no row for device 0"
    set -- $line
    [ "${12}" = 20 ] && break
    i=$((i + 1)); [ $i -lt 200 ] || break
    sleep 0.05
done
[ "${12}" = 20 ] || fail "kernels ${12}, not 20"
[ "${11}" -ge 30 ] 2>/dev/null || fail "busy ${11} ms, not at least 30 (20 x 2 ms)"
[ "${13}" = 50.0 ] || fail "sm% ${13}, not 50.0"
[ "${14}" = high ] || fail "priority ${14}, not high"
env -u LD_PRELOAD "$launcher" usage --prometheus "$name" >"$out.prom" 2>&1 || fail "cushim usage --prometheus (3) failed"
env -u LD_PRELOAD python3 "$checker" "$out.prom" >"$out.check" 2>&1 || fail "the Prometheus text (3) does not check"
grep -q "^cushim_smlimit_kernels_total{budget=\"$region\",pid=\"$pid\",command=\"e2e_usage_libs\",device=\"0\"} 20$" "$out.prom" ||
    fail "no kernel count sample"
grep -q "^cushim_smlimit_limit_ratio{.*pid=\"$pid\".*device=\"0\"} 0.500$" "$out.prom" || fail "no share sample"
grep -q "^cushim_smlimit_priority{.*pid=\"$pid\".*device=\"0\"} 2$" "$out.prom" || fail "no priority sample"
grep -Eq "^cushim_smlimit_busy_seconds_total\{.*pid=\"$pid\".*device=\"0\"\} 0\.0[3-9][0-9]*$" "$out.prom" ||
    fail "busy seconds not between 0.03 and 0.1"
# --watch at a terminal (a pseudo-terminal): redrawn (home, clear) at least twice in 2.5 s; 'q', and Ctrl-C's
# SIGINT, end it at once with status 0
env -u LD_PRELOAD python3 - "$launcher" "$name" >"$out.check" 2>&1 <<'PY' || fail "--watch at a terminal: $(cat "$out.check")"
import os, pty, select, signal, sys, time

def run(stop, label):
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp('env', ['env', '-u', 'LD_PRELOAD', sys.argv[1], 'usage', '--watch', sys.argv[2]])
    buf, end = b'', time.time() + 2.5
    while time.time() < end:
        if select.select([fd], [], [], 0.1)[0]:
            try:
                buf += os.read(fd, 65536)
            except OSError:
                break
    n = buf.count(b'\x1b[H\x1b[2J')
    assert n >= 2, '%s: redrawn %d times' % (label, n)
    assert b'e2e_usage_libs' in buf, '%s: no process row' % label
    stop(pid, fd)
    t = time.time()
    while time.time() < t + 2:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, '%s: status %d' % (label, status)
            print('watch: %d redraws, ended by %s' % (n, label))
            return
        if select.select([fd], [], [], 0.05)[0]:
            try:
                os.read(fd, 65536)
            except OSError:
                pass
    os.kill(pid, signal.SIGKILL)
    sys.exit('%s did not end --watch' % label)

run(lambda pid, fd: os.write(fd, b'q'), 'q')
run(lambda pid, fd: os.kill(pid, signal.SIGINT), 'SIGINT')
PY
kill -KILL $pid; wait $pid 2>/dev/null
rm -f "$region" "$smr"
rm -rf "$out".*
echo PASS
