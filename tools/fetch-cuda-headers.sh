#!/bin/sh
# fetch-cuda-headers.sh - fetch the CUDA 13.5, 12.9 and 11.8 headers that
# 'cushim-gen --verify' and the 'verify-generated' target need.
#
# USAGE: tools/fetch-cuda-headers.sh [--only SET[,SET...]] DEST [WHEEL_DIR]
#   --only: just those folders of DEST (13.5, 12.9, 11.8, nvml-13.0, nvml-13.5, nvml-12.9, nvml-11.8); the
#   configure step fetches the built tree's nvml-<ver> this way (a few hundred KB) when it is missing.
#   Downloads the pinned wheels nvidia-cuda-runtime-cu12==12.9.79 and
#   nvidia-cuda-runtime-cu11==11.8.89, plus the profiler API wheels of the
#   same releases (nvidia-cuda-profiler-api-cu12==12.9.79,
#   nvidia-cuda-profiler-api-cu11==11.8.86: cudaProfiler.h and
#   cuda_profiler_api.h, which the runtime wheels lack), with pip (or takes
#   them from WHEEL_DIR when it holds them) and unpacks their include
#   folders into DEST/12.9/include and DEST/11.8/include; and CUDA 13.5's
#   nvidia-cuda-runtime==13.5.37 and nvidia-cuda-profiler-api==13.5.25 (the
#   13.x wheels have no -cu13 suffix; their headers are under nvidia/cu13/)
#   into DEST/13.5/include.
#   DEST is usually <build dir>/cuda-headers (CUSHIM_EXTRA_HEADERS_DIR).
#   Also nvml.h of CUDA 13.0's driver branch (580): nvidia-nvml-dev==13.0.87
#   into DEST/nvml-13.0/include, and nvidia-nvml-dev==13.5.37 into DEST/nvml-13.5/include
#   for the 13.5 tree (the 13.0 and 13.5 trees interpose NVML; the toolkit
#   has no nvml.h: it ships with the driver).
#   The 12.9 tree interposes every library the 13.0 tree does: nvml.h of CUDA
#   12.9 (nvidia-nvml-dev-cu12==12.9.79) into DEST/nvml-12.9/include, and
#   cuBLAS's and NCCL's headers of a CUDA 12.9 installation
#   (nvidia-cublas-cu12==12.9.1.4, CUDA 12.9 Update 1's cuBLAS, the release of
#   the runtime pin; nvidia-nccl-cu12==2.27.7) into DEST/12.9/include.
#   nvml.h of CUDA 11.8 (nvidia-nvml-dev-cu11==11.8.86) into DEST/nvml-11.8/include
#   for the 11.8 tree (the driver, the runtime and NVML, the default set).
#   Only the wheels' include folders are unpacked (the cuBLAS and NCCL wheels
#   carry ~900 MB of libraries).
set -eu

only=""
if [ "${1:-}" = --only ]; then
    [ $# -ge 2 ] || { echo "usage: $0 [--only SET[,SET...]] DEST [WHEEL_DIR]" >&2; exit 2; }
    only=",$2,"
    shift 2
fi
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    echo "usage: $0 [--only SET[,SET...]] DEST [WHEEL_DIR]" >&2
    exit 2
fi
dest=$1
wheels=${2:-}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

# VERSION PACKAGE PIN WHEEL_SUBDIR: the headers of nvidia/WHEEL_SUBDIR/include go to DEST/VERSION/include
pins='13.5 nvidia-cuda-runtime 13.5.37 cu13
13.5 nvidia-cuda-profiler-api 13.5.25 cu13
12.9 nvidia-cuda-runtime-cu12 12.9.79 cuda_runtime
12.9 nvidia-cuda-profiler-api-cu12 12.9.79 cuda_profiler_api
12.9 nvidia-cublas-cu12 12.9.1.4 cublas
12.9 nvidia-nccl-cu12 2.27.7 nccl
11.8 nvidia-cuda-runtime-cu11 11.8.89 cuda_runtime
11.8 nvidia-cuda-profiler-api-cu11 11.8.86 cuda_profiler_api
nvml-13.0 nvidia-nvml-dev 13.0.87 cu13
nvml-13.5 nvidia-nvml-dev 13.5.37 cu13
nvml-12.9 nvidia-nvml-dev-cu12 12.9.79 nvml_dev
nvml-11.8 nvidia-nvml-dev-cu11 11.8.86 nvml_dev'
all_sets="13.5 12.9 11.8 nvml-13.0 nvml-13.5 nvml-12.9 nvml-11.8"
sets=$all_sets
if [ -n "$only" ]; then
    sets=""
    for s in $(echo "$only" | tr , ' '); do
        case " $all_sets " in
            *" $s "*) sets="$sets $s" ;;
            *) echo "error: --only: no header set '$s' (known: $all_sets)" >&2; exit 2 ;;
        esac
    done
    pins=$(echo "$pins" | while read -r ver rest; do
        case "$only" in *",$ver,"*) echo "$ver $rest" ;; esac
    done)
