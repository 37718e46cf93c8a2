#!/usr/bin/env bash
# install-deps.sh — install Argus's build and test dependencies from Debian 12 packages.
# Installs only what is missing; needs root (or sudo) when something is missing.
set -euo pipefail
PKGS=(build-essential autoconf automake libtool pkg-config
      openmpi-bin libopenmpi-dev libhwloc-dev libzstd-dev libyajl-dev zlib1g-dev libcmocka-dev
      libunwind-dev libdw-dev
      python3 python3-torch prometheus groff-base
      clang libclang-rt-14-dev
      softflowd tshark
      chromium
      slurmctld slurmd slurm-client libslurm-dev munge libmunge-dev)
missing=()
for p in "${PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
    echo "install-deps: all ${#PKGS[@]} packages present"
    exit 0
fi
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
