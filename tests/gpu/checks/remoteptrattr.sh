# remoteptrattr.sh - GPU check of values sized by their attribute over remoting (docs/remote.md, "Values sized by
# their attribute"): what the real driver writes for each pointer attribute, and the attributes through
# cushim-serve on this machine's driver, the client with no driver on its path.
# Sourced by tests/gpu/run.sh; `bash tests/gpu/run.sh build-gpu remoteptrattr` runs it (a few seconds).
#   remoteptrattr sizes    for device, pinned and managed memory, cuPointerGetAttribute of attributes 1..22 into a
#                          32-byte buffer filled with two canaries in turn: the bytes the driver wrote are exactly
#                          remote/rm_special.c's size for the attribute (FAIL names it: the table is wrong, and a
#                          client's variable would be overrun or left part unwritten); P2P tokens may be 12 of
#                          their 16 (the struct's members, its tail padding untouched: the remoting carries the
#                          program's bytes in, so untouched bytes come back as they were); booleans 4 (an int, as
#                          driver 580 writes them); the driver's sizes in $LOGS/remoteptrattr.sizes.out
#   remoteptrattr remote   tests/e2e/e2e_remote_ptrattr attrs natively and through cushim-serve: the same lines
#                          (P2P tokens and memory block ids, per process, masked); both outputs and their diff in
#                          $LOGS/remoteptrattr.{native,remote}.out and .diff
#   remoteptrattr jit      tests/gpu/remote/jit_tma.c natively and through cushim-serve (docs/remote.md, "JIT options
#                          and tensor maps"): cuModuleLoadDataEx's info and error logs (ptxas's text), sizes, wall time
#                          and threads per block; a link with its logs and wall time (kept by the driver for the link's
#                          life), a file of the client's, a failing input, the linked kernel run; cuTensorMapEncodeTiled/Im2col and cuTensorMapReplaceAddress: the same lines.
#                          Both runs and the server with CUDA_CACHE_DISABLE=1: the driver's JIT cache
#                          (~/.nv/ComputeCache, keyed by the PTX) is the user's, shared by the native run and the
#                          back end; a load that hits it runs no ptxas - no info log, size 0, wall time 0 (run 161's
#                          FAIL: the remote run came second). The native program twice more with a cache of its own
#                          shows that (the detail's "cached:"); outputs and diff in $LOGS/remoteptrattr.jit.*

