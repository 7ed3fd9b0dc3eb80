#!/usr/bin/env bash
# bootstrap.sh - installs ckbatch's Debian build and test dependencies when missing (needs root).
# Used by both README commands and by .ci/run. Safe to run again: installs only what is absent.
set -euo pipefail

packages=(build-essential cmake pkg-config libdnnl-dev libcjson-dev libssl-dev libcunit1-dev
          libespeak-ng-dev espeak-ng-data clang libclang-rt-14-dev libomp-14-dev valgrind)
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
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
