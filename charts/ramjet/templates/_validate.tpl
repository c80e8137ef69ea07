{{/*
ramjet.validate refuses values that make no sense together, with a message
that names them. values.schema.json already refused unknown keys and wrong
types; what is left are combinations and facts of the cluster.
*/}}
{{- define "ramjet.validate" -}}
{{- $ic := .Values.ingressController -}}
{{- if not $ic.enabled }}
{{- fail "ingressController.enabled: false is not a mode of this chart: Ramjet's chart only runs the ingress controller (run ramjetd alone from its Linux packages, see docs/ramjetd.md)" }}
{{- end }}
{{- if not (or $ic.ingress.enabled $ic.gatewayAPI.enabled) }}
{{- fail "ingressController.ingress.enabled: false with ingressController.gatewayAPI.enabled: false serves nothing: a Gateway-only install sets ingressController.gatewayAPI.enabled: true" }}
{{- end }}
{{- if $ic.http3 }}
{{- fail "ingressController.http3: the image has no HTTP/3 (ramjetd serves HTTP/1.1 and HTTP/2 only)" }}
{{- end }}
{{- if and .Values.autoscaling.enabled (eq $ic.kind "DaemonSet") }}
{{- fail "autoscaling.enabled needs ingressController.kind: Deployment (a DaemonSet runs one pod per node and cannot be scaled)" }}
{{- end }}
{{- if and .Values.autoscaling.enabled (gt (int .Values.autoscaling.minReplicas) (int .Values.autoscaling.maxReplicas)) }}
{{- fail (printf "autoscaling.minReplicas (%d) is above autoscaling.maxReplicas (%d)" (int .Values.autoscaling.minReplicas) (int .Values.autoscaling.maxReplicas)) }}
{{- end }}
{{- if and .Values.autoscaling.enabled (not .Values.autoscaling.targetCPUUtilizationPercentage) (not .Values.autoscaling.targetMemoryUtilizationPercentage) }}
{{- fail "autoscaling.enabled needs autoscaling.targetCPUUtilizationPercentage or autoscaling.targetMemoryUtilizationPercentage above 0" }}
{{- end }}
{{- include "ramjet.validateStatus" . }}
{{- include "ramjet.validateNames" . }}
{{- include "ramjet.validatePDB" . }}
{{- include "ramjet.validateService" . }}
{{- include "ramjet.validateServer" . }}
{{- include "ramjet.validateNamespace" . }}
{{- include "ramjet.validateGateway" . }}
{{- end }}

{{/* ramjet.validateGateway checks the Gateway API values: the listeners of shared mode, the pod port range of own-address mode. */}}
{{- define "ramjet.validateGateway" -}}
{{- $ic := .Values.ingressController -}}
{{- $gw := $ic.gatewayAPI -}}
{{- $mode := include "ramjet.gatewayMode" . -}}
{{- if and $gw.listeners (not $gw.enabled) }}
{{- fail "ingressController.gatewayAPI.listeners needs ingressController.gatewayAPI.enabled: true" }}
{{- end }}
{{- range $port, $_ := $gw.listeners }}
{{- if gt (int $port) 65535 }}
{{- fail (printf "ingressController.gatewayAPI.listeners.%s: a port is 1 to 65535" $port) }}
{{- end }}
{{- end }}
{{- if eq $mode "own" }}
{{- $range := splitList "-" $gw.portRange }}
{{- $first := int (index $range 0) }}
{{- $last := int (index $range 1) }}
{{- if or (lt $first 1024) (gt $last 65535) (gt $first $last) }}
{{- fail (printf "ingressController.gatewayAPI.portRange %s: want FIRST-LAST with 1024 <= FIRST <= LAST <= 65535" $gw.portRange) }}
{{- end }}
{{- range $name, $port := dict "ingressController.containerPort.http" $ic.containerPort.http "ingressController.containerPort.https" $ic.containerPort.https "the controller's metrics port" 10254 "ramjetd's health port" 10255 }}
{{- if and (ge (int $port) $first) (le (int $port) $last) }}
{{- fail (printf "ingressController.gatewayAPI.portRange %s holds %s %d: the pod ports of the Gateways must be free" $gw.portRange $name (int $port)) }}
{{- end }}
{{- end }}
{{- if and (not $ic.ingress.enabled) (or $ic.publishService $ic.publishAddress) }}
{{- fail "ingressController.publishService or publishAddress with a Gateway-only install in own-address mode: each Gateway's address is its own Service's (set ingressController.gatewayAPI.listeners for shared mode)" }}
{{- end }}
{{- end }}
{{- end }}

