#!/usr/bin/env bash
# bootstrap.sh [GROUP...] - installs ckbatch's Debian dependencies when missing (needs root or sudo):
# the base packages of scripts/packages.txt (what builds and runs the CLI and library: README
# command 1), plus those of each GROUP named: `test python` for README command 2 (scripts/test.sh),
# `python` for scripts/install-python.sh, `bench` for the benchmarks. Used by both README commands
# and by .ci/run. Safe to run again: installs only what is absent.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

wanted=" core $* "
group=core
packages=()
while read -r line; do
    line=${line%%#*}
    read -r -a words <<<"$line"
    [ ${#words[@]} -gt 0 ] || continue
    if [[ ${words[0]} =~ ^\[([a-z0-9-]+)\]$ ]]; then
        group=${BASH_REMATCH[1]}
        continue
    fi
    if [[ $wanted == *" $group "* ]]; then
        packages+=("${words[@]}")
    fi
done <"$here/packages.txt"
for g in "$@"; do
    grep -q "^\[$g\]" "$here/packages.txt" || { echo "bootstrap: no group [$g] in packages.txt" >&2; exit 2; }
done
if [ "${CK_BOOTSTRAP_EXTRA:-}" != "" ]; then
    read -r -a extra <<<"$CK_BOOTSTRAP_EXTRA"
    packages+=("${extra[@]}")
fi

missing=()
for p in "${packages[@]}"; do
    # A node and npm already on PATH (nodesource, nvm) serve as well as Debian's, and Debian's npm
    # conflicts with nodesource's nodejs ("held broken packages"), so it is only wanted when absent.
    if [ "$p" = npm ] && command -v npm >/dev/null && command -v node >/dev/null; then
        continue
    fi
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
