#!/usr/bin/env bash
# run_remote_deploy.sh - remote GPUs deployed with the launcher, on the fake driver (docs/remote-deploy.md):
#   1. 'cushim serve --fake' over a unix socket, vecadd through 'cushim run --remote=' with no driver on the
#      client's path: the output of a local run (the kernel time aside);
#   2. the same over TCP loopback (IPv4, and IPv6 where ::1 exists) with a token file;
#   3. refusals: a wrong token, no token, a token file others can read (client and server), TCP without a token,
#      a stranger's oversized hello;
#   4. server-side plugins in the call path: under 'serve --mem-limit=64MiB' a client sees the quota in
#      cuMemGetInfo and gets CUDA_ERROR_OUT_OF_MEMORY past it, and a second client at the same time has its own;
#      '--mem-budget' makes them share one; '--trace=FILE' writes one file per client;
#   5. '--gpus=LIST' is CUDA_VISIBLE_DEVICES in each back end; '--max-clients=1' turns a second client away
#      (the server is busy) and serves it once the first has ended;
#   6. 'cushim apis --remote': TSV, one row per API, the driver's class counts those of docs/remote.md.
# Usage: run_remote_deploy.sh BUILD_DIR VECADD QUOTA_PROGRAM LOSS_PROGRAM OUT_DIR
set -u
build=$1 vecadd=$2 quota=$3 loss=$4 out=$5
src=$(cd "$(dirname "$0")/../.." && pwd)
d=$out/remote_deploy
rm -rf "$d" && mkdir -p "$d"
status=0
fail() { echo "run_remote_deploy.sh: FAIL: $*"; status=1; }
cushim=$build/tools/cushim
servers=()
trap 'for p in "${servers[@]}"; do kill "$p" 2>/dev/null; done' EXIT
# a client: the launcher's --remote mode, and no driver anywhere it could find one
client() {
    env -u LD_PRELOAD -u CUSHIM_PLUGINS -u LD_LIBRARY_PATH CUSHIM_REAL_LIBCUDA=/nonexistent/libcuda.so.1 \
        "$cushim" run "$@"
}
serve() {   # serve LOG ARGS...: in the background, $server its pid once it listens
    local log=$1
    shift
    "$cushim" serve "$@" > "$log" 2>&1 &
    server=$!
    servers+=("$server")
    for _ in $(seq 200); do grep -q listening "$log" 2>/dev/null && return 0; sleep 0.05; done
    fail "cushim serve $* did not listen: $(cat "$log")"
    return 1
}
stop() { kill "$server" 2>/dev/null; wait "$server" 2>/dev/null; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
normalize() { sed -E 's/kernel [0-9.]+ ms/kernel T ms/' "$1"; }

LD_LIBRARY_PATH="$build/tests/fake" "$vecadd" 1000 > "$d/local.out" 2> "$d/local.err" || fail "vecadd failed locally"

# 1. unix socket
sock=$d/s.sock
[ "$(client --remote="unix:$sock" -- ldd "$vecadd" | awk '/libcuda.so.1/ {print $3}')" = "$build/dropin/libcuda.so.1" ] ||
    fail "the client would load $(client --remote="unix:$sock" -- ldd "$vecadd" | grep libcuda.so.1)"
if serve "$d/unix.log" --fake --listen="unix:$sock"; then
    [ "$(stat -c %a "$sock")" = 600 ] || fail "the socket's mode is $(stat -c %a "$sock"), not 600"
    ! grep -q libcushim "/proc/$server/maps" || fail "the listening process loaded the shim"
    # the older spelling of the client
    env -u LD_PRELOAD -u CUSHIM_PLUGINS -u LD_LIBRARY_PATH CUSHIM_REAL_LIBCUDA=/nonexistent/libcuda.so.1 \
        "$cushim" run --dropin --remote-server="unix:$sock" -- "$vecadd" 1000 > "$d/old.out" 2> "$d/old.err" ||
        fail "--dropin --remote-server= no longer works: $(cat "$d/old.err")"
    client --remote="unix:$sock" -- "$vecadd" 1000 > "$d/unix.out" 2> "$d/unix.err" ||
        fail "vecadd failed over the unix socket: $(cat "$d/unix.err")"
    diff <(normalize "$d/local.out") <(normalize "$d/unix.out") > "$d/unix.diff" ||
        fail "unix: outputs differ: $(cat "$d/unix.diff")"
    stop
fi

# 2. TCP with a token
tok=$d/token bad=$d/bad
head -c 32 /dev/urandom | base64 > "$tok" && chmod 600 "$tok"
head -c 32 /dev/urandom | base64 > "$bad" && chmod 600 "$bad"
port=$(free_port)
if serve "$d/tcp.log" --fake --listen="tcp://127.0.0.1:$port" --token-file="$tok"; then
    client --remote="tcp://127.0.0.1:$port" --remote-token-file="$tok" -- "$vecadd" 1000 > "$d/tcp.out" 2> "$d/tcp.err" ||
        fail "vecadd failed over TCP: $(cat "$d/tcp.err")"
    diff <(normalize "$d/local.out") <(normalize "$d/tcp.out") > "$d/tcp.diff" || fail "tcp: outputs differ: $(cat "$d/tcp.diff")"

    # 3. refusals, at the client's first call, with the reason
    client --remote="tcp://127.0.0.1:$port" --remote-token-file="$bad" -- "$vecadd" 10 > /dev/null 2> "$d/wrong.err" &&
        fail "a wrong token was accepted"
    grep -q "refused this client's token" "$d/wrong.err" || fail "wrong token: no clear error: $(cat "$d/wrong.err")"
    for _ in $(seq 100); do grep -q "wrong token" "$d/tcp.log" && break; sleep 0.05; done
    grep -q "refused: wrong token" "$d/tcp.log" || fail "the server did not log the wrong token: $(cat "$d/tcp.log")"
    client --remote="tcp://127.0.0.1:$port" -- "$vecadd" 10 > /dev/null 2> "$d/none.err" && fail "no token was accepted"
    grep -q "needs a token, and this client has none" "$d/none.err" || fail "no token: no clear error: $(cat "$d/none.err")"
    chmod 640 "$bad"
    client --remote="tcp://127.0.0.1:$port" --remote-token-file="$bad" -- "$vecadd" 10 > /dev/null 2> "$d/mode.err" &&
        fail "a client token file readable by its group was used"
    grep -q "can be read or written by others (mode 0640)" "$d/mode.err" ||
        fail "client token mode: no clear error: $(cat "$d/mode.err")"
    # a stranger announcing a 64 MiB hello is dropped at once, from the header alone
    python3 - "$port" > "$d/big.out" 2>&1 << 'PY' || fail "a 64 MiB hello before authentication: $(cat "$d/big.out")"
import socket, struct, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.settimeout(5)
t = time.monotonic()
s.sendall(struct.pack("<IHHII", 0x4d524843, 2, 1, 64 << 20, 0))
if s.recv(1) != b"" or time.monotonic() - t > 3:
    sys.exit("not dropped at once")
PY
    # the server still serves after all that
    client --remote="tcp://127.0.0.1:$port" --remote-token-file="$tok" -- "$vecadd" 10 > /dev/null 2> "$d/after.err" ||
        fail "the server did not serve a good client after refusals: $(cat "$d/after.err")"
    stop
fi
if python3 -c 'import socket; socket.socket(socket.AF_INET6).bind(("::1", 0))' 2> /dev/null; then
    port=$(free_port)
    if serve "$d/tcp6.log" --fake --listen="tcp://[::1]:$port" --token-file="$tok"; then
        client --remote="tcp://[::1]:$port" --remote-token-file="$tok" -- "$vecadd" 1000 > "$d/tcp6.out" 2> "$d/tcp6.err" ||
            fail "vecadd failed over TCP/IPv6: $(cat "$d/tcp6.err")"
        diff <(normalize "$d/local.out") <(normalize "$d/tcp6.out") > /dev/null || fail "tcp6: outputs differ"
        stop
    fi
else
    echo "run_remote_deploy.sh: no IPv6 loopback here: the IPv6 case is skipped"
fi
"$cushim" serve --fake --listen="tcp://127.0.0.1:$port" --token-file="$bad" > "$d/srvmode.out" 2>&1 &&
    fail "the server started with a token file readable by its group"
grep -q "can be read or written by others" "$d/srvmode.out" || fail "server token mode: $(cat "$d/srvmode.out")"
"$cushim" serve --fake --listen="tcp://127.0.0.1:$port" > "$d/notoken.out" 2>&1 && fail "TCP served without a token"
grep -q "give --token-file=FILE" "$d/notoken.out" || fail "TCP without a token: $(cat "$d/notoken.out")"

# 4. a memory quota per client, on the server; a trace file per client
if serve "$d/quota.log" --fake --listen="unix:$sock" --mem-limit=64MiB --trace="$d/t.json"; then
    rm -f "$d/go"
    (client --remote="unix:$sock" -- "$quota" 8388608 "$d/go" > "$d/qa.out" 2> "$d/qa.err") &
    qa=$!
    for _ in $(seq 200); do grep -q allocated "$d/qa.out" 2>/dev/null && break; sleep 0.05; done
    client --remote="unix:$sock" -- "$quota" 8388608 > "$d/qb.out" 2> "$d/qb.err" || fail "quota client B: $(cat "$d/qb.err")"
    touch "$d/go"
    wait "$qa" || fail "quota client A: $(cat "$d/qa.err")"
    for q in qa qb; do
        grep -q "^total 67108864 " "$d/$q.out" || fail "$q: cuMemGetInfo does not report the 64 MiB quota: $(cat "$d/$q.out")"
        grep -qx "allocated 8 then 2" "$d/$q.out" ||
            fail "$q: not 8 blocks of 8 MiB then CUDA_ERROR_OUT_OF_MEMORY: $(cat "$d/$q.out")"
    done
    stop
    n=$(ls "$d"/t.*.json 2> /dev/null | wc -l)
    [ "$n" = 2 ] || fail "--trace: $n trace files for 2 clients: $(ls "$d")"
fi
# a Perfetto trace per client keeps its ending (the name picks the format)
if serve "$d/pf.log" --fake --listen="unix:$sock" --trace="$d/p.perfetto-trace"; then
    client --remote="unix:$sock" -- "$vecadd" 1000 > /dev/null 2> "$d/pf.err" || fail "vecadd under a Perfetto trace: $(cat "$d/pf.err")"
    stop
    f=$(ls "$d"/p.*.perfetto-trace 2> /dev/null | head -1)
    [ -n "$f" ] && [ "$(head -c 1 "$f" | od -An -tx1 | tr -d ' ')" = 0a ] ||
        fail "--trace=p.perfetto-trace: no per-client Perfetto file (a TracePacket starts with 0x0a): $(ls "$d")"
fi

# ... and one shared by both with --mem-budget: the second client gets nothing while the first holds it all
if serve "$d/budget.log" --fake --listen="unix:$sock" --mem-limit=64MiB --mem-budget="$d/budget.region"; then
    rm -f "$d/go"
    (client --remote="unix:$sock" -- "$quota" 8388608 "$d/go" > "$d/ba.out" 2> "$d/ba.err") &
    qa=$!
    for _ in $(seq 200); do grep -q allocated "$d/ba.out" 2>/dev/null && break; sleep 0.05; done
    client --remote="unix:$sock" -- "$quota" 8388608 > "$d/bb.out" 2> "$d/bb.err" || fail "budget client B: $(cat "$d/bb.err")"
    touch "$d/go"
    wait "$qa"
    grep -qx "allocated 8 then 2" "$d/ba.out" || fail "budget: client A: $(cat "$d/ba.out")"
    grep -qx "allocated 0 then 2" "$d/bb.out" || fail "budget: client B shares A's budget: $(cat "$d/bb.out")"
    stop
fi

# 5. --gpus
if serve "$d/gpus.log" --fake --listen="unix:$sock" --gpus=1; then
    rm -f "$d/go5"
    (client --remote="unix:$sock" -- "$loss" "$d/go5" > "$d/g.out" 2> "$d/g.err") &
    cl=$!
    for _ in $(seq 200); do grep -q ready "$d/g.out" 2> /dev/null && break; sleep 0.05; done
    be=$(pgrep -P "$server" | head -1)
    if [ -z "$be" ]; then
        fail "--gpus: no back end"
    else
        tr '\0' '\n' < "/proc/$be/environ" | grep -qx "CUDA_VISIBLE_DEVICES=1" ||
            fail "--gpus=1: the back end's environment has $(tr '\0' '\n' < "/proc/$be/environ" | grep CUDA_VISIBLE || echo no CUDA_VISIBLE_DEVICES)"
    fi
    kill -9 "$be" 2> /dev/null   # the client's next call then fails, which e2e_remote_loss expects
    touch "$d/go5"
    wait "$cl"
    stop
fi
# 5b. --max-clients: a second client while one is served is told the server is busy; served after the first ends
if serve "$d/max.log" --fake --listen="unix:$sock" --max-clients=1; then
    rm -f "$d/go5b"
    (client --remote="unix:$sock" -- "$loss" "$d/go5b" > "$d/m1.out" 2> "$d/m1.err") &
    cl=$!
    for _ in $(seq 200); do grep -q ready "$d/m1.out" 2> /dev/null && break; sleep 0.05; done
    client --remote="unix:$sock" -- "$vecadd" 1000 > "$d/m2.out" 2> "$d/m2.err" && fail "--max-clients=1: a second client was served"
    grep -q "is serving as many clients as it may" "$d/m2.err" || fail "--max-clients=1: the second client says: $(cat "$d/m2.err")"
    grep -q "refused a local client: 1 back ends already (--max-clients=1" "$d/max.log" || fail "--max-clients: server log: $(cat "$d/max.log")"
    [ "$(pgrep -c -P "$server")" = 1 ] || fail "--max-clients=1: $(pgrep -c -P "$server") back ends"
    kill -9 "$(pgrep -P "$server" | head -1)" 2> /dev/null   # the first client's next call fails (e2e_remote_loss expects it)
    touch "$d/go5b"
    wait "$cl"
    for _ in $(seq 100); do [ "$(pgrep -c -P "$server")" = 0 ] && break; sleep 0.05; done
    client --remote="unix:$sock" -- "$vecadd" 1000 > "$d/m3.out" 2> "$d/m3.err" || fail "--max-clients=1: not served after the first ended: $(cat "$d/m3.err")"
    stop
fi
"$cushim" serve --fake --listen="unix:$sock" --max-clients=0 > "$d/max0.out" 2>&1 && fail "--max-clients=0 accepted"
"$cushim" serve --fake --listen="unix:$sock" --gpus='0;1' > "$d/gpusbad.out" 2>&1 && fail "--gpus='0;1' accepted"
# usage errors: one line and the synopsis, status 2
"$cushim" serve --fake > "$d/nolisten.out" 2>&1; [ $? = 2 ] && grep -q "give the address to listen on" "$d/nolisten.out" ||
    fail "serve without --listen: $(cat "$d/nolisten.out")"
"$cushim" serve --listen="unix:$sock" "$vecadd" > "$d/prog.out" 2>&1; [ $? = 2 ] && grep -q "serve takes no program" "$d/prog.out" ||
    fail "serve with a program: $(cat "$d/prog.out")"
"$cushim" serve --listen=udp://x > "$d/udp.out" 2>&1; [ $? = 2 ] && grep -q "the address is unix:/path" "$d/udp.out" ||
    fail "serve --listen=udp://x: $(cat "$d/udp.out")"
"$cushim" serve --help | grep -q "^usage: cushim serve" || fail "cushim serve --help"
"$cushim" run --remote=udp://x -- true > "$d/rudp.out" 2>&1; [ $? = 2 ] || fail "run --remote=udp://x: $(cat "$d/rudp.out")"

# 6. cushim apis --remote
"$cushim" apis --remote > "$d/apis.tsv" 2> "$d/apis.err" || fail "cushim apis --remote: $(cat "$d/apis.err")"
[ "$(head -1 "$d/apis.tsv")" = "$(printf 'id\tapi\tlibrary\tclass\treason')" ] || fail "apis --remote header: $(head -1 "$d/apis.tsv")"
awk -F'\t' 'NR > 1 && NF != 5 { bad = 1 } END { exit bad }' "$d/apis.tsv" || fail "apis --remote: a row without 5 fields"
[ "$(($(wc -l < "$d/apis.tsv") - 1))" = "$(($(grep -vc '^#' "$build/tools/apis.tsv") - 1))" ] ||
    fail "apis --remote lists $(($(wc -l < "$d/apis.tsv") - 1)) APIs, apis.tsv $(($(grep -vc '^#' "$build/tools/apis.tsv") - 1))"
grep -qP '^\d+\tcuMemAlloc_v2\tdriver\tforward\t$' "$d/apis.tsv" || fail "cuMemAlloc_v2 is not forward"
grep -qP '^\d+\tcuMemAllocHost_v2\tdriver\tneeds-hand\t.+' "$d/apis.tsv" || fail "cuMemAllocHost_v2: not needs-hand with a reason"
# the driver column of docs/remote.md's class table, which gives the 13.0 tree's counts (the other releases'
# trees, tools/test-release.sh, have other APIs)
classes="forward forward-if-null hand-written needs-hand unsupported"
head -1 "$build/tools/apis.tsv" | grep -q "from CUDA 13\.0 headers" ||
    { echo "run_remote_deploy.sh: not the 13.0 tree: the class counts are not compared"; classes=""; }
for cls in $classes; do
    want=$(awk -F'|' -v c="$cls" '$2 ~ "^ " c " $" { gsub(/[ *]/, "", $4); print $4; exit }' "$src/docs/remote.md")
    got=$(awk -F'\t' -v c="$cls" '$3 == "driver" && $4 == c' "$d/apis.tsv" | wc -l)
    [ -n "$want" ] && [ "$got" = "$want" ] || fail "apis --remote: $got driver APIs are $cls, docs/remote.md says '$want'"
done
"$cushim" apis --remote 'cuNoSuchApi*' > /dev/null 2>&1 && fail "apis --remote: a glob matching nothing exits 0"

[ $status = 0 ] && echo "run_remote_deploy.sh: serve/run --remote over unix and TCP, tokens, quotas, --gpus, apis --remote"
exit $status