{{/* ramjet.validatePDB refuses a budget that blocks every eviction or says two things at once. */}}
{{- define "ramjet.validatePDB" -}}
{{- $pdb := .Values.podDisruptionBudget -}}
{{- if $pdb.enabled }}
{{- if and (eq .Values.ingressController.kind "DaemonSet") (or (ne (toString $pdb.maxUnavailable) "") (not (regexMatch "^[0-9]+$" (toString $pdb.minAvailable)))) }}
{{- fail "podDisruptionBudget with ingressController.kind: DaemonSet takes an integer minAvailable only: a DaemonSet has no scale, so Kubernetes allows no eviction under maxUnavailable or a percentage" }}
{{- end }}
{{- if and (ne (toString $pdb.maxUnavailable) "") (ne (toString $pdb.minAvailable) "1") }}
{{- fail "podDisruptionBudget: set minAvailable or maxUnavailable, not both" }}
{{- end }}
{{- if and (eq (toString $pdb.maxUnavailable) "") (eq .Values.ingressController.kind "Deployment") (not .Values.autoscaling.enabled) (regexMatch "^[0-9]+$" (toString $pdb.minAvailable)) (ge (int $pdb.minAvailable) (int .Values.replicaCount)) }}
{{- fail (printf "podDisruptionBudget.minAvailable (%d) with replicaCount %d blocks every voluntary eviction (node drains never finish): raise replicaCount or use maxUnavailable" (int $pdb.minAvailable) (int .Values.replicaCount)) }}
{{- end }}
{{- if and (eq (toString $pdb.maxUnavailable) "") .Values.autoscaling.enabled (regexMatch "^[0-9]+$" (toString $pdb.minAvailable)) (ge (int $pdb.minAvailable) (int .Values.autoscaling.minReplicas)) }}
{{- fail (printf "podDisruptionBudget.minAvailable (%d) with autoscaling.minReplicas %d blocks every voluntary eviction at the minimum: raise autoscaling.minReplicas or use maxUnavailable" (int $pdb.minAvailable) (int .Values.autoscaling.minReplicas)) }}
{{- end }}
{{- end }}
{{- end }}

{{/* ramjet.validateService refuses load balancer settings on a Service that has no load balancer. */}}
{{- define "ramjet.validateService" -}}
{{- $svc := .Values.ingressController.service -}}
{{- if ne $svc.type "LoadBalancer" }}
{{- range $key := list "loadBalancerSourceRanges" "loadBalancerClass" "loadBalancerIP" }}
{{- if get $svc $key }}
{{- fail (printf "ingressController.service.%s needs ingressController.service.type: LoadBalancer (it is %s)" $key $svc.type) }}
{{- end }}
{{- end }}
{{- end }}
{{- if eq $svc.type "ClusterIP" }}
{{- if $svc.externalTrafficPolicy }}
{{- fail "ingressController.service.externalTrafficPolicy needs ingressController.service.type NodePort or LoadBalancer" }}
{{- end }}
{{- if or (ne (toString $svc.nodePorts.http) "") (ne (toString $svc.nodePorts.https) "") }}
{{- fail "ingressController.service.nodePorts need ingressController.service.type NodePort or LoadBalancer" }}
{{- end }}
{{- end }}
{{- end }}

{{/* ramjet.validateServer keeps the listeners, the health listener and the admin socket the chart's: the Service, the probes and the controller depend on them. */}}
{{- define "ramjet.validateServer" -}}
{{- $server := .Values.server | default dict -}}
{{- range $key := list "listeners" "health" }}
{{- if hasKey $server $key }}
{{- fail (printf "server.%s is set by the chart (the Service and the probes depend on it): use ingressController.containerPort" $key) }}
{{- end }}
{{- end }}
{{- if and (hasKey $server "admin") (hasKey $server.admin "socket") }}
{{- fail "server.admin.socket is set by the chart: the controller reaches ramjetd through it" }}
{{- end }}
{{- if and (hasKey $server "memcached") .Values.ingressController.globalRateLimit.memcachedHost }}
{{- fail "server.memcached and ingressController.globalRateLimit.memcachedHost both name a memcached: set one (the flag would replace server.memcached)" }}
{{- end }}
{{- end }}

