#!/bin/sh
# run_compare.sh PRELOAD FAKE_DIR OUT_DIR fake|nofake PROGRAM [ARGS...]
# Runs PROGRAM without and with the shim preloaded (LD_LIBRARY_PATH=FAKE_DIR, or empty for 'nofake'); both
# runs must succeed, and the lines they print must be equal once the unshimmed run's "fake:cu..." answers
# are read as "shim:cu..." (the shim's wrapper of the same name in place of the driver's function).
set -u
preload=$1 fake=$2 out=$3 mode=$4
shift 4
prog=$1
ldpath=$fake
[ "$mode" = nofake ] && ldpath=
name=$(basename "$prog")
# Tests that run one program with different arguments must not share output files.
[ $# -gt 1 ] && name="$name$(echo "$*" | cut -d' ' -f2- | tr -c 'A-Za-z0-9\n' '_')"
plain=$out/$name.plain.txt shim=$out/$name.shim.txt
mkdir -p "$out"
env -u LD_PRELOAD LD_LIBRARY_PATH="$ldpath" E2E_EXPECT_SHIM=0 "$@" > "$plain" || { echo "$name failed without the shim"; exit 1; }
env LD_PRELOAD="$preload" LD_LIBRARY_PATH="$ldpath" E2E_EXPECT_SHIM=1 "$@" > "$shim" || { echo "$name failed with the shim"; exit 1; }
grep -v ': ok (with' "$plain" | sed 's/-> fake:cu/-> shim:cu/' > "$plain.expected"
grep -v ': ok (with' "$shim" > "$shim.seen"
[ -s "$plain.expected" ] || { echo "$name printed nothing"; exit 1; }
if ! diff -u "$plain.expected" "$shim.seen" > "$out/$name.diff"; then
    head -60 "$out/$name.diff"
    echo "$name: the shim changed $(grep -c '^+[^+]' "$out/$name.diff") answers (- expected from the run without the shim, + with it; all in $out/$name.diff)"
    exit 1
fi
echo "$name: $(wc -l < "$shim.seen") answers identical with and without the shim"
