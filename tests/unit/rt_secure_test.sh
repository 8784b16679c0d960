#!/bin/sh
# rt_secure_test.sh PROG STUB_LIBCUDA WORKDIR - secure-execution mode (setuid) ignores every CUSHIM_* variable
# that names a file or code, and says so on stderr.
# A set-user-ID-root copy of PROG (rt_secure_prog) is run by an unprivileged user (setpriv): ruid != euid, so
# the kernel sets AT_SECURE. CUSHIM_COUNTS names an existing root-only file, CUSHIM_LOG_FILE a file in a
# root-only folder, CUSHIM_REAL_LIBCUDA a driver there: the file must stay untouched, no log file and no
# '<counts>.<pid>' may appear, and the driver must not be loaded (PROG checks that itself). A control run
# of the same program, not setuid, must do all three, so the checks can fail.
# Needs root (to make a set-user-ID-root program); exits 77 (skipped) with the reason otherwise, and when the
# filesystem ignores set-user-ID bits (nosuid).
set -u
prog=$1 stub=$2 base=$3
[ "$(id -u)" = 0 ] || { echo "SKIP: not root: cannot create a set-user-ID-root program"; exit 77; }
command -v setpriv > /dev/null || { echo "FAIL: setpriv (util-linux) not found"; exit 1; }
# A folder every user can traverse (the build tree may not be), in TMPDIR.
t=$(mktemp -d "${TMPDIR:-/tmp}/rt_secure.XXXXXX") || exit 1
trap 'rm -rf "$t"' EXIT
chmod 755 "$t"
fail=0
bad() { echo "FAIL: $*"; fail=1; }
cp "$prog" "$t/prog" && chown 0:0 "$t/prog" && chmod 4755 "$t/prog" || exit 1
for d in secret control; do
    mkdir -m 700 "$t/$d" && cp "$stub" "$t/$d/libcuda.so.1" && printf 'precious\n' > "$t/$d/counts.tsv" &&
        chmod 600 "$t/$d/counts.tsv" || exit 1
done

# Control: not setuid, same variables: the driver is loaded, counts are written, the log file is created.
CUSHIM_COUNTS="$t/control/counts.tsv" CUSHIM_LOG_FILE="$t/control/log.txt" \
    CUSHIM_REAL_LIBCUDA="$t/control/libcuda.so.1" RT_FORBIDDEN_LIB="$t/control/libcuda.so.1" \
    "$prog" || bad "control run failed"
grep -q '^cuDriverGetVersion	2$' "$t/control/counts.tsv" || bad "control run: no counts written"
[ -f "$t/control/log.txt" ] || bad "control run: no log file"

# Secure: setuid root, run as nobody.
setpriv --reuid=65534 --regid=65534 --clear-groups -- env \
    CUSHIM_COUNTS="$t/secret/counts.tsv" CUSHIM_LOG_FILE="$t/secret/log.txt" \
    CUSHIM_REAL_LIBCUDA="$t/secret/libcuda.so.1" RT_FORBIDDEN_LIB="$t/secret/libcuda.so.1" \
    "$t/prog" --expect-secure > "$t/out" 2> "$t/err"
rc=$?
cat "$t/out"
if [ $rc = 77 ]; then
    echo "SKIP: $(findmnt -n -o TARGET,OPTIONS -T "$t" 2>/dev/null)"
    exit 77
fi
[ $rc = 0 ] || bad "setuid run failed (exit $rc)"
[ "$(cat "$t/secret/counts.tsv")" = precious ] || bad "the root-only counts file was changed: $(cat "$t/secret/counts.tsv")"
[ "$(ls -A "$t/secret" | sort | tr '\n' ' ')" = "counts.tsv libcuda.so.1 " ] \
    || bad "files appeared in the root-only folder: $(ls -A "$t/secret")"
for v in CUSHIM_COUNTS CUSHIM_LOG_FILE CUSHIM_REAL_LIBCUDA; do
    [ "$(grep -c "warn: secure-execution mode (setuid, setgid or capabilities): $v is ignored" "$t/err")" = 1 ] \
        || bad "want one line saying $v is ignored"
done
[ $fail = 0 ] || { echo "stderr of the setuid run:"; cat "$t/err"; }
[ $fail = 0 ] && echo "rt_secure_test: all checks passed"
exit $fail
