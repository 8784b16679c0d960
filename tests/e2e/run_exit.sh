#!/bin/sh
# run_exit.sh PRELOAD PROBE OUT_DIR PROGRAM
# Runs PROGRAM with the shim preloaded, the call counter on and the probe plugin loaded
# (CUSHIM_PLUGINS), then checks, after the process has ended:
#  - the shim's counts file (written last) equals the fake driver's own counts as the probe read them in
#    its flush: no CUDA call came after the flush, and every call was counted, those of exit handlers and
#    library destructors included (before the fix the flush came before the library's destructor);
#  - the probe's hooks saw, by its flush, exactly the calls the fake received;
#  - plugins flush in reverse load order;
#  - a thread inside a (slow) hook callback when main returned had finished it before plugins flushed, and
#    its post hook did not run after the flush (the in-process "exit-order" plugin says so on stderr);
#  - the calls of each exit-time source are there: the program's atexit handler (5 cuDeviceGetCount),
#    the library's atexit handler (3 cuMemFree_v2), the library's destructor (4 + 1 cuDriverGetVersion,
#    2 cuCtxSynchronize).
set -u
preload=$1 probe=$2 out=$3 prog=$4
dir=$out/$(basename "$prog")${E2E_RUN_TAG-}.exit
rm -rf "$dir"
mkdir -p "$dir"
env LD_PRELOAD="$preload" E2E_EXPECT_SHIM=1 CUSHIM_COUNTS="$dir/shim" \
    CUSHIM_PLUGINS="$probe:out=$dir/probe" "$prog" 2> "$dir/stderr" || { cat "$dir/stderr"; echo "$prog failed"; exit 1; }
[ -f "$dir/shim" ] || { echo "no counts file"; exit 1; }
[ -f "$dir/probe" ] || { echo "the probe's flush wrote no report"; exit 1; }
status=0
# cuCtxGetCurrent is the call in flight at exit (its real call races with the flush): left out.
grep '^fake ' "$dir/probe" | awk '$3 > 0 && $2 != "cuCtxGetCurrent" {print $2 "\t" $3}' | sort > "$dir/fake.sorted"
grep -v '^cuda\|^cuCtxGetCurrent' "$dir/shim" | sort > "$dir/shim.sorted"
if ! diff -u "$dir/fake.sorted" "$dir/shim.sorted"; then
    echo "counts file differs from what the fake driver received (- fake at flush, + shim)"
    status=1
fi
grep '^seen ' "$dir/probe" | awk '{print $2 "\t" $3}' | grep -v '^cuda\|^cuCtxGetCurrent' | sort > "$dir/seen.sorted"
if ! diff -u "$dir/fake.sorted" "$dir/seen.sorted"; then
    echo "the probe's hooks did not see every call the fake received (- fake, + seen)"
    status=1
fi
grep -q '^seen cuCtxSynchronize 2$' "$dir/probe" || { echo "destructor's cuCtxSynchronize not seen"; status=1; }
grep -q '^seen cuDriverGetVersion 5$' "$dir/probe" || { echo "hooks saw:"; grep '^seen cuDriverGetVersion' "$dir/probe"; status=1; }
grep -q '^seen cuDeviceGetCount 5$' "$dir/probe" || { echo "late handler not seen"; status=1; }
grep -q '^seen cuMemFree_v2 3$' "$dir/probe" || { echo "early handler not seen"; status=1; }
grep -q "exit-order: the running hook had finished before the flush" "$dir/stderr" || {
    cat "$dir/stderr"; echo "the exit did not wait for a running hook callback"; status=1; }
grep -q "FAIL" "$dir/stderr" && { cat "$dir/stderr"; status=1; }
# Reverse load order: "exit-order" (registered in main) flushes before the probe (CUSHIM_PLUGINS).
t_order=$(awk '/^exit-order: flush_ns/ {print $3}' "$dir/stderr")
t_probe=$(awk '$1 == "flush_ns" {print $2}' "$dir/probe")
[ -n "$t_order" ] && [ -n "$t_probe" ] && [ "$t_order" -lt "$t_probe" ] || {
    echo "flush order: exit-order at $t_order, probe at $t_probe (reverse load order expected)"; status=1; }
[ $status = 0 ] && echo "e2e_exit: counts equal the fake's ($(wc -l < "$dir/shim.sorted") APIs), the flush came after" \
    "the last call ($(grep '^last' "$dir/probe"))"
exit $status
