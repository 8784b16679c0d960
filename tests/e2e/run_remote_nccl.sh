#!/usr/bin/env bash
# run_remote_nccl.sh - NCCL over remoting, on the fakes (docs/remote.md, "NCCL"). Two ranks of e2e_remote_nccl,
# each a client of one cushim-serve (the shim and the remote plugin preloaded, NCCL interposed, no libcuda
# anywhere), pass the unique id through a file and meet through the server's fake NCCL (a folder under the server's
# TMPDIR, as real NCCL's ranks meet through its transports on the server):
#   1. each rank prints what it prints in a local run of two processes on the fakes (an all-reduce outside a group,
#      a group of two, a group whose call NCCL refuses: its error from ncclGroupEnd);
#   2. each back end's fake NCCL received the calls of a local rank, but ncclGetErrorString (answered by the
#      program's own libnccl, which received nothing else); ncclGetLastError's text is the server's NCCL's (the
#      outputs equal);
#   3. the groups cost one round trip each: ncclGroupStart and the calls inside a group are batched (8 calls per
#      rank in 3 batches), the outermost ncclGroupEnd (or ncclGroupSimulateEnd) is answered; the all-reduce outside a group is answered;
#   2b. rank 1 names a made-up and a destroyed communicator too (E2E_HOSTILE=1): they are refused before the server's NCCL sees them
#      (its counts equal the local rank's, which made no such calls) and the back end goes on (the second
#      communicator's all-reduce after them);
#   4. through 'cushim run --remote=' (which interposes NCCL by itself) one rank of a one-rank communicator prints
#      what it prints locally, and the server's NCCL ran its calls.
# Usage: run_remote_nccl.sh BUILD_DIR PROGRAM OUT_DIR
set -u
build=$1 prog=$2 out=$3
d=$out/remote_nccl
# shellcheck source=tests/e2e/remote_lib.sh
. "$(dirname "$0")/remote_lib.sh"

# the local run: two processes on the fakes
for r in 0 1; do
    TMPDIR=$d LD_LIBRARY_PATH="$fake" FAKE_NCCL_COUNTS="$d/local.$r.nccl" "$prog" "$r" 2 "$d/id.local" \
        > "$d/local.$r.out" 2> "$d/local.$r.err" &
    pids[r]=$!
done
for r in 0 1; do
    wait "${pids[r]}" || fail "rank $r failed locally: $(cat "$d/local.$r.err")"
    grep -q "^done" "$d/local.$r.out" || fail "rank $r did not finish locally: $(cat "$d/local.$r.out")"
done

# 1-3. two clients of one server
serve_fakes "" TMPDIR="$d" FAKE_NCCL_COUNTS="$d/server.%p.nccl"
hostile=("" E2E_HOSTILE=1)   # 2b. rank 1 also names communicators it has not (its stats line differs)
for r in 0 1; do
    env -u LD_LIBRARY_PATH LD_PRELOAD="$shim $plugin" CUSHIM_REAL_LIBCUDA=/nonexistent/libcuda.so.1 \
        CUSHIM_LIBS=driver,runtime,nvml,nccl CUSHIM_PLUGINS="$plugin:server=unix:$sock,stats=1" E2E_NO_DRIVER=1 \
        TMPDIR=/nonexistent FAKE_NCCL_COUNTS="$d/client.$r.nccl" ${hostile[r]} "$prog" "$r" 2 "$d/id.remote" \
        > "$d/remote.$r.out" 2> "$d/remote.$r.err" &
    pids[r]=$!
done
for r in 0 1; do
    wait "${pids[r]}" || fail "rank $r failed remotely: $(cat "$d/remote.$r.err")"
done
kill "$server" 2> /dev/null
wait "$server" 2> /dev/null
for _ in $(seq 250); do   # each back end writes its counts as it exits, after its client closed
    [ "$(find "$d" -maxdepth 1 -name 'server.*.nccl' | wc -l)" -ge 2 ] && break
    sleep 0.02
