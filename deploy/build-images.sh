#!/usr/bin/env bash
# Builds every image the chart runs: one runtime image per deployable in deploy/deployables.json (entries without
# services/<name>/src/main.ts are skipped, as everywhere) and the `migrate` image of the migration Jobs.
#
#   deploy/build-images.sh [--print] [repository] [tag]      defaults: whetstone 0.1.0 (the chart's image values)
#
# --print lists the docker commands instead of running them (pnpm test checks that list against the chart).
set -euo pipefail
cd "$(dirname "$0")/.."

run=true
if [ "${1:-}" = "--print" ]; then run=false; shift; fi
repo=${1:-whetstone}
tag=${2:-0.1.0}

services=$(node -e '
  const fs = require("node:fs");
  for (const d of JSON.parse(fs.readFileSync("deploy/deployables.json", "utf8")).deployables)
    if (fs.existsSync(`services/${d.name}/src/main.ts`)) console.log(d.name);
')

builds=()
for s in $services; do builds+=("docker build --target runtime --build-arg SERVICE=$s -t $repo/$s:$tag ."); done
builds+=("docker build --target migrate -t $repo/migrate:$tag .")

for b in "${builds[@]}"; do
  if $run; then echo "+ $b" >&2; $b; else echo "$b"; fi
done
