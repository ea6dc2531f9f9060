#!/usr/bin/env bash
# The contracts: buf lint (STANDARD + COMMENTS), buf format, buf breaking against the previous commit, and
# packages/proto/src/gen matching what `buf generate` produces.
set -euo pipefail
cd "$(dirname "$0")/.."

pnpm exec buf lint
if ! pnpm exec buf format --diff --exit-code proto >/dev/null; then
  echo "proto files are not formatted: run 'pnpm exec buf format -w proto'" >&2
  pnpm exec buf format --diff proto | head -40 >&2
  exit 1
fi

# Uncommitted contract changes are checked against HEAD; a clean tree (CI) checks HEAD against its parent.
# BUF_BREAKING_AGAINST=<ref> picks another baseline. Internal services deploy together, so a deliberate break lands
# in a commit of its own, with the reason in its message.
against="${BUF_BREAKING_AGAINST:-}"
if [ -z "$against" ]; then
  if ! git diff --quiet HEAD -- proto 2>/dev/null; then
    against=HEAD
  elif git rev-parse -q --verify HEAD~1 >/dev/null 2>&1; then
    against=HEAD~1
  fi
fi
if [ -n "$against" ]; then
  sha=$(git rev-parse "$against")
  pnpm exec buf breaking --against "$(git rev-parse --git-common-dir)#ref=$sha"
  echo "no breaking change against $against (${sha:0:10})"
else
  echo "no previous commit to compare with; buf breaking skipped"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pnpm exec buf generate --template '{"version":"v2","plugins":[{"local":"protoc-gen-es","out":"'"$tmp"'","opt":["target=ts","import_extension=none"]}]}'
if ! diff -r "$tmp" packages/proto/src/gen >/dev/null; then
  echo "packages/proto/src/gen is stale: run 'pnpm gen' and commit the result" >&2
  diff -r "$tmp" packages/proto/src/gen | head -20 >&2
  exit 1
fi
echo "generated code matches the protos"
