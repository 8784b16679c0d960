#!/usr/bin/env bash
# run_remote_ipc.sh - CUDA IPC handles over remoting, on the fake driver (docs/remote.md, "IPC"). The fake driver
# shares device memory between processes (FAKE_CUDA_IPC=1: a memfd per allocation, opened through /proc/PID/fd), so
# two back ends of one cushim-serve exchange memory as two processes on a GPU host do. The server has two token
# files (two tenants) on its unix socket; e2e_remote_ipc:
#   1. 'export' (tenant 1) fills device memory and writes its handle and an event's; 'import' of tenant 1 opens
#      both, reads the pattern and writes a marker that the exporter then reads back: both print what they print
#      in a local run of two processes on the fake driver;
#   2. 'import' of tenant 2 (another token) is refused: CUDA_ERROR_INVALID_HANDLE (400) for the memory and the
#      event handle, the reason in the server's log, and the server's driver never saw those opens;
#   3. 'bogus' (tenant 1) opens a handle nobody exported through the server: refused the same way (locally the
#      fake driver would map it);
#   4. without tokens (the unix peer's uid is the identity) export and import work as locally;
#   5. 'cushim serve' with two --token-file serves a client of each and refuses a third token;
#   6. a POSIX file descriptor export (driver, runtime pool) is refused in the client (801), the reason logged.
# 1-3 run twice: with the driver API and with the runtime API only, in PyTorch's order (rt-export, rt-import,
# rt-bogus; e2e_remote_ipc.c).
# Usage: run_remote_ipc.sh BUILD_DIR PROGRAM OUT_DIR
set -u
build=$1 prog=$2 out=$3
d=$out/remote_ipc
# shellcheck source=tests/e2e/remote_lib.sh
. "$(dirname "$0")/remote_lib.sh"
export FAKE_CUDA_IPC=1
rt_client() {   # the runtime API's client: the shim preloaded (it interposes the runtime), no driver
    local opts=$1
    shift
    env -u LD_LIBRARY_PATH LD_PRELOAD="$shim $plugin" CUSHIM_REAL_LIBCUDA=/nonexistent/libcuda.so.1 \
        CUSHIM_PLUGINS="$plugin:server=unix:$sock$opts" "$@"
}
for t in 1 2; do
    head -c 24 /dev/urandom | base64 > "$d/token$t"
    chmod 600 "$d/token$t"
done

# the local run: two processes on the fake driver
LD_LIBRARY_PATH="$fake" "$prog" export "$d/local.h" > "$d/local.export.out" 2>&1 &
exporter=$!
LD_LIBRARY_PATH="$fake" "$prog" import "$d/local.h" > "$d/local.import.out" 2>&1 || fail "import failed locally"
touch "$d/local.h.done"
wait "$exporter" || fail "export failed locally: $(cat "$d/local.export.out")"
grep -q "^sum " "$d/local.import.out" && grep -q "word 0 0xc0ffee" "$d/local.export.out" ||
    fail "the local run did not share the memory: $(cat "$d/local.import.out" "$d/local.export.out")"
LD_LIBRARY_PATH="$fake" "$prog" rt-export "$d/local.rt.h" > "$d/local.rt.export.out" 2>&1 &
exporter=$!
LD_LIBRARY_PATH="$fake" "$prog" rt-import "$d/local.rt.h" > "$d/local.rt.import.out" 2>&1 || fail "rt-import failed locally"
touch "$d/local.rt.h.done"
wait "$exporter" || fail "rt-export failed locally: $(cat "$d/local.rt.export.out")"
grep -q "^sum " "$d/local.rt.import.out" && grep -q "word 0 0x5a5a5a5a" "$d/local.rt.export.out" ||
    fail "the local runtime run did not share the memory: $(cat "$d/local.rt.import.out" "$d/local.rt.export.out")"

# 1-3. one server, two tenants
serve_fakes "--token-file=$d/token1 --token-file=$d/token2" CUSHIM_COUNTS="$d/server.counts"
client ",token_file=$d/token1" "$prog" export "$d/r.h" > "$d/remote.export.out" 2> "$d/remote.export.err" &
exporter=$!
client ",token_file=$d/token1" "$prog" import "$d/r.h" > "$d/remote.import.out" 2> "$d/remote.import.err" ||
    fail "import (tenant 1) failed: $(cat "$d/remote.import.err")"
