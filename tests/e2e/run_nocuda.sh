#!/bin/sh
# run_nocuda.sh PRELOAD
# Programs that have nothing to do with CUDA run unchanged under the shim: same output, same exit status,
# nothing on stderr. No driver is on the library path.
set -u
preload=$1
status=0
check() {   # check NAME CMD...: compare stdout, stderr and status without and with the shim
    name=$1
    shift
    a=$(env -u LD_PRELOAD "$@" 2>&1; echo "status $?")
    b=$(env LD_PRELOAD="$preload" "$@" 2>&1; echo "status $?")
    if [ "$a" != "$b" ]; then
        echo "$name: differs under the shim"
        echo "--- without:"; echo "$a"
        echo "--- with:"; echo "$b"
        status=1
    else
        echo "$name: unchanged ($(echo "$b" | tail -1))"
    fi
}
unset LD_LIBRARY_PATH
check true /bin/true
check false /bin/false
check sh sh -c 'echo hello; ls / > /dev/null'
if command -v python3 > /dev/null 2>&1; then
    check python3 python3 -c 'print(1)'
    check python3-ctypes python3 -c '
import ctypes
try:
    ctypes.CDLL("libcuda.so.1")
    print("driver found")
except OSError as e:
    print("no driver:", e)'
else
    echo "python3: not installed, skipped"
fi
exit $status
