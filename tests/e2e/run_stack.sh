#!/bin/sh
# run_stack.sh PREFIX SHIM LAYER_LIB ORDER FAKE_DIR OUT_DIR PROGRAM [ARGS...]
# Runs PROGRAM with the shim and a fake interposer (libe2e_layer_<name>.so) both preloaded, the layer
# first (ORDER=layer-first: LD_PRELOAD=PREFIX+LAYER:SHIM) or second (shim-first: PREFIX+SHIM:LAYER;
# PREFIX is a sanitizer runtime with its ':', or '-' for none). The program checks the per-API counts of
# both layers and the driver itself (e2e_stack.c); here the shim's CUSHIM_COUNTS file is checked:
#   layer first: it equals what the fakes received (FAKE_CUDA_COUNTS + FAKE_CUDART_COUNTS): every
#                call that reached the driver passed the shim exactly once, and nothing else did;
#   shim first:  for an API the layer hooks, the layer's own count (E2E_LAYER_COUNTS: the shim
#                passed each call on exactly once); for any other API, what the driver received.
set -u
prefix=$1 shim=$2 layer=$3 order=$4 fake=$5 out=$6
shift 6
[ "$prefix" = - ] && prefix=
lname=$(basename "$layer" .so)
lname=${lname#libe2e_layer_}
name=$(basename "$1")_$(echo " $*" | cut -d' ' -f3- | tr -c 'A-Za-z0-9\n' '_').$lname.$order
dir=$out/$name.stack
rm -rf "$dir"
mkdir -p "$dir"
case $order in
    layer-first) preload="$prefix$layer:$shim" ;;
    shim-first) preload="$prefix$shim:$layer" ;;
    *) echo "run_stack.sh: ORDER must be layer-first or shim-first"; exit 2 ;;
esac
case $lname in
    hami) hooked="cuInit cuDriverGetVersion cuDeviceGetCount cuMemAlloc_v2 cuMemFree_v2 cuGetProcAddress cuGetProcAddress_v2" ;;
    *) hooked="cuInit cuDriverGetVersion cuDeviceGetCount cuMemAlloc_v2 cuMemFree_v2" ;;
esac
env LD_PRELOAD="$preload" LD_LIBRARY_PATH="$fake" E2E_EXPECT_SHIM=1 E2E_STACK_LAYER="$lname" \
    E2E_STACK_ORDER="$order" E2E_LAYER_LIMIT=1048576 CUSHIM_COUNTS="$dir/shim" FAKE_CUDA_COUNTS="$dir/drv" \
    FAKE_CUDART_COUNTS="$dir/rt" E2E_LAYER_COUNTS="$dir/layer" "$@" || { echo "$name failed"; exit 1; }
[ -f "$dir/shim" ] || { echo "$name: the shim wrote no counts file"; exit 1; }
touch "$dir/drv" "$dir/rt" "$dir/layer"
cat "$dir/drv" "$dir/rt" | sort > "$dir/fakes.sorted"
if [ "$order" = layer-first ]; then
    cp "$dir/fakes.sorted" "$dir/expected"
else
    awk -F'\t' -v hooked="$hooked" '
        BEGIN { n = split(hooked, h, " "); for (i = 1; i <= n; i++) isl[h[i]] = 1 }
        FILENAME == ARGV[1] { lay[$1] = $2; next }
        !($1 in isl) { print }
        END { for (k in lay) if (lay[k] > 0) print k "\t" lay[k] }' "$dir/layer" "$dir/fakes.sorted" |
        sort > "$dir/expected"
fi
sort "$dir/shim" > "$dir/shim.sorted"
if ! diff -u "$dir/expected" "$dir/shim.sorted" > "$dir/diff"; then
    cat "$dir/diff"
    echo "$name: the shim's counts differ from the expected ones (- expected, + shim)"
    exit 1
fi
echo "$name: shim counts as expected ($(wc -l < "$dir/shim.sorted") APIs," \
     "$(awk -F'\t' '{s+=$2} END {print s+0}' "$dir/shim.sorted") calls)"