{{/*
ramjet.validateNamespace refuses a watchNamespace the cluster does not have
(values.schema.json refused one that is no namespace name). helm template
cannot look, so it checks only when the chart is installed.
*/}}
{{- define "ramjet.validateNamespace" -}}
{{- $ns := .Values.ingressController.watchNamespace -}}
{{- if and $ns (lookup "v1" "Namespace" "" "kube-system") (not (lookup "v1" "Namespace" "" $ns)) }}
{{- fail (printf "ingressController.watchNamespace: the cluster has no namespace %s" $ns) }}
{{- end }}
{{- end }}

{{/* ramjet.validateStatus checks where the Ingresses' status addresses come from. */}}
{{- define "ramjet.validateStatus" -}}
{{- $ic := .Values.ingressController -}}
{{- if and $ic.publishService $ic.publishAddress }}
{{- fail "ingressController.publishService and ingressController.publishAddress: give one of them" }}
{{- end }}
{{- if and (not $ic.updateStatus) (or $ic.publishService $ic.publishAddress) }}
{{- fail "ingressController.publishService or publishAddress is set but ingressController.updateStatus is false: nothing would use it" }}
{{- end }}
{{- if and $ic.updateStatus (include "ramjet.sharedService" .) (not $ic.publishService) (not $ic.publishAddress) (not $ic.service.enabled) }}
{{- fail "ingressController.updateStatus needs an address for the status: set ingressController.service.enabled, ingressController.publishService or ingressController.publishAddress (or updateStatus: false)" }}
{{- end }}
{{- end }}

{{/* ramjet.validateNames refuses values that would collide with what the chart sets itself. */}}
{{- define "ramjet.validateNames" -}}
{{- $ic := .Values.ingressController -}}
{{- $owned := splitList " " (include "ramjet.chartFlags" .) -}}
{{- range $flag, $_ := $ic.extraArgs }}
{{- if has $flag $owned }}
{{- fail (printf "ingressController.extraArgs.%s: the chart sets --%s from its values (see the values table)" $flag $flag) }}
{{- end }}
{{- end }}
{{- $labels := include "ramjet.labels" . | fromYaml -}}
{{- range $what, $extra := dict "podLabels" .Values.podLabels "ingressController.service.labels" $ic.service.labels }}
{{- range $key, $_ := $extra }}
{{- if hasKey $labels $key }}
{{- fail (printf "%s.%s is a label the chart sets (the selectors depend on it)" $what $key) }}
{{- end }}
{{- end }}
{{- end }}
{{- $ports := dict -}}
{{- range $name, $port := dict "ingressController.containerPort.http" $ic.containerPort.http "ingressController.containerPort.https" $ic.containerPort.https "the controller's metrics port" 10254 "ramjetd's health port" 10255 }}
{{- $key := toString (int $port) }}
{{- if hasKey $ports $key }}
{{- fail (printf "%s and %s are both port %s" (get $ports $key) $name $key) }}
{{- end }}
{{- $_ := set $ports $key $name }}
{{- end }}
{{- if and (not .Values.serviceAccount.create) (not .Values.serviceAccount.name) .Values.rbac.create }}
{{- fail "serviceAccount.create: false needs serviceAccount.name: the chart's RBAC would otherwise be granted to the namespace's default ServiceAccount, which every pod there uses" }}
{{- end }}
{{- $watch := $ic.watchNamespace -}}
{{- if and $watch $ic.defaultBackend (ne (first (splitList "/" $ic.defaultBackend)) $watch) }}
{{- fail (printf "ingressController.defaultBackend %s is outside ingressController.watchNamespace %s: the controller sees only the Services of the watched namespace" $ic.defaultBackend $watch) }}
{{- end }}
{{- end }}
