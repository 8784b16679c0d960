#!/usr/bin/env bash
# run_remote_jit.sh - JIT options, links and tensor maps over remoting (docs/remote.md, "JIT options" and "Tensor
# maps"), against cushim-serve on the fake driver:
#   1. e2e_remote_jit prints the same as a local run over a unix socket: cuModuleLoadDataEx's logs (the fake
#      driver writes the values it received into the info log), their sizes and the wall time written back, the
#      bytes past them untouched, a log cut short, a failed compile's error log; a link with options and a file of
#      the client's; a library with JIT and library options; tensor maps of ranks 1..5 byte for byte, ranks the
#      driver refuses, an address replaced;
#   2. what remoting refuses (host pointers in GLOBAL_SYMBOL_NAMES, a log without its size option) is 801 and
#      logged once by the option's name, never sent; the server's driver opened no file (cuLinkAddFile, cuModuleLoad
#      and cuLibraryLoadFromFile arrive as cuLinkAddData, cuModuleLoadData and cuLibraryLoadData) and saw the local
#      calls less the refused ones;
#   3. the same over TCP with a token;
#   4. 'cushim apis --remote' lists the tensor map and link APIs as hand-written.
# Usage: run_remote_jit.sh BUILD_DIR PROGRAM OUT_DIR
set -u
build=$1 prog=$2 out=$3
d=$out/remote_jit
# shellcheck source=tests/e2e/remote_lib.sh
. "$(dirname "$0")/remote_lib.sh"
mkdir -p "$d/files"   # the file cuLinkAddFile reads: one path, as the link's log names it

# 1. equal to a local run
LD_LIBRARY_PATH="$fake" FAKE_CUDA_COUNTS="$d/local.counts" "$prog" "$d/files" > "$d/local.out" 2> "$d/local.err" ||
    fail "local run failed: $(cat "$d/local.err")"
serve_fakes --once FAKE_CUDA_COUNTS="$d/unix.counts"
client "" "$prog" "$d/files" > "$d/unix.out" 2> "$d/unix.err" || { fail "remote run failed: $(cat "$d/unix.err")"; kill "$server"; }
wait "$server" || fail "the server's back end exited with $?"
diff <(grep -v '^remote-only' "$d/local.out") <(grep -v '^remote-only' "$d/unix.out") > "$d/unix.diff" ||
    fail "output differs from a local run: $(head -20 "$d/unix.diff")"
# what the run must show (so that equal outputs are not equally wrong)
for want in "load ex: 0, info 83 'fake-jit cuModuleLoadDataEx: 10 options: 3 4=256 5 6=128 2 7=3 0=40 8=0 1=100 13=1' next 78, error 0 '' next 79, wall 0.25 (high 77777777), threads 96, values 3 40" \
            "load ex, small log: 0, info 12 'fake-jit cu' next 78, error 0 '' next 79, wall 0.25 (high 77777777), threads 96, values 3 40" \
            "load ex, bad ptx: 218, info 83 'fake-jit cuModuleLoadDataEx: 10 options: 3 4=256 5 6=128 2 7=3 0=40 8=0 1=100 13=1' next 78, error 50 'fake-jit cuModuleLoadDataEx: line 1: syntax error' next 79, wall 0.25 (high 77777777), threads 96, values 3 40" \
            'add data: threads 64' 'add file: threads 288' 'add missing file: 301' \
            'module from a file: 0, function 0' 'module from a missing file: 301' \
            "library from a file: 0, info 52 'fake-jit cuLibraryLoadData: 3 options: 3 4=128 14=1'" \
            'library from a file, preserved: 1' \
            'potential block size: 0, grid 264 block 1024' 'potential block size, flags: 0, grid 1056 block 256' \
            "linked: 130 bytes, the file's text in" \
            "link created: info 21 'fake-link: 7 options' next 78, error 0 '', wall 0.00" \
            "added bad.ptx: info 28 'fake-link: 7 options +a.ptx' next 78, error 33 'fake-link: bad.ptx: syntax error', wall 0.00" \
            "completed: info $((54 + ${#d})) 'fake-link: 7 options +a.ptx +$d/files/b.ptx = 130 bytes' next 78, error 33 'fake-link: bad.ptx: syntax error', wall 0.50" \
            "destroyed: error log ''" \
            "library: 0, info 52 'fake-jit cuLibraryLoadData: 3 options: 3 4=128 14=1'" \
            'tiled rank 3: 0 base+0 0106030003020000 4000000000000000 2000000000000000 0800000000000000 0000000000000000 0000000000000000 8000000000000000 0010000000000000 0000000000000000 0000000000000000 1000000008000000 0200000000000000 0000000001000000 0100000001000000 0000000000000000' \
            'tiled rank 0: 1' 'tiled rank 6: 1' 'untouched: ee' 'im2col rank 2: 1' \
            'im2col rank 5: 0 base+0 0207050002000100 4000000000000000 2000000000000000 0800000000000000 0400000000000000 0200000000000000 8000000000000000 0010000000000000 0080000000000000 0000020000000000 fffffefffdff0100 0200030008000000 1000000001000000 0100000001000000 0100000001000000' \
            'replace, misaligned: 1'; do
    grep -qxF -- "$want" "$d/unix.out" || fail "no line '$want' in the remote run: $(grep -F "${want%%:*}:" "$d/unix.out" | head -3)"
