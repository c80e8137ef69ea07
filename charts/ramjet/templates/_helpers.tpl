{{/* Names, labels and the pieces several templates share. */}}

{{/* ramjet.name is the chart name, or nameOverride. */}}
{{- define "ramjet.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* ramjet.fullname is <release>-<name>, or the release name when it holds the name already. */}}
{{- define "ramjet.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := include "ramjet.name" . }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* ramjet.selectorLabels select the ingress pods of the release. */}}
{{- define "ramjet.selectorLabels" -}}
app.kubernetes.io/name: {{ include "ramjet.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: controller
{{- end }}

{{/* ramjet.commonLabels go on every object of the chart. */}}
{{- define "ramjet.commonLabels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/name: {{ include "ramjet.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: ramjet
{{- end }}

{{/* ramjet.labels are the common labels of the controller's objects. */}}
{{- define "ramjet.labels" -}}
{{ include "ramjet.commonLabels" . }}
app.kubernetes.io/component: controller
{{- end }}

{{/* ramjet.serviceAccountName is the ServiceAccount the controller runs as. */}}
{{- define "ramjet.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "ramjet.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* ramjet.image is repository:tag, or repository@digest. */}}
{{- define "ramjet.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/* ramjet.suffixed is the full name with a suffix, cut so that the whole stays a valid name: (list . "-metrics"). */}}
{{- define "ramjet.suffixed" -}}
{{- $suffix := index . 1 }}
{{- printf "%s%s" (include "ramjet.fullname" (index . 0) | trunc (int (sub 63 (len $suffix))) | trimSuffix "-") $suffix }}
{{- end }}

{{/* ramjet.chartFlags are the flags of ramjet-ingress run that the chart sets from its values: extraArgs may not repeat them. */}}
{{- define "ramjet.chartFlags" -}}
base out file-dir admin-socket https-listener listen ingress gateway-api gateway-controller-name gateway-listener gateway-service-type gateway-port-range gateway-service-namespace gateway-service-selector ingress-class controller-class annotations backend-tls-verify limit-status-code global-rate-limit-memcached-host global-rate-limit-memcached-port global-rate-limit-memcached-connect-timeout global-rate-limit-memcached-pool-size global-rate-limit-status-code global-auth-url annotation-default global-allowed-response-headers election-id election-namespace watch-namespace watch-ingress-without-class cross-namespace-paths enable-ssl-passthrough allow-external-name-services default-ssl-certificate default-backend publish-service publish-address no-status-update log-level log-format kubeconfig
{{- end }}

{{/* ramjet.electionID is the name of the leader election Lease. */}}
{{- define "ramjet.electionID" -}}
{{- default (include "ramjet.suffixed" (list . "-leader")) .Values.ingressController.electionID }}
{{- end }}

{{/* ramjet.publishService is namespace/name of the Service whose address goes into the status. */}}
{{- define "ramjet.publishService" -}}
{{- default (printf "%s/%s" .Release.Namespace (include "ramjet.fullname" .)) .Values.ingressController.publishService }}
{{- end }}

{{/* ramjet.gracePeriod is the drain delay plus the shutdown timeout plus a margin for the process to end. */}}
{{- define "ramjet.gracePeriod" -}}
{{- add .Values.drainDelaySeconds .Values.shutdownTimeoutSeconds 5 }}
{{- end }}

{{/* Paths inside the pod, shared by the containers. */}}
{{- define "ramjet.basePath" -}}/etc/ramjet/base/base.yaml{{- end }}
{{- define "ramjet.generatedDir" -}}/etc/ramjet/generated{{- end }}
{{- define "ramjet.adminSocket" -}}/run/ramjet/admin.sock{{- end }}
{{- define "ramjet.controllerPort" -}}10254{{- end }}
{{- define "ramjet.healthPort" -}}10255{{- end }}

{{/* ramjet.containerSecurityContext is every container's: no privilege, nothing writable but the volumes. */}}
{{- define "ramjet.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
capabilities:
  drop: [ALL]
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{/* ramjet.controllerArgs are the flags of ramjet-ingress run, from the values, as a YAML list (serialised, never spliced as text). */}}
{{- define "ramjet.controllerArgs" -}}
{{- $ic := .Values.ingressController -}}
{{- $args := list
  (printf "--base=%s" (include "ramjet.basePath" .))
  (printf "--out=%s" (include "ramjet.generatedDir" .))
  (printf "--admin-socket=%s" (include "ramjet.adminSocket" .))
  "--https-listener=https"
  (printf "--listen=:%s" (include "ramjet.controllerPort" .))
  (printf "--ingress=%t" $ic.ingress.enabled)
  (printf "--gateway-api=%t" $ic.gatewayAPI.enabled)
  (printf "--ingress-class=%s" $ic.className)
  (printf "--controller-class=%s" $ic.controllerValue)
  (printf "--annotations=%s" $ic.annotations)
  (printf "--backend-tls-verify=%s" $ic.backendTLSVerify)
  (printf "--election-id=%s" (include "ramjet.electionID" .)) -}}
{{- $args = concat $args (include "ramjet.gatewayArgs" . | fromYamlArray) -}}
{{- with $ic.watchNamespace }}{{ $args = append $args (printf "--watch-namespace=%s" .) }}{{ end -}}
{{- if $ic.watchIngressWithoutClass }}{{ $args = append $args "--watch-ingress-without-class" }}{{ end -}}
{{- if $ic.crossNamespacePaths }}{{ $args = append $args "--cross-namespace-paths" }}{{ end -}}
{{- if $ic.enableSSLPassthrough }}{{ $args = append $args "--enable-ssl-passthrough" }}{{ end -}}
{{- if $ic.allowExternalNameServices }}{{ $args = append $args "--allow-external-name-services" }}{{ end -}}
{{- with $ic.defaultCertificate }}{{ $args = append $args (printf "--default-ssl-certificate=%s" .) }}{{ end -}}
{{- if ne (int $ic.limitStatusCode) 503 }}{{ $args = append $args (printf "--limit-status-code=%d" (int $ic.limitStatusCode)) }}{{ end -}}
{{- with $ic.globalAllowedResponseHeaders }}{{ $args = append $args (printf "--global-allowed-response-headers=%s" (join "," .)) }}{{ end -}}
{{- with $ic.globalRateLimit }}
{{- with .memcachedHost }}{{ $args = append $args (printf "--global-rate-limit-memcached-host=%s" .) }}{{ end -}}
{{- if ne (int .memcachedPort) 11211 }}{{ $args = append $args (printf "--global-rate-limit-memcached-port=%d" (int .memcachedPort)) }}{{ end -}}
{{- if ne (toString .connectTimeout) "50ms" }}{{ $args = append $args (printf "--global-rate-limit-memcached-connect-timeout=%s" .connectTimeout) }}{{ end -}}
{{- if ne (int .poolSize) 50 }}{{ $args = append $args (printf "--global-rate-limit-memcached-pool-size=%d" (int .poolSize)) }}{{ end -}}
{{- if ne (int .statusCode) 429 }}{{ $args = append $args (printf "--global-rate-limit-status-code=%d" (int .statusCode)) }}{{ end -}}
{{- end -}}
{{- with $ic.globalAuthURL }}{{ $args = append $args (printf "--global-auth-url=%s" .) }}{{ end -}}
{{- range $key, $value := $ic.annotationDefaults }}{{ $args = append $args (printf "--annotation-default=%s=%s" $key (toString $value)) }}{{ end -}}
{{- with $ic.defaultBackend }}{{ $args = append $args (printf "--default-backend=%s" .) }}{{ end -}}
{{- if not $ic.updateStatus }}
{{- $args = append $args "--no-status-update" }}
{{- else if $ic.publishAddress }}
{{- $args = append $args (printf "--publish-address=%s" (join "," $ic.publishAddress)) }}
{{- else if include "ramjet.sharedService" . }}
{{- $args = append $args (printf "--publish-service=%s" (include "ramjet.publishService" .)) }}
{{- end -}}
{{- $args = append $args (printf "--log-level=%s" .Values.logLevel) -}}
{{- $args = append $args (printf "--log-format=%s" .Values.logFormat) -}}
{{- range $flag, $value := $ic.extraArgs }}{{ $args = append $args (printf "--%s=%s" $flag (toString $value)) }}{{ end -}}
{{- toYaml $args }}
{{- end }}

{{/* ramjet.gatewayMode is "shared" when Gateway listeners are served on ramjetd's listeners of the pod, "own" when each Gateway gets a Service of its own, empty without the Gateway API. */}}
{{- define "ramjet.gatewayMode" -}}
{{- $gw := .Values.ingressController.gatewayAPI -}}
{{- if and $gw.enabled $gw.listeners }}shared{{ else if $gw.enabled }}own{{ end }}
{{- end }}

{{/* ramjet.sharedService is "true" when the release's Service carries traffic: for the Ingresses, or for the Gateways in shared mode. */}}
{{- define "ramjet.sharedService" -}}
{{- if or .Values.ingressController.ingress.enabled (eq (include "ramjet.gatewayMode" .) "shared") }}true{{ end }}
{{- end }}

{{/* ramjet.gatewayArgs are the Gateway API flags of ramjet-ingress run, as a YAML list. */}}
{{- define "ramjet.gatewayArgs" -}}
{{- $gw := .Values.ingressController.gatewayAPI -}}
{{- $args := list -}}
{{- $mode := include "ramjet.gatewayMode" . -}}
{{- if $mode }}
{{- $args = append $args (printf "--gateway-controller-name=%s" $gw.controllerName) }}
{{- end }}
{{- if eq $mode "shared" }}
{{- range $port, $listener := $gw.listeners }}
{{- $args = append $args (printf "--gateway-listener=%s=%s" $port $listener) }}
{{- end }}
{{- else if eq $mode "own" }}
{{- $selector := list -}}
{{- range $key, $value := include "ramjet.selectorLabels" . | fromYaml }}
{{- $selector = append $selector (printf "%s=%s" $key $value) }}
{{- end }}
{{- $args = concat $args (list
  (printf "--gateway-service-type=%s" $gw.service.type)
  (printf "--gateway-port-range=%s" $gw.portRange)
  (printf "--gateway-service-namespace=%s" .Release.Namespace)
  (printf "--gateway-service-selector=%s" (join "," $selector))) }}
{{- end }}
{{- toYaml $args }}
{{- end }}
