#!/usr/bin/env bash
# Create .venv and install vrhcaby into it; `install.sh dev,ray` adds extras (dev: the test
# and check tools; ray: the Ray backend).
# torch 2.13.0 is installed first (a CPU wheel where one lies on local disk) so the
# project's torch range is already met and pip never pulls a multi-GB CUDA build.
# As root (CI), GNU Backgammon's command line (Debian's gnubg) is installed when missing:
# the test that lets gnubg drive `vrhcaby external` runs it.
# Last, numba's on-disk cache is filled and the kernels the command line uses are compiled
# ahead of time into one extension module (`python -m vrhcaby.cli.warm`, a C compiler and
# Python's headers needed for the second part), so that the first command answers at once
# instead of compiling for 10-25 s, and a 2-ply hint does not wait a second for numba.
set -euo pipefail
cd "$(dirname "$0")/.."
extra="${1:-}"
if [ "$(id -u)" = 0 ] && ! command -v gnubg >/dev/null && [ ! -x /usr/games/gnubg ] \
    && command -v apt-get >/dev/null; then
    apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q gnubg
fi
if [ "$(id -u)" = 0 ] && [[ ",$extra," == *,dev,* ]] && ! command -v chromium >/dev/null \
    && command -v apt-get >/dev/null; then
    apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium
fi
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -c "import torch" 2>/dev/null || .venv/bin/pip install -q torch==2.13.0
if [ -n "$extra" ]; then
    .venv/bin/pip install -q -e ".[$extra]"
else
    .venv/bin/pip install -q -e .
fi
.venv/bin/python -m vrhcaby.cli.warm