done
for r in 0 1; do
    diff "$d/local.$r.out" "$d/remote.$r.out" > "$d/out.$r.diff" ||
        fail "rank $r: outputs differ: $(cat "$d/out.$r.diff")"
    # the client's own NCCL answered the error text only
    [ "$(cat "$d/client.$r.nccl" 2> /dev/null)" = "$(printf 'ncclGetErrorString\t1')" ] ||
        fail "rank $r: the client's own NCCL was called: $(cat "$d/client.$r.nccl" 2> /dev/null)"
    # (rank 1's hostile part asks ncclGetLastError once more: that one the server answers)
    grep -v "^ncclGetErrorString" "$d/local.$r.nccl" |
        awk -F'\t' -v OFS='\t' -v more="$r" '$1 == "ncclGetLastError" { $2 += more } 1' | sort > "$d/local.$r.want"
    # 3. ncclGroupStart and the group's calls are batched (3 + 2 + 3), each group sent with its end (or simulated
    # end), the one round trip of the group: the ends answered (batched, they would make 11), the all-reduce
    # outside a group answered
    grep -q "remote: pid [0-9]*: .* (8 asynchronous in 3 batches," "$d/remote.$r.err" ||
        fail "rank $r: the groups' calls were not batched: $(grep "^remote:" "$d/remote.$r.err")"
done
# 2. each back end ran one rank's calls (the server's fake counts, one file per back end)
found=0 rank0=0 rank1=0
for f in "$d"/server.*.nccl; do
    [ -e "$f" ] || continue
    found=$((found + 1))
    sort "$f" > "$f.sorted"
    diff "$d/local.0.want" "$f.sorted" > /dev/null && rank0=$((rank0 + 1))
    diff "$d/local.1.want" "$f.sorted" > /dev/null && rank1=$((rank1 + 1))
done
[ "$found" = 2 ] || fail "the server's NCCL counts: $found back ends (want 2): $(ls "$d")"
[ "$rank0" = 1 ] && [ "$rank1" = 1 ] ||
    fail "the back ends' NCCL received other calls than the local ranks': $(head "$d"/server.*.nccl "$d"/local.*.want)"

# 4. cushim run --remote= interposes NCCL by itself: one rank
serve_fakes --once TMPDIR="$d" FAKE_NCCL_COUNTS="$d/run.server.nccl"
TMPDIR=$d LD_LIBRARY_PATH="$fake" "$prog" 0 1 "$d/id.one.local" > "$d/one.local.out" 2>&1 ||
    fail "one rank failed locally: $(cat "$d/one.local.out")"
env -u LD_LIBRARY_PATH FAKE_NCCL_COUNTS="$d/run.client.nccl" \
    "$build/tools/cushim" run --remote="unix:$sock" -- "$prog" 0 1 "$d/id.one.remote" \
    > "$d/one.remote.out" 2> "$d/one.remote.err" || fail "one rank failed under cushim run: $(cat "$d/one.remote.err")"
wait "$server" || fail "the server's back end exited with $?"
diff "$d/one.local.out" "$d/one.remote.out" > "$d/one.diff" || fail "cushim run --remote: outputs differ: $(cat "$d/one.diff")"
[ "$(count "$d/run.server.nccl" ncclCommInitRank)" = 1 ] && [ "$(count "$d/run.server.nccl" ncclAllReduce)" = 9 ] &&
    [ "$(count "$d/run.server.nccl" ncclMemAlloc)" = 1 ] && [ "$(count "$d/run.server.nccl" ncclMemFree)" = 1 ] &&
    [ "$(count "$d/run.server.nccl" ncclRedOpCreatePreMulSum)" = 1 ] && [ "$(count "$d/run.server.nccl" ncclGroupSimulateEnd)" = 1 ] ||
    fail "cushim run --remote: the server's NCCL did not run the calls: $(cat "$d/run.server.nccl" 2> /dev/null)"
[ "$(count "$d/run.client.nccl" ncclAllReduce)" = 0 ] || fail "cushim run --remote: the client's NCCL ran an all-reduce"

[ $status = 0 ] && echo "run_remote_nccl.sh: PASS"
exit $status
