#!/usr/bin/env bash
# `pnpm test`: everything CI checks, in order from cheapest to dearest.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s ==\n' "$*"; }

step "contracts: buf lint, buf format, buf breaking, generated code up to date"
bash scripts/check-proto.sh

step "format (prettier)"
pnpm exec prettier --check --log-level warn .

step "typecheck"
pnpm exec tsc -p tsconfig.json --noEmit

step "lint (including the layering rule)"
pnpm exec eslint .

step "deployables: chart values agree with deploy/deployables.json"
node --require tsx/cjs scripts/check-deployables.ts

if [ -f scripts/check-chart.sh ]; then
  step "helm chart: lint, template, golden files, schema validation"
  bash scripts/check-chart.sh
fi

step "jest: unit, integration and end-to-end"
# Two workers: this is a 2-core machine, and integration suites start real servers.
pnpm exec jest --maxWorkers=2 --ci "$@"
