#!/usr/bin/env bash
# run_remote_vmm.sh - virtual memory management over remoting (docs/remote.md, "Virtual memory management"), as
# JAX's allocator uses it, through cushim-serve on the fake driver and a client with no driver:
#   1. e2e_remote_vmm map: granularity, cuMemCreate, the handle's properties, reserve, map, set access, a memset
#      and copies into the mapped range read back, retain by address, unmap, free, release: the same output as a
#      local run, every step CUDA_SUCCESS; the server's driver saw each VMM call;
#   2. e2e_remote_vmm export: an exportable handle type (POSIX fd, fabric) is refused with
#      CUDA_ERROR_NOT_SUPPORTED (801) and a reason, before the server sees it; none is created;
#   3. e2e_remote_vmm quota: under the server's memlimit (5 MiB) a client's cuMemCreate is charged to its quota:
#      two 2 MiB handles, the third CUDA_ERROR_OUT_OF_MEMORY (2).
# Usage: run_remote_vmm.sh BUILD_DIR VMM_PROGRAM OUT_DIR
set -u
build=$1 prog=$2 out=$3
d=$out/remote_vmm
# shellcheck source=tests/e2e/remote_lib.sh
. "$(dirname "$0")/remote_lib.sh"

# 1. map and use, remote = local
LD_LIBRARY_PATH="$fake" "$prog" map > "$d/map.local" 2> "$d/map.local.err" ||
    fail "map failed locally: $(cat "$d/map.local" "$d/map.local.err")"
serve_fakes --once FAKE_CUDA_COUNTS="$d/map.counts"
client "" "$prog" map > "$d/map.remote" 2> "$d/map.remote.err" ||
    fail "map failed remotely: $(cat "$d/map.remote" "$d/map.remote.err")"
wait "$server" || fail "the server's back end exited with $?"
diff "$d/map.local" "$d/map.remote" > "$d/map.diff" || fail "VMM differs from a local run: $(cat "$d/map.diff")"
grep -qx 'start equals the copied block: 1' "$d/map.remote" && grep -qx 'middle holds the memset: 1' "$d/map.remote" &&
    grep -qx 'retained the mapped handle: 1' "$d/map.remote" ||
    fail "the mapped memory did not hold its data: $(cat "$d/map.remote")"
grep -qx 'properties: type 1 location 1/0 handle types 0 win32 NULL usage 0' "$d/map.remote" ||
    fail "the handle's properties: $(grep properties "$d/map.remote")"
[ "$(grep -v 'after unmap' "$d/map.remote" | grep -c ': 0$')" = 17 ] ||
    fail "not 17 successful steps: $(cat "$d/map.remote")"
for f in cuMemGetAllocationGranularity cuMemCreate cuMemAddressReserve cuMemMap cuMemSetAccess cuMemUnmap \
         cuMemAddressFree cuMemGetAllocationPropertiesFromHandle cuMemRetainAllocationHandle; do
    [ "$(count "$d/map.counts" $f)" = 1 ] || fail "the server's driver saw $f $(count "$d/map.counts" $f) times"
done
[ "$(count "$d/map.counts" cuMemRelease)" = 2 ] || fail "cuMemRelease on the server: $(count "$d/map.counts" cuMemRelease)"

# 2. exportable handles: refused in the client, with the reason
serve_fakes --once FAKE_CUDA_COUNTS="$d/export.counts"
client "" "$prog" export > "$d/export.remote" 2> "$d/export.remote.err" ||
    fail "export failed remotely: $(cat "$d/export.remote.err")"
wait "$server" || fail "the server's back end exited with $?"
printf '%s\n' 'cuMemCreate posix fd: 801' 'cuMemCreate fabric: 801' 'cuMemCreate none: 0' 'cuMemRelease: 0' |
    diff - "$d/export.remote" > "$d/export.diff" || fail "exportable handles: $(cat "$d/export.diff")"
grep -q "cuMemCreate: .*requestedHandleTypes is CU_MEM_HANDLE_TYPE_NONE.*returns CUDA_ERROR_NOT_SUPPORTED" \
    "$d/export.remote.err" || fail "no reason logged for the refusal: $(cat "$d/export.remote.err")"
[ "$(count "$d/export.counts" cuMemCreate)" = 1 ] ||
    fail "the server's driver saw cuMemCreate $(count "$d/export.counts" cuMemCreate) times, not once"

# 3. the server's quota charges a client's cuMemCreate
serve_fakes --once FAKE_CUDA_COUNTS="$d/quota.counts" CUSHIM_PLUGINS="$build/plugins/memlimit.so:limit=5MiB"
client "" "$prog" quota > "$d/quota.remote" 2> "$d/quota.remote.err" ||
    fail "quota failed remotely: $(cat "$d/quota.remote.err")"
wait "$server" || fail "the server's back end exited with $?"
grep -qx 'created 2 then 2' "$d/quota.remote" || fail "quota: $(cat "$d/quota.remote" "$d/quota.remote.err")"

[ $status = 0 ] && echo "run_remote_vmm.sh: VMM remote = local, exportable handles refused, quota charged"
exit $status
