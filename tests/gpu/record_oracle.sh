#!/usr/bin/env bash
# record_oracle.sh - record the real driver's cuGetProcAddress answers (run on the GPU machine,
# without the shim). Writes $OUT/procaddr-oracle.tsv; commit it as tests/gpu/fixtures/procaddr-oracle.tsv.
# Names asked: every base name of a PFN typedef in the toolkit's *Typedefs.h, every export of the real
# libcuda.so.1 (full name and base name), and a few names that exist nowhere.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$PWD/gpu-out}
mkdir -p "$out"
inc=${CUDA_INCLUDE:-/usr/local/cuda/include}
lib=$(ldconfig -p | awk '/libcuda\.so\.1 .*x86-64/ {print $NF; exit}')
[ -n "$lib" ] || { echo "record_oracle: no libcuda.so.1 in ldconfig cache" >&2; exit 1; }
tmp=$(mktemp -d)
cc -O2 -o "$tmp/oracle" "$here/procaddr_oracle.c" -ldl
{
  cat "$inc"/*Typedefs.h | grep -o 'PFN_[A-Za-z0-9_]*' | sed -E 's/^PFN_//; s/_v[0-9]+(_ptds|_ptsz)?$//'
  nm -D --defined-only "$lib" | awk '$2=="T"{print $3}' | grep '^cu' | tee "$tmp/exports"
  sed -E 's/_(ptds|ptsz)$//; s/_v[0-9]+$//' "$tmp/exports"
  printf '%s\n' cuNoSuchFunction cudaMalloc cuMemAlloc_v9 cuGetProcAddress
} | sort -u > "$tmp/names"
echo "record_oracle: $(wc -l < "$tmp/names") names against $lib"
"$tmp/oracle" "$tmp/names" > "$out/procaddr-oracle.tsv"
cp "$tmp/exports" "$out/libcuda-exports.txt"
echo "record_oracle: $(wc -l < "$out/procaddr-oracle.tsv") rows"