check_remoteptrattr() {
    local cuda=${CUDA_HOME:-/usr/local/cuda} serve=$BUILD_DIR/remote/cushim-serve plugin=$BUILD_DIR/plugins/remote.so
    local sock=$WORK/remoteptrattr.sock server d=$WORK/remoteptrattr
    mkdir -p "$d"
    cat >"$d/sizes.c" <<'CEOF'
#include <cuda.h>
#include <stdio.h>
#include <string.h>
static int wrote(CUdeviceptr p, int attr, int *rc)
{
    unsigned char b[32];
    int n = 0;
    for (int pass = 0; pass < 2; pass++) {
        unsigned char c = pass ? 0x5a : 0xa5;
        memset(b, c, sizeof b);
        *rc = (int)cuPointerGetAttribute(b, (CUpointer_attribute)attr, p);
        for (int i = 0; i < 32; i++)
            if (b[i] != c && i + 1 > n)
                n = i + 1;
    }
    return n;
}
int main(void)
{
    CUcontext ctx;
    CUdeviceptr d, m;
    void *h;
    if (cuInit(0) || cuDevicePrimaryCtxRetain(&ctx, 0) || cuCtxSetCurrent(ctx) || cuMemAlloc(&d, 4096) ||
        cuMemAllocHost(&h, 4096) || cuMemAllocManaged(&m, 4096, CU_MEM_ATTACH_GLOBAL))
        return 1;
    CUdeviceptr p[3] = { d, (CUdeviceptr)(uintptr_t)h, m };
    const char *what[3] = { "device", "pinned", "managed" };
    for (int k = 0; k < 3; k++)
        for (int a = 1; a <= 22; a++) {
            int rc, n = wrote(p[k], a, &rc);
            printf("%s %d %d %d\n", what[k], a, rc, n);
        }
    return 0;
}
CEOF
    if ! tmo 90 "${CC:-gcc}" -O2 -I"$cuda/include" "$d/sizes.c" -o "$BIN/rpa_sizes" -L"$(dirname "$REAL_LIBCUDA")" \
            -l:"$(basename "$REAL_LIBCUDA")" >"$LOGS/remoteptrattr.build" 2>&1 ||
       ! tmo 90 "${CC:-gcc}" -O2 -I"$cuda/include" "$ROOT/tests/e2e/e2e_remote_ptrattr.c" -o "$BIN/rpa_attrs" \
            -L"$DROPIN" -l:libcuda.so.1 >>"$LOGS/remoteptrattr.build" 2>&1 ||
       ! tmo 90 "${CC:-gcc}" -O2 -I"$cuda/include" "$ROOT/tests/gpu/remote/jit_tma.c" -o "$BIN/rpa_jit" \
            -L"$DROPIN" -l:libcuda.so.1 >>"$LOGS/remoteptrattr.build" 2>&1; then
        result "remoteptrattr" FAIL "build: $(tail -n 3 "$LOGS/remoteptrattr.build" | tr '\n' ' ' | cut -c1-200)"; return
    fi
    # rm_special.c's sizes, attribute 1..22 (0: not in the table)
    local table=(8 4 8 8 16 4 8 4 4 4 8 8 4 8 4 4 8 8 8 8 4 4) over="" under="" bools=""
    LD_LIBRARY_PATH="$(dirname "$REAL_LIBCUDA")" tmo 60 "$BIN/rpa_sizes" >"$d/sizes.out" 2>"$LOGS/remoteptrattr.sizes.err" ||
        { result "remoteptrattr sizes" FAIL "rc $?: $(head -c 300 "$LOGS/remoteptrattr.sizes.err")"; }
    cp "$d/sizes.out" "$LOGS/remoteptrattr.sizes.out" 2>/dev/null
    while read -r what a rc n; do
        [ "$rc" = 0 ] || continue
        case $a in
        6|8|10|13|15|21) bools="$bools $what/$a:$n" ;;
        esac
        if [ "$n" -gt "${table[$((a - 1))]}" ]; then
            over="$over $what/$a:$n>${table[$((a - 1))]}"
        elif [ "$n" != "${table[$((a - 1))]}" ] && ! { [ "$a" = 5 ] && [ "$n" = 12 ]; }; then
            under="$under $what/$a:$n!=${table[$((a - 1))]}"   # P2P tokens: 12 of 16, the tail padding
        fi
    done <"$d/sizes.out"
    if [ ! -s "$d/sizes.out" ]; then
        result "remoteptrattr sizes" FAIL "no output"
    elif [ -n "$over$under" ]; then
        result "remoteptrattr sizes" FAIL "the driver's sizes differ from the table's (remote/rm_special.c):$over$under"
    else
        result "remoteptrattr sizes" PASS "no attribute past its size; booleans wrote (bytes):$bools"
    fi
    if [ ! -x "$serve" ] || [ ! -f "$plugin" ]; then
        result "remoteptrattr remote" SKIP "no cushim-serve or remote.so in $BUILD_DIR"; return
    fi
    rm -f "$sock"
    CUDA_CACHE_DISABLE=1 CUSHIM_REAL_LIBCUDA="$REAL_LIBCUDA" tmo 120 "$serve" --listen="unix:$sock" \
        >"$LOGS/remoteptrattr.serve" 2>&1 &
    server=$!
    for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.1; done
    LD_LIBRARY_PATH="$(dirname "$REAL_LIBCUDA")" tmo 60 "$BIN/rpa_attrs" attrs >"$d/native" 2>"$LOGS/remoteptrattr.native.err"
    local rn=$?
    tmo 60 env -u LD_PRELOAD LD_LIBRARY_PATH="$DROPIN" CUSHIM_REAL_LIBCUDA=/nonexistent/libcuda.so.1 CUSHIM_LOG=error \
        CUSHIM_PLUGINS="$plugin:server=unix:$sock" "$BIN/rpa_attrs" attrs >"$d/remote" 2>"$LOGS/remoteptrattr.remote.err"
    local rr=$?
    mkdir -p "$d/jit.files"   # one folder for both runs: a link's log may name the file it read
    CUDA_CACHE_DISABLE=1 LD_LIBRARY_PATH="$(dirname "$REAL_LIBCUDA")" tmo 60 "$BIN/rpa_jit" "$d/jit.files" \
        >"$d/jit.native.out" 2>"$LOGS/remoteptrattr.jit.native.err"
    local jn=$? cached="" k
    for k in 1 2; do   # the driver's JIT cache, cold then warm: what a load that hits it writes back
        rm -f "$d/jit.cache$k.out"
        CUDA_CACHE_PATH="$d/jitcache" LD_LIBRARY_PATH="$(dirname "$REAL_LIBCUDA")" tmo 60 "$BIN/rpa_jit" "$d/jit.files" \
            >"$d/jit.cache$k.out" 2>>"$LOGS/remoteptrattr.jit.native.err"
        cached="$cached $k: $(grep -m1 '^load ex:' "$d/jit.cache$k.out");"
        cp "$d/jit.cache$k.out" "$LOGS/remoteptrattr.jit.cache$k.out" 2>/dev/null
    done
    tmo 60 env -u LD_PRELOAD LD_LIBRARY_PATH="$DROPIN" CUSHIM_REAL_LIBCUDA=/nonexistent/libcuda.so.1 CUSHIM_LOG=error \
        CUSHIM_PLUGINS="$plugin:server=unix:$sock" "$BIN/rpa_jit" "$d/jit.files" >"$d/jit.remote.out" \
        2>"$LOGS/remoteptrattr.jit.remote.err"
    local jr=$?
    kill "$server" 2>/dev/null
    wait "$server" 2>/dev/null
    cp "$d/native" "$LOGS/remoteptrattr.native.out" 2>/dev/null
    cp "$d/remote" "$LOGS/remoteptrattr.remote.out" 2>/dev/null
    cp "$d/jit.native.out" "$LOGS/remoteptrattr.jit.native.out" 2>/dev/null
    cp "$d/jit.remote.out" "$LOGS/remoteptrattr.jit.remote.out" 2>/dev/null
    diff "$d/jit.native.out" "$d/jit.remote.out" >"$LOGS/remoteptrattr.jit.diff" 2>&1
    if [ $jn -ne 0 ] || [ $jr -ne 0 ]; then
        result "remoteptrattr jit" FAIL "native rc $jn, remote rc $jr: $(head -c 300 "$LOGS/remoteptrattr.jit.native.err" \
            "$LOGS/remoteptrattr.jit.remote.err" | tr '\n' ' ')"
    elif ! diff "$d/jit.native.out" "$d/jit.remote.out" >"$d/jit.diff"; then
        result "remoteptrattr jit" FAIL "native and remote differ (cached:$cached): $(head -c 400 "$d/jit.diff" | tr '\n' ' ')"
    else
        result "remoteptrattr jit" PASS "$(wc -l <"$d/jit.remote.out") lines equal: $(grep -m1 '^load ex:' "$d/jit.remote.out"), $(grep -m1 'tiled rank 3' "$d/jit.remote.out"), $(grep -m1 'linked kernel' "$d/jit.remote.out"); cached:$cached"
    fi
    local mask='s/^\([a-z+0-9]* attr \(5\|20\): 0 [0-9]* bytes\).*/\1 (masked)/'
    if [ $rn -ne 0 ] || [ $rr -ne 0 ]; then
        result "remoteptrattr remote" FAIL "native rc $rn, remote rc $rr: $(head -c 300 "$LOGS/remoteptrattr.native.err" \
            "$LOGS/remoteptrattr.remote.err" | tr '\n' ' ')"
    elif ! diff <(sed "$mask" "$d/native") <(sed "$mask" "$d/remote") >"$d/diff"; then
        cp "$d/diff" "$LOGS/remoteptrattr.diff" 2>/dev/null
        result "remoteptrattr remote" FAIL "native and remote differ: $(head -c 400 "$d/diff" | tr '\n' ' ')"
    else
        result "remoteptrattr remote" PASS "$(wc -l <"$d/remote") lines equal: $(grep -m2 'pinned+100 attr [34]:' "$d/remote" | tr '\n' ' ')"
    fi
}

gpu_check remoteptrattr check_remoteptrattr
