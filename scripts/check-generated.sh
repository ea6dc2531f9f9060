#!/usr/bin/env bash
# Fails when packages/proto/src/gen differs from what `buf generate` produces.
set -euo pipefail
cd "$(dirname "$0")/.."
pnpm exec buf lint
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pnpm exec buf generate --template '{"version":"v2","plugins":[{"local":"protoc-gen-es","out":"'"$tmp"'","opt":["target=ts","import_extension=none"]}]}'
if ! diff -r "$tmp" packages/proto/src/gen >/dev/null; then
  echo "packages/proto/src/gen is stale: run 'pnpm gen' and commit the result" >&2
  diff -r "$tmp" packages/proto/src/gen | head -20 >&2
  exit 1
fi
echo "generated code matches the protos"