client ",token_file=$d/token2" "$prog" import "$d/r.h" > "$d/remote.other.out" 2> "$d/remote.other.err" ||
    fail "import (tenant 2) failed: $(cat "$d/remote.other.err")"
client ",token_file=$d/token1" "$prog" bogus > "$d/remote.bogus.out" 2> "$d/remote.bogus.err" ||
    fail "bogus failed: $(cat "$d/remote.bogus.err")"
touch "$d/r.h.done"
wait "$exporter" || fail "export failed remotely: $(cat "$d/remote.export.err")"
# the runtime API, as PyTorch
rt_client ",token_file=$d/token1" "$prog" rt-export "$d/rt.h" > "$d/remote.rt.export.out" 2> "$d/remote.rt.export.err" &
exporter=$!
rt_client ",token_file=$d/token1" "$prog" rt-import "$d/rt.h" > "$d/remote.rt.import.out" 2> "$d/remote.rt.import.err" ||
    fail "rt-import (tenant 1) failed: $(cat "$d/remote.rt.import.err")"
rt_client ",token_file=$d/token2" "$prog" rt-import "$d/rt.h" > "$d/remote.rt.other.out" 2> "$d/remote.rt.other.err" ||
    fail "rt-import (tenant 2) failed: $(cat "$d/remote.rt.other.err")"
rt_client ",token_file=$d/token1" "$prog" rt-bogus > "$d/remote.rt.bogus.out" 2> "$d/remote.rt.bogus.err" ||
    fail "rt-bogus failed: $(cat "$d/remote.rt.bogus.err")"
touch "$d/rt.h.done"
wait "$exporter" || fail "rt-export failed remotely: $(cat "$d/remote.rt.export.err")"
kill "$server" 2> /dev/null
wait "$server" 2> /dev/null
diff "$d/local.export.out" "$d/remote.export.out" > "$d/export.diff" || fail "export: outputs differ: $(cat "$d/export.diff")"
diff "$d/local.import.out" "$d/remote.import.out" > "$d/import.diff" || fail "import: outputs differ: $(cat "$d/import.diff")"
[ "$(cat "$d/remote.other.out")" = "$(printf 'open mem 400\nopen event 400')" ] ||
    fail "another tenant opened the handles: $(cat "$d/remote.other.out")"
[ "$(cat "$d/remote.bogus.out")" = "open bogus 400" ] || fail "a handle nobody exported was opened: $(cat "$d/remote.bogus.out")"
diff "$d/local.rt.export.out" "$d/remote.rt.export.out" > "$d/rt.export.diff" ||
    fail "rt-export: outputs differ: $(cat "$d/rt.export.diff" "$d/remote.rt.export.err")"
diff "$d/local.rt.import.out" "$d/remote.rt.import.out" > "$d/rt.import.diff" ||
    fail "rt-import: outputs differ: $(cat "$d/rt.import.diff" "$d/remote.rt.import.err")"
[ "$(cat "$d/remote.rt.other.out")" = "$(printf 'open event 400\nopen mem 400')" ] ||
    fail "another tenant opened the runtime's handles: $(cat "$d/remote.rt.other.out")"
[ "$(cat "$d/remote.rt.bogus.out")" = "open bogus 400" ] ||
    fail "a handle nobody exported was opened by the runtime: $(cat "$d/remote.rt.bogus.out")"
grep -q "cudaIpcOpenMemHandle refused: the memory handle was exported by a client of another identity" "$d/serve.log" &&
    grep -q "cudaIpcOpenEventHandle refused: the event handle was exported by a client of another identity" "$d/serve.log" &&
    grep -q "cudaIpcOpenMemHandle refused: the memory handle was not exported through this server" "$d/serve.log" ||
    fail "the runtime's refusals are not in the server's log: $(cat "$d/serve.log")"
