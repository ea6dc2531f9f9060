{{/* Resource name of one deployable. */}}
{{- define "whetstone.name" -}}
{{- printf "%s-%s" .root.Release.Name .name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "whetstone.labels" -}}
app.kubernetes.io/name: {{ .name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/part-of: whetstone
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version }}
{{- end -}}

{{- define "whetstone.selector" -}}
app.kubernetes.io/name: {{ .name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
{{- end -}}

{{/* A service's settings: chart defaults overlaid by its own entry. */}}
{{- define "whetstone.settings" -}}
{{- toYaml (mergeOverwrite (deepCopy .root.Values.defaults) (deepCopy .svc)) -}}
{{- end -}}

{{/* The smallest number of pods a deployable runs: its HPA's minimum, else its replica count. */}}
{{- define "whetstone.minReplicas" -}}
{{- if .hpa.enabled }}{{ .hpa.minReplicas }}{{ else }}{{ .replicas }}{{ end -}}
{{- end -}}

{{- define "whetstone.image" -}}
{{ printf "%s/%s:%s" .root.Values.image.repository .name .root.Values.image.tag }}
{{- end -}}

{{/* Environment of one deployable: shared, secrets, every gRPC peer's address, its own. */}}
{{- define "whetstone.env" -}}
{{- $root := .root -}}
- name: PORT
  value: {{ .svc.port | quote }}
{{- /* Every interface: the kubelet's probes, peers and Prometheus reach the pod's IP (the services' own default,
for one machine, is loopback). NetworkPolicies decide who may connect. */}}
- name: HOST
  value: "0.0.0.0"
{{- with .svc.metricsPort }}
- name: METRICS_PORT
  value: {{ . | quote }}
{{- end }}
- name: WHETSTONE_INSTANCE
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
{{- range $k, $v := $root.Values.env }}
- name: {{ $k }}
  value: {{ $v | quote }}
{{- end }}
{{- /* Only the Secret keys this deployable needs, none optional: a missing key fails the pod's start. */}}
{{- $secrets := .svc.secrets | default $root.Values.defaults.secrets | default list }}
{{- if .migration }}{{ $secrets = list "DATABASE_SERVER_URL" }}{{ end }}
{{- range $key := $secrets }}
- name: {{ $key }}
  valueFrom:
    secretKeyRef:
      name: {{ $root.Values.existingSecret }}
      key: {{ $key }}
{{- end }}
{{- if has "DATABASE_SERVER_URL" $secrets }}
{{- /* Kubernetes can only append to the Secret's URL, so it carries no query string and the parameters
(database.params, then the schema) are composed here, each value URL-encoded. */}}
{{- $params := list }}
{{- range $k, $v := ($root.Values.database | default dict).params }}
{{- $params = append $params (printf "%s=%s" $k (urlquery $v)) }}
{{- end }}
{{- if not .migration }}
- name: EVENTS_DATABASE_URL
  value: "$(DATABASE_SERVER_URL){{ if $params }}?{{ join "&" $params }}{{ end }}"
{{- end }}
{{- with .svc.schema }}
- name: DATABASE_URL
  value: "$(DATABASE_SERVER_URL)?{{ join "&" (append $params (printf "schema=%s" .)) }}"
{{- end }}
{{- end }}
{{- /* dns:/// targets on headless Services: clients resolve every pod, balance round-robin and re-resolve, so
new replicas get traffic (packages/rpc). */}}
{{- range $peer, $p := $root.Values.services }}
{{- if and (ne (toString $p.enabled) "false") (eq $p.kind "grpc") }}
- name: {{ $peer | upper | replace "-" "_" }}_ADDR
  value: {{ printf "dns:///%s:%v" (include "whetstone.name" (dict "root" $root "name" $peer)) $p.port | quote }}
{{- end }}
{{- end }}
{{- /* The router places trained models across every model-server pod the name resolves to. */}}
{{- if and (eq .name "inference-router") (not .migration) }}
{{- $ms := index $root.Values.services "model-server" }}
{{- if and $ms (ne (toString $ms.enabled) "false") }}
- name: MODEL_SERVER_ADDRS
  value: {{ printf "dns:///%s:%v" (include "whetstone.name" (dict "root" $root "name" "model-server")) $ms.port | quote }}
{{- end }}
{{- end }}
{{- /* OpenTelemetry: off unless an OTLP endpoint is given; each span names its pod and namespace. */}}
{{- with ($root.Values.telemetry | default dict).otlpEndpoint }}
{{- if not $.migration }}
- name: POD_NAMESPACE
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
- name: OTEL_EXPORTER_OTLP_ENDPOINT
  value: {{ . | quote }}
- name: OTEL_RESOURCE_ATTRIBUTES
  value: "k8s.namespace.name=$(POD_NAMESPACE),k8s.pod.name=$(WHETSTONE_INSTANCE)"
{{- end }}
{{- end }}
{{- /* The router's upstream providers; its migration Job needs neither them nor their keys. */}}
{{- if and (eq .name "inference-router") (not .migration) }}
{{- $up := $root.Values.upstreams | default dict }}
- name: CATALOG_UPSTREAMS
  value: {{ $up.providers | default list | toJson | quote }}
- name: UPSTREAM_ALLOW_PRIVATE_HOSTS
  value: {{ $up.allowPrivateHosts | default list | join "," | quote }}
{{- range $p := $up.providers | default list }}
{{- with $p.api_key_env }}
- name: {{ . }}
  valueFrom:
    secretKeyRef:
      name: {{ $up.secret }}
      key: {{ . }}
{{- end }}
{{- end }}
{{- end }}
{{- range $k, $v := .svc.env }}
- name: {{ $k }}
  value: {{ $v | quote }}
{{- end }}
{{- end -}}
