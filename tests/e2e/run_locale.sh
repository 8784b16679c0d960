#!/usr/bin/env bash
# run_locale.sh E2E_TRACE E2E_LOCALE STATS DROPIN_DIR TRACE MEMLIMIT SMLIMIT LUA
# A program whose locale says ',' is the decimal point (de_DE.UTF-8, built here with localedef into this test's
# directory: LOCPATH) must get from the shim what a C-locale program gets.
#   trace:    e2e_trace locale (setlocale after the trace started, then cuEventElapsedTime's float output): the
#             file is valid JSON, the float a JSON number equal to what the program printed, and the table at
#             exit equals cushim stats' (both with '.');
#   memlimit: the drop-in opened after setlocale (e2e_locale), limit=1.5GiB: 1.2 GiB allocated, 0.5 GiB more
#             refused (before: "bad size '1.5GiB'", and the shim failed closed);
#   smlimit:  the same, limit=30.5: CUDA starts (before: a bad limit, failed closed);
#   lua:      cushim.parse_bytes("1.5GiB") in a policy loaded after setlocale: 1610612736;
#   trace in drop-in mode with duration=5.5: the summary and otherData describe it as given (not 5,5).
# Exit 77 (skipped) without localedef or de_DE's locale source (Debian: the 'locales' package).
set -u
prog=$1 lprog=$2 stats=$3 dropin=$4 trace=$5 memlimit=$6 smlimit=$7 lua=$8
preload=${LD_PRELOAD-}
# the drop-in runs need the sanitizer runtime of an instrumented build (first in LD_PRELOAD) but not the shim
san=$(printf '%s' "$preload" | tr ':' '\n' | grep -v 'libcushim\.so$' | paste -sd: -)
unset LD_PRELOAD
dir=${E2E_OUT:-${TMPDIR:-/tmp}}/locale
rm -rf "$dir"
mkdir -p "$dir/loc" && cd "$dir" || exit 1
if ! command -v localedef >/dev/null || ! localedef -i de_DE -f UTF-8 "$dir/loc/de_DE.UTF-8" >localedef.log 2>&1; then
    echo "SKIP: cannot build the de_DE.UTF-8 locale here (localedef, and Debian's 'locales' package for its source)"
    cat localedef.log 2>/dev/null | head -3
    exit 77
fi
export LOCPATH=$dir/loc
status=0
fail() { echo "FAIL [$part]: $*"; sed 's/^/  err: /' err 2>/dev/null | head -20; status=1; }
de() { env LC_ALL=de_DE.UTF-8 "$@"; }

if [ -n "$trace" ]; then
    part=trace
    de LD_PRELOAD="$preload" CUSHIM_PLUGINS="$trace:file=$dir/t.json" "$prog" locale >out 2>err
    rc=$?
    if [ "$rc" = 0 ]; then
        grep -q '^probe 1,5 ' out || fail "the program's locale did not take (out: $(cat out))"
        python3 - "$dir/t.json" "$(sed -n 's/.* elapsed //p' out)" <<'PY' || fail "the file"
import json, sys
d = json.load(open(sys.argv[1]))
# cuEventElapsedTime_v2 in the 13.x trees, cuEventElapsedTime in 12.9's
ev = [e for e in d["traceEvents"] if e.get("ph") == "X" and e.get("name", "").startswith("cuEventElapsedTime")]
assert len(ev) == 1, "cuEventElapsedTime events: %d" % len(ev)
v = [x for x in ev[0]["args"].values() if isinstance(x, float)]
want = float(sys.argv[2].replace(",", "."))   # printed under the program's locale
assert v and abs(v[0] - want) <= 1e-6 * max(1.0, abs(v[0])), (ev[0]["args"], sys.argv[2])
PY
        "$stats" t.json > stats.out 2> stats.err || fail "cushim-stats: $(cat stats.err)"
        grep '^ ' err > t.exit
        grep '^ ' stats.out > t.stats
        grep -q '[0-9],[0-9][0-9]*  ' t.exit && ! grep -q '\.[0-9]' t.exit && fail "the table at exit has ',' decimals"
        cmp -s t.exit t.stats || fail "the table at exit differs from cushim stats': $(diff t.exit t.stats | head -6)"
    else
        fail "e2e_trace locale exited with $rc"
    fi
fi
run_dropin() {   # run_dropin PLUGINSPEC BYTES...: e2e_locale with the drop-in first on the library path
    local spec=$1
    shift
    de LD_PRELOAD="$san" LD_LIBRARY_PATH="$dropin:${LD_LIBRARY_PATH-}" CUSHIM_REAL_LIBCUDA="$E2E_FAKE_LIBCUDA" \
        CUSHIM_PLUGINS="$spec" "$lprog" "$@" >out 2>err
    rc=$?
    grep -q 'error' err && fail "errors logged"
}
if [ -n "$trace" ]; then
    part=trace-dropin   # options parsed and described after the program's setlocale
    run_dropin "$trace:file=$dir/d.json,duration=5.5" 4096
    [ "$rc" = 0 ] || fail "exit $rc"
    grep -q '(duration=5\.5)' err || fail "the summary does not describe duration=5.5 as given"
    python3 -c "import json,sys; d=json.load(open('d.json')); sys.exit(d['otherData'].get('capture') != 'duration=5.5')" ||
        fail "otherData.capture is not 'duration=5.5'"
fi
if [ -n "$memlimit" ]; then
    part=memlimit
    run_dropin "$memlimit:limit=1.5GiB" 1288490188 536870912
    [ "$rc" = 0 ] || fail "exit $rc"
    grep -q '^probe 1,5$' out || fail "the program's locale did not take (out: $(cat out))"
    grep -q '^init 0$' out || fail "CUDA did not start: $(cat out)"
    grep -q '^alloc 1288490188 0$' out || fail "1.2 GiB under a 1.5 GiB limit refused: $(cat out)"
    grep -q '^alloc 536870912 2$' out || fail "0.5 GiB more not refused with CUDA_ERROR_OUT_OF_MEMORY: $(cat out)"
fi
if [ -n "$smlimit" ]; then
    part=smlimit
    run_dropin "$smlimit:limit=30.5" 4096
    [ "$rc" = 0 ] || fail "exit $rc"
    grep -q '^init 0$' out || fail "CUDA did not start: $(cat out)"
    grep -q '^alloc 4096 0$' out || fail "$(cat out)"
fi
if [ -n "$lua" ]; then
    part=lua
    printf 'cushim.report(cushim.parse_bytes("1.5GiB"))\n' > size.lua
    run_dropin "$lua:script=$dir/size.lua,report=$dir/report.txt" 4096
    [ "$rc" = 0 ] || fail "exit $rc"
    grep -qx '1610612736' report.txt || fail "parse_bytes(\"1.5GiB\") gave: $(cat report.txt 2>/dev/null)"
fi
[ "$status" = 0 ] && echo PASS
exit "$status"
