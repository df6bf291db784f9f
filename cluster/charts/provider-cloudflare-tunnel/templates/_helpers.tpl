{{/*
The name of every namespaced object and of the cluster-wide RBAC: the
release name when it already says what it is (the default install is
"provider-cloudflare-tunnel"), otherwise <release>-provider-cloudflare-tunnel.
*/}}
{{- define "pct.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/*
The metrics Service's name: a DNS label (63 characters), which keeps the
chart's name, so the scrape job (named after it) matches the alerts' and the
dashboard's job=~".*provider-cloudflare-tunnel.*".
*/}}
{{- define "pct.metricsService" -}}
{{- $full := include "pct.fullname" . -}}
{{- if le (len $full) 55 -}}
{{- printf "%s-metrics" $full -}}
{{- else -}}
{{- printf "%s-%s-metrics" (.Release.Name | trunc 28 | trimSuffix "-") .Chart.Name -}}
{{- end -}}
{{- end -}}

{{/*
The webhook Service's name: a DNS label, which keeps the chart's name as
the metrics Service's does.
*/}}
{{- define "pct.webhookService" -}}
{{- $full := include "pct.fullname" . -}}
{{- if le (len $full) 55 -}}
{{- printf "%s-webhook" $full -}}
{{- else -}}
{{- printf "%s-%s-webhook" (.Release.Name | trunc 28 | trimSuffix "-") .Chart.Name -}}
{{- end -}}
{{- end -}}

{{/* The labels that select the provider's pods (immutable once installed). */}}
{{- define "pct.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/component: provider
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* Labels on every object the chart makes. */}}
{{- define "pct.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* The provider's command-line flags from the values. */}}
{{- define "pct.args" -}}
{{- if .Values.leaderElection }}
- --leader-election
{{- end }}
- --cluster-domain={{ .Values.provider.clusterDomain }}
{{- if .Values.webhook.enabled }}
- --webhook-self-signed
- --webhook-service={{ include "pct.webhookService" . }}
- --webhook-configuration={{ include "pct.fullname" . }}
{{- end }}
{{- if eq .Values.provider.logLevel "debug" }}
- --debug
{{- end }}
{{- with .Values.provider.pollInterval }}
- --poll={{ . }}
{{- end }}
{{- with .Values.provider.syncInterval }}
- --sync={{ . }}
{{- end }}
{{- with .Values.provider.maxReconcileRate }}
- --max-reconcile-rate={{ int64 . }}
{{- end }}
{{- with .Values.cloudflare.rateLimit }}
- --cloudflare-rate-limit={{ int64 . }}
{{- end }}
{{- with .Values.cloudflare.rateWindow }}
- --cloudflare-rate-window={{ . }}
{{- end }}
{{- with .Values.cloudflare.budgetFraction }}
- --cloudflare-budget-fraction={{ . }}
{{- end }}
{{- with .Values.cloudflare.budgetBurst }}
- --cloudflare-budget-burst={{ int64 . }}
{{- end }}
{{- with .Values.cloudflare.dnsBatchWindow }}
- --dns-batch-window={{ . }}
{{- end }}
{{- with .Values.cloudflare.dnsBatchSize }}
- --dns-batch-size={{ int64 . }}
{{- end }}
{{- end -}}
