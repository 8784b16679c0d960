# remote_lib.sh - what the run_remote_*.sh scripts share, sourced once they have set 'build' (the build folder)
# and 'd' (their own output folder): it empties 'd', names the build's programs (fake, dropin, serve, plugin,
# shim; sock the unix socket) and defines
#   fail MESSAGE...           the script's FAIL line; status=1, which the script exits with
#   count FILE NAME           the calls to NAME in a FAKE_*_COUNTS file (0 if none)
#   client OPTIONS PROGRAM... PROGRAM with the shim as libcuda.so.1, the remote plugin given OPTIONS after its
#                             server, no driver anywhere it could find one (a script may define its own client)
#   serve_fakes ARGS ENV=V... cushim-serve on the fake libraries in the background, $server its pid, logged to
#                             $d/serve.log; returns once its socket listens (fail after 5 s)
rm -rf "$d" && mkdir -p "$d"
status=0
fail() { echo "$(basename "$0"): FAIL: $*"; status=1; }
fake=$build/tests/fake dropin=$build/dropin serve=$build/remote/cushim-serve plugin=$build/plugins/remote.so
shim=$build/runtime/libcushim.so
sock=$d/s.sock
count() { awk -F'\t' -v n="$2" '$1 == n { print $2; f = 1 } END { if (!f) print 0 }' "$1" 2>/dev/null; }
client() {
    local opts=$1
    shift
    env -u LD_PRELOAD LD_LIBRARY_PATH="$dropin" CUSHIM_REAL_LIBCUDA=/nonexistent/libcuda.so.1 \
        CUSHIM_PLUGINS="$plugin:server=unix:$sock$opts" "$@"
}
serve_fakes() {   # ARGS: "--once" (one client) or "" (until killed), split on spaces
    local args=$1
    shift
    rm -f "$sock"
    # shellcheck disable=SC2086
    env LD_LIBRARY_PATH="$fake" "$@" "$serve" --listen="unix:$sock" $args >> "$d/serve.log" 2>&1 &
    server=$!
    for _ in $(seq 250); do [ -S "$sock" ] && return 0; sleep 0.02; done
    fail "cushim-serve did not listen"; cat "$d/serve.log"
}
