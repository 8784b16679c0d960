#!/bin/sh
# rt_counts_files_test.sh PROG SHIM WORKDIR - where CUSHIM_COUNTS lines go, and which paths the shim leaves alone.
# PROG is rt_cfg_prog (linked with libcushim.so, SHIM); ctest points CUSHIM_REAL_LIBCUDA at the stand-in driver.
# The shim must never remove, rename or replace a path: it writes through symlinks and descriptors, truncates
# an earlier run's regular file in place, and never creates '<path>.<pid>' for a descriptor path.
# (/dev/stderr itself is not used here: a shim with the bug would replace the machine's /dev/stderr. A link
# of our own to /proc/self/fd/2, and one to /dev/stderr, take the same code path and are safe to lose.)
set -u
prog=$1 shim=$2 work=$3/rt_counts_files
rm -rf "$work" && mkdir -p "$work" || exit 1
cd "$work" || exit 1
fail=0
bad() { echo "FAIL: $*"; fail=1; }
# the cuDriverGetVersion counts in a file, ascending, space-separated (one per process that wrote there)
calls_in() { awk -F'\t' -v n=cuDriverGetVersion '$1 == n { print $2 }' "$1" 2>/dev/null | sort -n | tr '\n' ' ' | sed 's/ $//'; }
headers_in() { grep -c '^# cushim counts pid [0-9]*$' "$1"; }
only_files() {   # DIR NAME...: the directory holds exactly these names
    dir=$1
    shift
    want=$(printf '%s\n' "$@" | sed '/^$/d' | sort | tr '\n' ' ')
    have=$(ls -A "$dir" | sort | tr '\n' ' ')
    [ "$have" = "$want" ] || bad "files in $dir: got [$have], want [$want]"
}

# 1. CUSHIM_COUNTS=- : stderr as it was at start (here a regular file), even after the program re-points
#    fd 2 at /dev/null; a forked child appends there too. No file named '-' appears.
mkdir d1 && cd d1
CUSHIM_COUNTS=- "$prog" --fork --stderr-null 2> ../d1.err || bad "1: program failed"
cd ..
[ "$(calls_in d1.err)" = "2 3" ] || bad "1: CUSHIM_COUNTS=- : counts in stderr are [$(calls_in d1.err)], want [2 3]"
[ "$(headers_in d1.err)" = 2 ] || bad "1: want 2 '# cushim counts pid' headers: $(cat d1.err)"
only_files d1

# 2. a link of ours to /proc/self/fd/2 and one to /dev/stderr (what the launcher passed for --counts=-), with
#    stderr a regular file: the links stay links, the counts (parent and forked child) go to stderr.
for l in proc:/proc/self/fd/2 dev:/dev/stderr; do
    n=${l%%:*} target=${l#*:}
    mkdir "d2$n" && ln -s "$target" "d2$n/err"
    CUSHIM_COUNTS="$work/d2$n/err" "$prog" --fork 2> "d2$n.err" || bad "2$n: program failed"
    [ -L "d2$n/err" ] && [ "$(readlink "d2$n/err")" = "$target" ] || bad "2$n: the link to $target was replaced"
    [ "$(calls_in "d2$n.err")" = "2 3" ] || bad "2$n: counts via a link to $target: [$(calls_in "d2$n.err")], want [2 3]"
    only_files "d2$n" err
done

# 3. a link to a regular file left by an earlier run, which has a second (hard) link: written through the
#    link, truncated in place (the hard link sees the new counts), nothing removed.
mkdir -p d3/data && printf 'stale\t99\n' > d3/data/c.tsv && ln d3/data/c.tsv d3/hard && ln -s data/c.tsv d3/c.lnk
CUSHIM_COUNTS="$work/d3/c.lnk" "$prog" --calls=4 || bad "3: program failed"
[ -L d3/c.lnk ] || bad "3: the link was replaced"
[ "$(calls_in d3/hard)" = 4 ] && ! grep -q stale d3/hard || bad "3: want the run's counts in the linked file: $(cat d3/hard)"
only_files d3 data c.lnk hard

# 4. two programs one after the other under one preloaded shell: the first writes <path>, the second
#    <path>.<pid> (the first's counts survive); the shell counted nothing and wrote nothing.
mkdir d4 && printf 'stale\t1\n' > d4/c.tsv
LD_PRELOAD="$shim" CUSHIM_COUNTS="$work/d4/c.tsv" sh -c '"$0" --calls=5 && "$0" --calls=6' "$prog" || bad "4: failed"
[ "$(calls_in d4/c.tsv)" = 5 ] || bad "4: first program's counts: [$(calls_in d4/c.tsv)], want 5"
set -- d4/c.tsv.*
[ $# = 1 ] && [ "$(calls_in "$1")" = 6 ] || bad "4: want one c.tsv.<pid> with 6 calls: $*"

# 5. a FIFO nobody reads and a directory: never replaced; the directory is said at start.
mkdir d5 && mkfifo d5/fifo && mkdir d5/dir
CUSHIM_LOG=off CUSHIM_COUNTS="$work/d5/fifo" "$prog" || bad "5: program failed with a FIFO"
[ -p d5/fifo ] || bad "5: the FIFO was replaced"
CUSHIM_COUNTS="$work/d5/dir" "$prog" 2> d5.err || bad "5: program failed with a directory"
grep -qF "CUSHIM_COUNTS=$work/d5/dir: Is a directory; call counts are off" d5.err || bad "5: directory: $(cat d5.err)"
only_files d5 fifo dir

# 6. a program that closes the descriptors it did not open and reuses their numbers for its own file: the
#    counts (and the log) must not land in, or truncate, that file; <path> is written by name instead.
mkdir d6
CUSHIM_COUNTS="$work/d6/c.tsv" "$prog" --calls=7 --close-fds="$work/d6/victim" || bad "6: program failed"
[ "$(cat d6/victim)" = mine ] || bad "6: the program's own file was written: $(cat d6/victim)"
[ "$(calls_in d6/c.tsv)" = 7 ] || bad "6: counts: [$(calls_in d6/c.tsv)], want 7"
CUSHIM_COUNTS=- CUSHIM_LOG_FILE="$work/d6/log.txt" "$prog" --close-fds="$work/d6/victim2" 2> d6.err \
    || bad "6: program failed (-)"
[ "$(cat d6/victim2)" = mine ] || bad "6: the program's own file was written (-): $(cat d6/victim2)"
grep -q 'error: cannot write call counts to stderr (CUSHIM_COUNTS=-): Bad file descriptor' d6.err \
    || bad "6: the lost duplicate of stderr is not said on stderr: $(cat d6.err)"

[ $fail = 0 ] && echo "rt_counts_files_test: all cases passed"
exit $fail