done
grep -qx 'replace address: 0 base+4096 0309040003030001 .*' "$d/unix.out" || fail "replace address: $(grep replace "$d/unix.out")"
# 2. refused in the client, logged once by name; the server's driver
[ "$(grep -c '^remote-only.*: 801$' "$d/unix.out")" = 4 ] && [ "$(grep -c '^remote-only.*: 0$' "$d/local.out")" = 4 ] ||
    fail "refusals: $(grep remote-only "$d/unix.out" "$d/local.out")"
[ "$(grep -c 'option CU_JIT_GLOBAL_SYMBOL_NAMES not carried' "$d/unix.err")" = 1 ] &&
    [ "$(grep -c 'option CU_JIT_INFO_LOG_BUFFER not carried (a log buffer needs its size option' "$d/unix.err")" = 1 ] ||
    fail "the refused options were not logged once each: $(grep 'not carried' "$d/unix.err")"
[ "$(count "$d/unix.counts" cuLinkAddFile_v2)" = 0 ] && [ "$(count "$d/local.counts" cuLinkAddFile_v2)" = 2 ] &&
    [ "$(count "$d/unix.counts" cuLinkAddData_v2)" = 3 ] && [ "$(count "$d/local.counts" cuLinkAddData_v2)" = 2 ] && [ "$(count "$d/unix.counts" cuModuleLoad)" = 0 ] &&
    [ "$(count "$d/unix.counts" cuLibraryLoadFromFile)" = 0 ] && [ "$(count "$d/local.counts" cuModuleLoad)" = 2 ] &&
    [ "$(count "$d/unix.counts" cuLibraryLoadData)" = 2 ] ||
    fail "the server's driver: cuLinkAddFile_v2 $(count "$d/unix.counts" cuLinkAddFile_v2), cuLinkAddData_v2 $(count "$d/unix.counts" cuLinkAddData_v2) (local $(count "$d/local.counts" cuLinkAddFile_v2), $(count "$d/local.counts" cuLinkAddData_v2))"
[ "$(count "$d/unix.counts" cuModuleLoadDataEx)" = "$(( $(count "$d/local.counts" cuModuleLoadDataEx) - 3 ))" ] &&
    [ "$(count "$d/unix.counts" cuTensorMapEncodeTiled)" = 7 ] && [ "$(count "$d/unix.counts" cuTensorMapReplaceAddress)" = 2 ] ||
    fail "the server's driver: cuModuleLoadDataEx $(count "$d/unix.counts" cuModuleLoadDataEx) (local $(count "$d/local.counts" cuModuleLoadDataEx)), tiled $(count "$d/unix.counts" cuTensorMapEncodeTiled)"

# 3. TCP with a token
tok=$d/token port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
head -c 32 /dev/urandom | base64 > "$tok" && chmod 600 "$tok"
LD_LIBRARY_PATH="$fake" "$serve" --listen="tcp://127.0.0.1:$port" --token-file="$tok" --once > "$d/tcp.log" 2>&1 &
tcpserver=$!
for _ in $(seq 100); do grep -q listening "$d/tcp.log" && break; sleep 0.05; done
env -u LD_PRELOAD LD_LIBRARY_PATH="$dropin" CUSHIM_REAL_LIBCUDA=/nonexistent/libcuda.so.1 \
    CUSHIM_PLUGINS="$plugin:server=tcp://127.0.0.1:$port,token_file=$tok" "$prog" "$d/files" > "$d/tcp.out" 2> "$d/tcp.err" ||
    fail "TCP run failed: $(cat "$d/tcp.err")"
wait "$tcpserver" || fail "the TCP back end exited with $?"
diff "$d/unix.out" "$d/tcp.out" > "$d/tcp.diff" || fail "TCP output differs from the unix socket's: $(head -10 "$d/tcp.diff")"

# 4. the classification
"$build/tools/cushim" apis --remote > "$d/apis.tsv" 2>&1 || fail "cushim apis --remote failed"
for api in cuTensorMapEncodeTiled cuTensorMapEncodeIm2col cuTensorMapEncodeIm2colWide cuTensorMapReplaceAddress \
           cuLinkCreate_v2 cuLinkAddData_v2 cuLinkAddFile_v2 cuModuleLoadDataEx cuLibraryLoadData cuModuleLoad \
           cuLibraryLoadFromFile; do
    awk -F'\t' -v a="$api" '$2 == a && $4 == "hand-written" { f = 1 } END { exit !f }' "$d/apis.tsv" ||
        fail "$api is not hand-written: $(grep -P "\t$api\t" "$d/apis.tsv")"
done
[ $status = 0 ] && echo "run_remote_jit.sh: OK"
exit $status
