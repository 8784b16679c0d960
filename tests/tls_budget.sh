#!/bin/sh
# tls_budget.sh - the shipped plugins' thread-local storage stays within glibc's optional static TLS.
#
# USAGE: tls_budget.sh EACH TOTAL PLUGIN.so...
#
# A plugin is dlopen'd. glibc gives a dlopen'd library's TLS a place in the static TLS block only while the
# block's optional surplus lasts (glibc.rtld.optional_static_tls, 512 bytes by default, shared by every library
# dlopen'd in the process); past it each access is a call into _dl_tlsdesc_dynamic: 17 instructions and two code
# lines instead of 2 and one, on every recorded call of the trace plugin (bench/cpu/lines.sh; docs/plugin-sdk.md,
# "Thread-local storage"). Fails when one plugin's PT_TLS segment exceeds EACH bytes or all of them TOTAL.
set -eu
each=$1 total=$2
shift 2
command -v readelf >/dev/null || { echo "tls_budget.sh: needs readelf (binutils)" >&2; exit 1; }
sum=0 bad=0
for f in "$@"; do
    [ -e "$f" ] || { echo "tls_budget.sh: no $f" >&2; exit 1; }
    hex=$(readelf -lW "$f" | awk '$1 == "TLS" { print $6 }')
    size=$(( ${hex:-0} ))
    echo "$(basename "$f"): $size bytes of TLS"
    sum=$((sum + size))
    if [ "$size" -gt "$each" ]; then
        echo "FAIL: $(basename "$f") has $size bytes of thread-local storage, more than $each" >&2
        bad=1
    fi
done
echo "all: $sum bytes"
if [ "$sum" -gt "$total" ]; then
    echo "FAIL: the plugins' thread-local storage adds up to $sum bytes, more than $total" >&2
    bad=1
fi
exit $bad
