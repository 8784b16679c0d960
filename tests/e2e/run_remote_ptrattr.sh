#!/usr/bin/env bash
# run_remote_ptrattr.sh - pointer attributes over remoting (docs/remote.md, "Values sized by their attribute"),
# against cushim-serve on the fake driver (FAKE_CUDA_HOST_REGISTER=1: the back end registers the client's pinned
# regions, so its driver knows them as host memory, as a real one does):
#   1. e2e_remote_ptrattr: cuPointerGetAttribute of every attribute on device, pinned and pageable memory at two
#      offsets, cuPointerGetAttributes with one output NULL, cuPointerSetAttribute(SYNC_MEMOPS): the same output
#      as a local run - each value the same size (no byte written past it; booleans an int and P2P tokens 12 bytes
#      of their 16, as the fake writes them like driver 580: the bytes past them the program's), pinned memory's addresses the program's
#      own (translated from the back end's mapping), attribute 1000 refused (CUDA_ERROR_NOT_SUPPORTED, logged once
#      by the client and never sent); the server's driver received the calls (not the refused ones);
#   2. with shm=0 the pinned memory is the client's alone: the server's driver does not know it (1,
#      CUDA_ERROR_INVALID_VALUE), device memory as before;
#      cuLaunchKernelEx with launch attributes (a cluster, cooperative, a priority) ran as locally, a cluster that
#      does not divide the grid refused by the server's driver as by the local one (CUDA_ERROR_INVALID_CLUSTER_SIZE),
#      cuOccupancyMaxActiveClusters answered by the cluster size; a launch attribute whose value holds a pointer
#      (DEVICE_UPDATABLE_KERNEL_NODE) refused in the client (801);
#      cuLinkComplete's image (a buffer of the server's driver) copied back: its size and text as locally, loaded as
#      a module; cuMemGetAllocationGranularity and cuMemCreate of a CUmemAllocationProp (XLA's allocator) as locally,
#      one with win32HandleMetaData set refused in the client (801);
#   3. 'cushim apis --remote' lists the three APIs as hand-written.
# Usage: run_remote_ptrattr.sh BUILD_DIR PROGRAM OUT_DIR
set -u
build=$1 prog=$2 out=$3
d=$out/remote_ptrattr
# shellcheck source=tests/e2e/remote_lib.sh
. "$(dirname "$0")/remote_lib.sh"
# attributes 1..22 this build's tree does not name are refused by the client, as 1000 is
ver=$(sed -n 's/^CUSHIM_CUDA_VERSION:STRING=//p' "$build/CMakeCache.txt")
src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt")
refused=1
for a in IS_HW_DECOMPRESS_CAPABLE LOCALITY_DOMAIN_ORDINAL; do
    grep -q "\"CU_POINTER_ATTRIBUTE_$a\"" "$src/generated/cuda-$ver/cushim_meta.c" || refused=$((refused + 1))
done
start_server() {   # start_server NAME: one client; its counts in $d/NAME.counts
    serve_fakes --once FAKE_CUDA_COUNTS="$d/$1.counts" FAKE_CUDA_HOST_REGISTER=1
}

# 1. equal to a local run
LD_LIBRARY_PATH="$fake" FAKE_CUDA_COUNTS="$d/local.counts" "$prog" > "$d/local.out" 2> "$d/local.err" ||
    fail "local run failed: $(cat "$d/local.err")"
