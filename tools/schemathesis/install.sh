#!/usr/bin/env bash
# schemathesis (PyPI) in a virtualenv outside the repository, pinned by tools/schemathesis/requirements.txt:
# WHETSTONE_CACHE_DIR (default $XDG_CACHE_HOME/whetstone, else ~/.cache/whetstone)/schemathesis-<hash>.
# Idempotent; prints the path of the schemathesis command. Needs python3 (3.9+) with venv.
set -euo pipefail
cd "$(dirname "$0")"

cache="${WHETSTONE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/whetstone}"
hash=$(sha256sum requirements.txt | cut -c1-12)
venv="$cache/schemathesis-$hash"

# .installed is written last: a venv without it is an interrupted install, made again.
if [ ! -f "$venv/.installed" ]; then
  command -v python3 >/dev/null || { echo "tools/schemathesis: python3 is needed" >&2; exit 1; }
  rm -rf "$venv"
  mkdir -p "$cache"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check -r requirements.txt >&2
  touch "$venv/.installed"
fi
echo "$venv/bin/schemathesis"
