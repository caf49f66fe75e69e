{{/* Chart name, truncated to 63 characters. */}}
{{- define "clawplane.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Full name of the release's objects. */}}
{{- define "clawplane.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* chart-version label value. */}}
{{- define "clawplane.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels the Deployment's selector uses (never change them after a release). */}}
{{- define "clawplane.selectorLabels" -}}
app.kubernetes.io/name: {{ include "clawplane.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: operator
{{- end }}

{{/* Labels of every object. */}}
{{- define "clawplane.labels" -}}
helm.sh/chart: {{ include "clawplane.chart" . }}
{{ include "clawplane.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: clawplane
{{- end }}

{{/* The operator's ServiceAccount. */}}
{{- define "clawplane.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "clawplane.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The operator's image reference. */}}
{{- define "clawplane.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* The image of the pods that host stdio MCP servers. */}}
{{- define "clawplane.bridgeImage" -}}
{{- default (include "clawplane.image" .) .Values.bridgeImage }}
{{- end }}

{{/* RBAC rules for the clawplane resources and what the operator creates, in any namespace. */}}
{{- define "clawplane.namespacedRules" -}}
- apiGroups: [clawplane.dev]
  resources: [gateways, mcpservers, modelproviders, agents, channels, skills]
  verbs: [list, watch, patch]
- apiGroups: [clawplane.dev]
  resources: [gateways/status, mcpservers/status, modelproviders/status, agents/status, channels/status, skills/status]
  verbs: [patch]
- apiGroups: [apps]
  resources: [deployments]
  verbs: [get, list, watch, create, update, delete]
- apiGroups: [""]
  resources: [services, configmaps]
  verbs: [get, list, watch, create, update, delete]
- apiGroups: [""]
  resources: [secrets]
  verbs: [get, list, watch, create, update, delete]
- apiGroups: [networking.k8s.io]
  resources: [networkpolicies]
  verbs: [get, list, watch, create, update, delete]
- apiGroups: [""]
  resources: [pods]
  verbs: [list, watch]
- apiGroups: ["", events.k8s.io]
  resources: [events]
  verbs: [create]
{{- end }}

{{/* Cluster-scoped reads kopf needs in every mode. */}}
{{- define "clawplane.clusterRules" -}}
- apiGroups: [""]
  resources: [namespaces]
  verbs: [list, watch]
- apiGroups: [apiextensions.k8s.io]
  resources: [customresourcedefinitions]
  verbs: [list, watch]
{{- end }}

{{/* NetworkPolicy peers that may reach bridge pods: the gateway pods and this operator, as JSON. */}}
{{- define "clawplane.bridgeIngressFrom" -}}
{{- $operator := dict "namespaceSelector" (dict "matchLabels" (dict "kubernetes.io/metadata.name" .Release.Namespace)) "podSelector" (dict "matchLabels" (dict "app.kubernetes.io/name" (include "clawplane.name" .) "app.kubernetes.io/component" "operator")) -}}
{{- $gateway := .Values.networkPolicy.gatewayPodSelector | default (dict "matchExpressions" (list (dict "key" "clawplane.dev/gateway" "operator" "Exists"))) -}}
{{- list (dict "podSelector" $gateway) $operator | toJson -}}
{{- end }}

{{/* The Secret holding the bearer token of /metrics. */}}
{{- define "clawplane.metricsTokenSecret" -}}
{{- default (printf "%s-metrics-token" (include "clawplane.fullname" .)) .Values.metrics.tokenSecret.existingSecret }}
{{- end }}