start_server attrs
client "" "$prog" > "$d/remote.out" 2> "$d/remote.err" || { fail "remote run failed: $(cat "$d/remote.err")"; kill "$server"; }
wait "$server" || fail "the server's back end exited with $?"
grep -qxF 'updatable: 801' "$d/remote.out" || fail "a launch attribute holding a pointer was not refused: $(grep updatable "$d/remote.out")"
grep -qxF 'win32: 801' "$d/remote.out" || fail "win32HandleMetaData was not refused: $(grep win32 "$d/remote.out")"
diff <(grep -v '^updatable:\|^win32:' "$d/local.out") <(grep -v '^updatable:\|^win32:' "$d/remote.out") > "$d/attrs.diff" || fail "output differs from a local run: $(head -20 "$d/attrs.diff")"
# what the run must show (so that equal outputs are not equally wrong)
for want in 'device attr 2: 0 4 bytes 02 00 00 00' 'device+100 attr 1: 0 8 bytes current' \
            'device+100 attr 3: 0 8 bytes base+100' 'device+100 attr 11: 0 8 bytes base+0' \
            'device attr 8: 0 4 bytes 00 00 00 00' 'device attr 12: 0 8 bytes 00 10 00 00 00 00 00 00' \
            'device attr 13: 0 4 bytes 01 00 00 00' 'device attr 5: 0 12 bytes 01 10 00 00 00 00 00 00 01 00 00 00' \
            'device attr 4: 1 but 8 bytes written' \
            'pinned attr 2: 0 4 bytes 01 00 00 00' 'pinned+100 attr 4: 0 8 bytes base+100' \
            'pinned+100 attr 3: 0 8 bytes base+100' 'pinned attr 1000: 801' 'pageable attr 2: 1' \
            'sync_memops device: 1' 'buffer ids differ: 1' 'pinned copy: 7 7' 'launch ex: 0 0, 5 5' \
            'launch ex, cluster of 3: 912' 'after: 5' 'clusters of 2: 0 64' 'clusters, none: 0 128' \
            "linked: 45 bytes, text '.version 7.0" 'linked module: 0' 'link with options: 0' \
            'granularity: 0 2097152' 'create: 0, release: 0' 'granularity, device 99: 101'; do
    grep -qxF -- "$want" "$d/remote.out" || fail "no line '$want' in the remote run: $(grep -F "${want%%:*}:" "$d/remote.out" | head -3)"
done
grep -qF 'pinned+100 all: 0 |1 current |2 01 00 00 00 |3 base+100 |4 base+100 |8 00 00 00 00 |9 |11 base+0 |12 00 20 00 00 00 00 00 00 |13 01 00 00 00' "$d/remote.out" ||
    fail "cuPointerGetAttributes on pinned memory: $(grep 'pinned+100 all' "$d/remote.out")"
[ "$(grep -c 'cuPointerGetAttribute.*not supported\|cuPointerGetAttribute.*codec cannot carry' "$d/remote.err")" = 1 ] ||
    fail "the unknown attribute was not logged once: $(grep cuPointerGetAttribute "$d/remote.err")"
# the server's driver: every call the local driver saw, but those the client refused (2 per pointer and attribute)
[ "$(count "$d/attrs.counts" cuPointerGetAttribute)" = "$(( $(count "$d/local.counts" cuPointerGetAttribute) - 10 * refused ))" ] ||
    fail "the server's driver received $(count "$d/attrs.counts" cuPointerGetAttribute) cuPointerGetAttribute, local $(count "$d/local.counts" cuPointerGetAttribute)"
[ "$(count "$d/attrs.counts" cuPointerGetAttributes)" = 5 ] && [ "$(count "$d/attrs.counts" cuPointerSetAttribute)" = 2 ] ||
    fail "the server's driver received $(count "$d/attrs.counts" cuPointerGetAttributes) cuPointerGetAttributes, $(count "$d/attrs.counts" cuPointerSetAttribute) cuPointerSetAttribute"

# 2. shm=0: pinned memory is the client's heap, unknown to the server's driver
start_server sock
client ",shm=0" "$prog" > "$d/sock.out" 2> "$d/sock.err" || { fail "shm=0 run failed: $(cat "$d/sock.err")"; kill "$server"; }
wait "$server" || fail "shm=0: the server's back end exited with $?"
grep -qxF 'pinned attr 2: 1' "$d/sock.out" && grep -qxF 'device attr 2: 0 4 bytes 02 00 00 00' "$d/sock.out" ||
    fail "shm=0: $(grep 'attr 2:' "$d/sock.out")"

# 3. the classification
"$build/tools/cushim" apis --remote > "$d/apis.tsv" 2>&1 || fail "cushim apis --remote failed"
for api in cuPointerGetAttribute cuPointerGetAttributes cuPointerSetAttribute; do
    awk -F'\t' -v a="$api" '$2 == a && $4 == "hand-written" { f = 1 } END { exit !f }' "$d/apis.tsv" ||
        fail "$api is not hand-written: $(grep -P "\t$api\t" "$d/apis.tsv")"
done
[ $status = 0 ] && echo "run_remote_ptrattr.sh: OK"
exit $status
