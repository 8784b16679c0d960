#!/bin/sh
# run_peer.sh PRELOAD PEER_COPY DROPIN_DIR FAKE_DIR OUT_DIR DIRECT_PROGRAM CUDART_PROGRAM
# Two copies of the shim in one process: the one loaded second must see the first and pass every call through,
# so the counts land in exactly one file and equal what the fakes received (run_counts.sh), as with one copy.
# 1. LD_PRELOAD=<shim>:<a copy of it in another folder> (an installed copy plus a build tree's);
# 2. the shim preloaded and the drop-in libcuda.so.1 first on LD_LIBRARY_PATH (the program's libcuda).
# The second copy says so once, at info level, naming both; that line also proves it was loaded.
set -u
preload=$1 copy=$2 dropin=$3 fake=$4 out=$5 direct=$6 cudart=$7
here=$(dirname "$0")
status=0
say() { echo "$*"; status=1; }
one_file() {   # PROGRAM TAG: one counts file, no '<file>.<pid>' beside it
    d=$out/$(basename "$1")$2.counts
    n=$(ls "$d" | grep -c '^shim\(\.[0-9][0-9]*\)\{0,1\}$')
    [ "$n" = 1 ] || say "$(basename "$1")$2: $n counts files, want 1: $(ls "$d" | grep '^shim' | tr '\n' ' ')"
}
peer_line() {   # TAG FIRST SECOND ENV...: run DIRECT_PROGRAM, want one line naming FIRST then SECOND
    tag=$1 first=$2 second=$3
    shift 3
    env "$@" E2E_EXPECT_SHIM=1 CUSHIM_LOG=info "$direct" > /dev/null 2> "$out/peer$tag.err" || say "peer$tag: program failed"
    lines=$(grep 'info: another copy of cushim was loaded first' "$out/peer$tag.err")
    [ "$(printf '%s\n' "$lines" | grep -c .)" = 1 ] || say "peer$tag: want one 'another copy' line, got: $lines"
    printf '%s\n' "$lines" | grep -qF "($first): this copy ($second) passes every call through" \
        || say "peer$tag: the line does not name $first and $second: $lines"
}

shim=${preload##*:}
for p in "$direct" "$cudart"; do
    E2E_RUN_TAG=.peer-preload E2E_RUN_PRELOAD="$preload:$copy" sh "$here/run_counts.sh" "$preload" "$fake" "$out" "$p" \
        || status=1
    one_file "$p" .peer-preload
done
peer_line .preload "$shim" "$copy" LD_PRELOAD="$preload:$copy" LD_LIBRARY_PATH="$fake"

for p in "$direct" "$cudart"; do
    E2E_RUN_TAG=.peer-dropin E2E_RUN_LDPATH="$dropin:$fake" sh "$here/run_counts.sh" "$preload" "$fake" "$out" "$p" \
        || status=1
    one_file "$p" .peer-dropin
done
peer_line .dropin "$shim" "$dropin/libcuda.so.1" LD_PRELOAD="$preload" LD_LIBRARY_PATH="$dropin:$fake"

[ $status = 0 ] && echo "run_peer: one active copy, one counts file, counts equal the fakes'"
exit $status
