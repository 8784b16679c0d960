#!/bin/sh
# rt_cfg_env_test.sh PROG WORKDIR - configuration errors are said, once, and valid values in any case work.
# PROG (rt_cfg_prog, linked with libcushim.so) runs with CUSHIM_REAL_LIBCUDA set to the stand-in driver by
# ctest. Each case checks the shim's lines on stderr ("cushim[pid] level: ...") and what the value did.
set -u
prog=$1 work=$2/rt_cfg_env
rm -rf "$work" && mkdir -p "$work" || exit 1
fail=0
bad() { echo "FAIL: $*"; fail=1; }
# run NAME ENV...: PROG with the given environment; stderr in $work/NAME.err, its shim lines in .lines
run() {
    name=$1
    shift
    env "$@" "$prog" > /dev/null 2> "$work/$name.err" || bad "$name: rt_cfg_prog failed"
    grep '^cushim\[' "$work/$name.err" > "$work/$name.lines"
}
nlines() { wc -l < "$work/$1.lines" | tr -d ' '; }
calls_in() { awk -F'\t' -v n=cuDriverGetVersion '$1 == n { print $2 }' "$1" 2>/dev/null; }

# CUSHIM_DISABLE: booleans in any case; false/no/off/0 leave the shim on (it counts), nonsense too, with a line.
for v in false FALSE no No off 0; do
    run "disable_$v" CUSHIM_DISABLE="$v" CUSHIM_COUNTS="$work/disable_$v.tsv"
    [ "$(calls_in "$work/disable_$v.tsv")" = 3 ] || bad "CUSHIM_DISABLE=$v disabled the shim (no counts)"
    [ "$(nlines "disable_$v")" = 0 ] || bad "CUSHIM_DISABLE=$v: unexpected lines: $(cat "$work/disable_$v.lines")"
done
for v in 1 true TRUE yes On; do
    run "disable_$v" CUSHIM_DISABLE="$v" CUSHIM_COUNTS="$work/disable_$v.tsv"
    [ ! -e "$work/disable_$v.tsv" ] || bad "CUSHIM_DISABLE=$v did not disable the shim"
done
run disable_bad CUSHIM_DISABLE=maybe CUSHIM_COUNTS="$work/disable_bad.tsv"
[ "$(nlines disable_bad)" = 1 ] && grep -q 'warn: CUSHIM_DISABLE="maybe": not a boolean' "$work/disable_bad.lines" \
    || bad "CUSHIM_DISABLE=maybe: expected one line, got: $(cat "$work/disable_bad.lines")"
[ "$(calls_in "$work/disable_bad.tsv")" = 3 ] || bad "CUSHIM_DISABLE=maybe: the shim did not stay enabled"

# CUSHIM_LOG: any case; nonsense is said (and warn is used).
run log_upper CUSHIM_LOG=DEBUG
grep -q 'debug: initialised' "$work/log_upper.lines" || bad "CUSHIM_LOG=DEBUG: no debug line"
run log_info CUSHIM_LOG=Info
! grep -q ' debug: ' "$work/log_info.lines" || bad "CUSHIM_LOG=Info: debug lines"
run log_bad CUSHIM_LOG=nonsense
[ "$(nlines log_bad)" = 1 ] && grep -q 'warn: CUSHIM_LOG="nonsense": not one of debug, info, warn, error, off' \
    "$work/log_bad.lines" || bad "CUSHIM_LOG=nonsense: got: $(cat "$work/log_bad.lines")"
nl='
'
run log_newline CUSHIM_LOG="bad${nl}line"
[ "$(grep -c . "$work/log_newline.err")" = 1 ] && grep -q 'CUSHIM_LOG="bad\\x0aline"' "$work/log_newline.lines" \
    || bad "a value with a newline did not give one escaped line: $(cat "$work/log_newline.err")"

# CUSHIM_COUNTS: empty, over-long, a missing folder: one line each, naming the path and the reason.
run counts_empty CUSHIM_COUNTS=
[ "$(nlines counts_empty)" = 1 ] && grep -q 'CUSHIM_COUNTS="": empty; call counts are off' "$work/counts_empty.lines" \
    || bad "empty CUSHIM_COUNTS: got: $(cat "$work/counts_empty.lines")"
long=$(printf '%05000d' 0)
run counts_long CUSHIM_COUNTS="$work/$long"
[ "$(nlines counts_long)" = 1 ] && grep -q 'longer than 4095 bytes; call counts are off' "$work/counts_long.lines" \
    || bad "over-long CUSHIM_COUNTS: got: $(cat "$work/counts_long.lines")"
run counts_nodir CUSHIM_COUNTS="$work/nodir/c.tsv"
[ "$(nlines counts_nodir)" = 1 ] && grep -qF "CUSHIM_COUNTS=$work/nodir/c.tsv: cannot open: No such file or directory" \
    "$work/counts_nodir.lines" || bad "CUSHIM_COUNTS in a missing folder: got: $(cat "$work/counts_nodir.lines")"
! grep -q 'c\.tsv\.[0-9]' "$work/counts_nodir.lines" || bad "CUSHIM_COUNTS in a missing folder: a .<pid> file is named"
[ ! -e "$work/nodir" ] || bad "a folder was created"

# CUSHIM_LOG_FILE: unopenable -> one line on stderr, and the log goes to stderr; openable -> the log is there.
run logfile_nodir CUSHIM_LOG_FILE="$work/nodir/log.txt" CUSHIM_LOG=debug
grep -qF "warn: CUSHIM_LOG_FILE=\"$work/nodir/log.txt\": cannot open: No such file or directory; logging to stderr" \
    "$work/logfile_nodir.lines" || bad "unopenable CUSHIM_LOG_FILE: got: $(cat "$work/logfile_nodir.lines")"
[ "$(grep -c 'CUSHIM_LOG_FILE' "$work/logfile_nodir.lines")" = 1 ] || bad "unopenable CUSHIM_LOG_FILE: said more than once"
grep -q 'debug: initialised' "$work/logfile_nodir.lines" || bad "unopenable CUSHIM_LOG_FILE: the log is not on stderr"
run logfile_ok CUSHIM_LOG_FILE="$work/log.txt" CUSHIM_LOG=debug
grep -q 'debug: initialised' "$work/log.txt" && [ "$(nlines logfile_ok)" = 0 ] \
    || bad "CUSHIM_LOG_FILE: log not in the file, or lines on stderr"
run logfile_empty CUSHIM_LOG_FILE=
grep -q 'CUSHIM_LOG_FILE="": empty; logging to stderr' "$work/logfile_empty.lines" || bad "empty CUSHIM_LOG_FILE: not said"

# CUSHIM_REAL_LIBCUDA empty: said, ignored.
run libcuda_empty CUSHIM_REAL_LIBCUDA=
grep -q 'CUSHIM_REAL_LIBCUDA="": empty; ignored' "$work/libcuda_empty.lines" || bad "empty CUSHIM_REAL_LIBCUDA: not said"

[ $fail = 0 ] && echo "rt_cfg_env_test: all cases passed"
exit $fail
