#!/bin/sh
# run_info.sh INFO PROBES PROGRAM
# 'cushim plugins PATH' (INFO: cushim-info) against the shim's loader, for the builds of e2e_info_probe.c in PROBES
# (tests/e2e/info.cmake): a plugin the loader refuses is refused by cushim-info too - exit status 1, nothing on
# stdout, one line on stderr giving the loader's own reason - and the reason is the one the shim gives when
# CUSHIM_PLUGINS names that plugin (PROGRAM, run with the shim preloaded over the fake driver, fails closed). The
# good build is described (status 0) and loads.
set -u
info=$1 probes=$2 prog=$3
ma=${INFO_ABI_MAJOR:?} mi=${INFO_ABI_MINOR:?}   # the SDK ABI of the headers (info.cmake)
preload=${LD_PRELOAD-}   # the shim (and a sanitizer runtime before it), for PROGRAM only
unset LD_PRELOAD
dir=${E2E_OUT:-${TMPDIR:-/tmp}}/info_plugins
rm -rf "$dir"
mkdir -p "$dir" && cd "$dir" || exit 1
failed=0
fail() { echo "FAIL [$1]: $2"; failed=1; }

# the shim's reason for refusing plugin file $1 (empty if it loaded it)
shim_reason() {
    env LD_PRELOAD="$preload" CUSHIM_PLUGINS="$1" "$prog" 16 >shim.out 2>shim.err
    sed -n "s/^cushim\[[0-9]*\] error: plugin '[^']*': \(.*\); failing closed: every CUDA call returns an initialisation error$/\1/p" shim.err | head -n 1
}

"$info" plugins "$probes/good.so" >out 2>err
rc=$?
if [ "$rc" = 0 ] && [ ! -s err ] && grep -q '^info-probe 1.0$' out && grep -q "^    limit=bytes, default '1.5GiB'$" out; then
    echo "ok [good]: described"
else
    fail good "status $rc: $(cat out err)"
fi
[ -z "$(shim_reason "$probes/good.so")" ] || fail good "the shim refused it: $(cat shim.err)"

while IFS='|' read -r name why; do
    [ -n "$name" ] || continue
    p=$probes/$name.so
    "$info" plugins "$p" >out 2>err
    rc=$?
    line="cushim-info: $p: the shim would refuse it: $why"
    if [ "$rc" = 1 ] && [ ! -s out ] && [ "$(wc -l < err)" = 1 ] && [ "$(cat err)" = "$line" ]; then
        echo "ok [$name]: $(cat err)"
    else
        fail "$name" "status $rc (1 wanted), stdout: $(head -c 300 out); stderr: $(cat err); wanted: $line"
    fi
    shim=$(shim_reason "$p")
    [ "$shim" = "$why" ] || fail "$name" "the shim's reason differs: '$shim' (its stderr: $(head -c 400 shim.err))"
done <<EOF
badname|the plugin's name is not [a-z0-9_-]{1,63}
longname|the plugin's name is not [a-z0-9_-]{1,63}
small|plugin definition too small (24 bytes; at least 48)
newer|was built for SDK ABI $ma.$((mi + 1)), this shim provides $ma.$mi
major|was built for SDK ABI $((ma + 1)).$mi, this shim provides $ma.$mi
baddefault|the default 'lots' of option 'limit' is not a valid bytes (4096, 512K, 8MiB, 1.5G)
badint|the default '0x' of option 'count' is not a valid int (decimal or 0x hex)
dup|option 'limit' is declared twice
badoptname|declared option name 'Bad-Name' is not [a-z0-9_-]+
emptyoptname|declared option name '' is not [a-z0-9_-]+
badtype|option 'kind' declares an unknown type 0x9
badflags|option 'tag' declares an unknown type 0x501
EOF
# several at once: each judged, the status 1 when any is refused
"$info" plugins "$probes/good.so" "$probes/dup.so" >out 2>err
[ $? = 1 ] && grep -q '^info-probe 1.0$' out && [ "$(wc -l < err)" = 1 ] || fail several "$(cat out err)"
[ "$failed" = 0 ] && echo "info_plugins: all passed"
exit "$failed"
