#!/usr/bin/env bash
# bootstrap.sh - installs ckbatch's Debian build and test dependencies when missing (needs root or
# sudo). The packages are listed in one place, scripts/packages.txt. Used by both README commands
# and by .ci/run. Safe to run again: installs only what is absent.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

packages=()
while read -r line; do
    line=${line%%#*}
    read -r -a words <<<"$line"
    packages+=("${words[@]}")
done <"$here/packages.txt"
if [ "${CK_BOOTSTRAP_EXTRA:-}" != "" ]; then
    read -r -a extra <<<"$CK_BOOTSTRAP_EXTRA"
    packages+=("${extra[@]}")
fi

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
    echo "bootstrap: all dependencies present"
    exit 0
fi

echo "bootstrap: installing ${missing[*]}"
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "bootstrap: not root and no sudo; install: ${missing[*]}" >&2; exit 1; }
    sudo_cmd=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
