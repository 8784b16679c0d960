#!/bin/sh
# fetch-cuda-headers.sh - fetch the CUDA 12.9 and 11.8 headers that
# 'cushim-gen --verify' and the 'verify-generated' target need.
#
# USAGE: tools/fetch-cuda-headers.sh DEST [WHEEL_DIR]
#   Downloads the pinned wheels nvidia-cuda-runtime-cu12==12.9.79 and
#   nvidia-cuda-runtime-cu11==11.8.89 with pip (or takes them from
#   WHEEL_DIR when it holds them) and unpacks their include folders into
#   DEST/12.9/include and DEST/11.8/include.
#   DEST is usually <build dir>/cuda-headers (CUSHIM_EXTRA_HEADERS_DIR).
set -eu

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    echo "usage: $0 DEST [WHEEL_DIR]" >&2
    exit 2
fi
dest=$1
wheels=${2:-}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

fetch() { # fetch VERSION PACKAGE PIN
    ver=$1 pkg=$2 pin=$3
    file=
    if [ -n "$wheels" ]; then
        norm=$(echo "$pkg" | tr - _)
        for w in "$wheels"/"$norm"-"$pin"-*.whl; do
            [ -f "$w" ] && file=$w && break
        done
    fi
    if [ -z "$file" ]; then
        mkdir -p "$tmp/dl-$ver"
        python3 -m pip download --quiet --no-deps --only-binary=:all: \
            --platform manylinux2014_x86_64 --python-version 3 \
            -d "$tmp/dl-$ver" "$pkg==$pin" || {
            echo "error: pip could not download $pkg==$pin" >&2
            exit 1
        }
        file=$(ls "$tmp/dl-$ver"/*.whl | head -n 1)
    fi
    mkdir -p "$tmp/x-$ver"
    python3 -m zipfile -e "$file" "$tmp/x-$ver" || {
        echo "error: cannot unpack $file" >&2
        exit 1
    }
    inc="$tmp/x-$ver/nvidia/cuda_runtime/include"
    if [ ! -f "$inc/cuda.h" ]; then
        echo "error: $file holds no nvidia/cuda_runtime/include/cuda.h" >&2
        exit 1
    fi
    rm -rf "$dest/$ver"
    mkdir -p "$dest/$ver"
    cp -R "$inc" "$dest/$ver/include"
    rm -f "$dest/$ver/include/__init__.py"
    echo "CUDA $ver headers in $dest/$ver/include"
}

fetch 12.9 nvidia-cuda-runtime-cu12 12.9.79
fetch 11.8 nvidia-cuda-runtime-cu11 11.8.89