[ "$(grep -c "cuIpcOpenMemHandle_v2 refused: the memory handle was exported by a client of another identity" "$d/serve.log")" = 1 ] &&
    grep -q "cuIpcOpenEventHandle refused: the event handle was exported by a client of another identity" "$d/serve.log" &&
    grep -q "cuIpcOpenMemHandle_v2 refused: the memory handle was not exported through this server" "$d/serve.log" ||
    fail "the refusals are not in the server's log: $(cat "$d/serve.log")"
# the server's driver opened the memory and the event twice (tenant 1: driver and runtime API), never for tenant 2 or
# the bogus handles
opens=0 eopens=0
for f in "$d"/server.counts.*; do
    [ -e "$f" ] || continue
    opens=$((opens + $(count "$f" cuIpcOpenMemHandle_v2)))
    eopens=$((eopens + $(count "$f" cuIpcOpenEventHandle)))
done
[ "$opens" = 2 ] && [ "$eopens" = 2 ] || fail "the server's driver opened $opens memory and $eopens event handles (want 2 and 2)"

# 4. no token: the unix peer's uid is the identity
serve_fakes ""
client "" "$prog" export "$d/u.h" > "$d/uid.export.out" 2> "$d/uid.export.err" &
exporter=$!
client "" "$prog" import "$d/u.h" > "$d/uid.import.out" 2> "$d/uid.import.err" || fail "import (uid) failed"
touch "$d/u.h.done"
wait "$exporter" || fail "export (uid) failed: $(cat "$d/uid.export.err")"
kill "$server" 2> /dev/null
wait "$server" 2> /dev/null
diff "$d/local.import.out" "$d/uid.import.out" > "$d/uid.diff" || fail "import (uid): outputs differ: $(cat "$d/uid.diff")"

# 5. 'cushim serve' passes every --token-file: a client of the second token is served, one of a third refused
head -c 24 /dev/urandom | base64 > "$d/token3"
chmod 600 "$d/token3"
rm -f "$sock"
"$build/tools/cushim" serve --fake --listen="unix:$sock" --token-file="$d/token1" --token-file="$d/token2" \
    > "$d/launcher.log" 2>&1 &
server=$!
for _ in $(seq 250); do [ -S "$sock" ] && break; sleep 0.02; done
client ",token_file=$d/token1" "$prog" bogus > "$d/launcher.1.out" 2> "$d/launcher.1.err"
client ",token_file=$d/token2" "$prog" bogus > "$d/launcher.2.out" 2> "$d/launcher.2.err"
client ",token_file=$d/token3" "$prog" bogus > "$d/launcher.3.out" 2> "$d/launcher.3.err"
kill "$server" 2> /dev/null
wait "$server" 2> /dev/null
[ "$(cat "$d/launcher.1.out")" = "open bogus 400" ] && [ "$(cat "$d/launcher.2.out")" = "open bogus 400" ] ||
    fail "cushim serve with two tokens did not serve both: $(cat "$d"/launcher.[12].out "$d"/launcher.[12].err)"
grep -q "refused this client's token" "$d/launcher.3.err" ||
    fail "cushim serve served a third token: $(cat "$d/launcher.3.out" "$d/launcher.3.err")"

# 6. shareable handles (file descriptors of the back end) are refused by the client, with the reason
serve_fakes ""
client "" "$prog" fd > "$d/fd.out" 2> "$d/fd.err"
rt_client "" "$prog" rt-fd > "$d/rt.fd.out" 2> "$d/rt.fd.err"
kill "$server" 2> /dev/null
wait "$server" 2> /dev/null
why="a shareable handle is a file descriptor (or fabric handle) of the server's back end"
[ "$(cat "$d/fd.out")" = "export fd 801" ] && grep -q "cuMemExportToShareableHandle: .*$why" "$d/fd.err" ||
    fail "cuMemExportToShareableHandle was not refused with its reason: $(cat "$d/fd.out" "$d/fd.err")"
[ "$(tail -1 "$d/rt.fd.out")" = "export fd 801" ] && grep -q "cudaMemPoolExportToShareableHandle: .*$why" "$d/rt.fd.err" ||
    fail "cudaMemPoolExportToShareableHandle was not refused with its reason: $(cat "$d/rt.fd.out" "$d/rt.fd.err")"

[ $status = 0 ] && echo "run_remote_ipc.sh: PASS"
exit $status
