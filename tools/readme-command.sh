#!/bin/sh
# readme-command.sh - print the README's first set-up command (the first line of its "Set-up commands" sh block
# that starts with 'bash tools/test.sh --build-only && '), so that tools/test.sh can run it as written on a clean
# clone and tests/readme_main.sh can check what it prints. Exit 1 when the README has no such line.
# USAGE: readme-command.sh SOURCE_DIR
set -u
awk '/^## Set-up commands/ { s = 1 } s && /^```sh/ { b = 1; next } b && /^```/ { exit } b { print }' "$1/README.md" |
    grep -m1 '^bash tools/test.sh --build-only && '
