#!/usr/bin/env bash
# Installs kiln's build dependencies from the distribution's packages (Debian 12 / Ubuntu 24.04).
# The CUDA toolkit is expected at /usr/local/cuda (or nvcc on PATH); without it kiln builds its
# host backend only.  Does nothing when every package is already installed.
set -euo pipefail
packages=(cmake ninja-build g++ libboost-dev libspdlog-dev libfmt-dev libyaml-cpp-dev catch2 libcli11-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all packages present"
  exit 0
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "setup: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