fi

# wheel_of PACKAGE PIN DIR: the wheel of that release in DIR, or nothing
wheel_of() {
    norm=$(echo "$1" | tr - _)
    for w in "$3"/"$norm"-"$2"-*.whl; do
        [ -f "$w" ] && echo "$w" && return 0
    done
    return 0
}

# 1. Download what WHEEL_DIR lacks: one pip for all of them (one start, one connection; pip fetches the ~900 MB
#    as fast as the link goes: ~10 s here, against ~35 s for one pip a wheel), a second for the packages pinned
#    twice (pip takes one release of a package a call); both at once. No pip cache: it would hold a second copy.
first="" second="" seen=" "
echo "$pins" | {
    while read -r ver pkg pin sub; do
        [ -n "$wheels" ] && [ -n "$(wheel_of "$pkg" "$pin" "$wheels")" ] && continue
        case "$seen" in
            *" $pkg "*) second="$second $pkg==$pin" ;;
            *) first="$first $pkg==$pin"; seen="$seen$pkg " ;;
        esac
    done
    echo "$first" > "$tmp/first"
    echo "$second" > "$tmp/second"
}
download() { # download DIR SPEC...
    d=$1; shift
    [ $# -gt 0 ] || return 0
    mkdir -p "$d"
    python3 -m pip download --quiet --no-cache-dir --no-deps --only-binary=:all: \
        --platform manylinux_2_27_x86_64 --platform manylinux2014_x86_64 --python-version 3 -d "$d" "$@" ||
        { echo "error: pip could not download$(printf ' %s' "$@")" >&2; return 1; }
}
# shellcheck disable=SC2046 # the lists are words
download "$tmp/dl1" $(cat "$tmp/first") & p1=$!
# shellcheck disable=SC2046
download "$tmp/dl2" $(cat "$tmp/second") & p2=$!
rc=0
wait $p1 || rc=1
wait $p2 || rc=1
[ $rc = 0 ] || exit 1

# 2. Unpack each wheel's include folder (only that: the cuBLAS and NCCL wheels are mostly libraries).
for ver in $sets; do
    rm -rf "$dest/$ver"
done
echo "$pins" | while read -r ver pkg pin sub; do
    file=
    [ -n "$wheels" ] && file=$(wheel_of "$pkg" "$pin" "$wheels")
    [ -n "$file" ] || file=$(wheel_of "$pkg" "$pin" "$tmp/dl1")
    [ -n "$file" ] || file=$(wheel_of "$pkg" "$pin" "$tmp/dl2")
    [ -n "$file" ] || { echo "error: no wheel of $pkg==$pin after downloading" >&2; exit 1; }
    rm -rf "$tmp/x"
    mkdir -p "$tmp/x"
    python3 - "$file" "nvidia/$sub/include/" "$tmp/x" <<'PY' || {
import sys, zipfile
whl, prefix, out = sys.argv[1:]
with zipfile.ZipFile(whl) as z:
    z.extractall(out, [n for n in z.namelist() if n.startswith(prefix)])
PY
        echo "error: cannot unpack $file" >&2
        exit 1
    }
    inc="$tmp/x/nvidia/$sub/include"
    if [ ! -d "$inc" ]; then
        echo "error: $file holds no nvidia/$sub/include" >&2
        exit 1
    fi
    mkdir -p "$dest/$ver/include"
    cp -R "$inc"/. "$dest/$ver/include"/
    rm -f "$dest/$ver/include/__init__.py"
done || exit 1
for ver in $sets; do
    case $ver in
        nvml-*) h=nvml.h what="NVML headers" ;;
        *) h=cuda.h what="CUDA $ver headers" ;;
    esac
    [ -f "$dest/$ver/include/$h" ] || { echo "error: $dest/$ver/include/$h missing after unpacking" >&2; exit 1; }
    echo "$what in $dest/$ver/include"
done
