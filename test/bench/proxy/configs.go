package main

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"text/template"
)

// configData is everything a configuration is made of: ports and paths
// the program chose itself. Paths are checked by safePath before any
// template sees them, so no value can break out of its quotes.
type configData struct {
	Dir                  string // the run folder: pid files, logs, temp files
	Docroot              string // the backend's static files
	HTTP, HTTPS, Backend int    // ports on 127.0.0.1
	// BackendTLS is the backend's HTTPS port, which the passthrough cells
	// reach through the proxies with the client's TLS.
	BackendTLS        int
	Cert, Key, Bundle string // see certFiles
	// Auth is the cell's external authentication: the proxy asks the
	// backend's /auth about every request (or remembers its answers).
	Auth auth
	// Passthrough: the proxy's HTTPS port splices the TLS connections
	// that name passthroughHost (SNI) to BackendTLS undecrypted, as
	// ingress-nginx's ssl-passthrough, instead of terminating TLS.
	Passthrough bool
}

// passthroughHost is the server name the passthrough cells' clients send
// (SNI); it resolves to 127.0.0.1, and the certificate covers it.
const passthroughHost = "localhost"

// tlsSettings is the TLS every nginx of the bench is set to: TLS 1.3, one
// cipher suite and X25519 first, which check verifies.
const tlsSettings = `
    ssl_protocols TLSv1.3;
    ssl_ecdh_curve X25519:prime256v1;
    ssl_conf_command Ciphersuites TLS_AES_128_GCM_SHA256;
    ssl_certificate "{{.Cert}}";
    ssl_certificate_key "{{.Key}}";`

// safePathRE is what a path in a configuration may be made of.
var safePathRE = regexp.MustCompile(`^/[A-Za-z0-9/._-]+$`)

// safePath refuses a path that needs quoting in any of the three
// configuration languages.
func safePath(p string) error {
	if !safePathRE.MatchString(p) {
		return fmt.Errorf("path %q: only letters, digits and /._- are allowed in generated configurations", p)
	}
	return nil
}

// writeConfig fills tmpl with d into dir/name.
func writeConfig(tmpl *template.Template, d configData, name string) (string, error) {
	for _, p := range []string{d.Dir, d.Docroot, d.Cert, d.Key, d.Bundle} {
		if err := safePath(p); err != nil {
			return "", err
		}
	}
	var b strings.Builder
	if err := tmpl.Execute(&b, d); err != nil {
		return "", err
	}
	path := d.Dir + "/" + name
	return path, os.WriteFile(path, []byte(b.String()), 0o644)
}

// nginxCommon is the part of both nginx configurations outside http{}
// and the temporary files inside it, all in the run folder.
const nginxCommon = `daemon off;
master_process on;
worker_processes 1;
worker_rlimit_nofile 65536;
pid "{{.Dir}}/{{template "name"}}.pid";
error_log "{{.Dir}}/{{template "name"}}.err" warn;
events { worker_connections 16384; }
{{define "temp"}}
    access_log off;
    client_body_temp_path "{{.Dir}}/{{template "name"}}-body";
    proxy_temp_path "{{.Dir}}/{{template "name"}}-proxy";
    fastcgi_temp_path "{{.Dir}}/{{template "name"}}-fastcgi";
    uwsgi_temp_path "{{.Dir}}/{{template "name"}}-uwsgi";
    scgi_temp_path "{{.Dir}}/{{template "name"}}-scgi";
{{- end}}`

// backendConfig is the backend: nginx serving the static files, with
// keep-alive connections that last, stub_status for the count of
// connections the proxies open to it, and /auth, the authentication
// service of the authenticated cells, which answers 200 to the requests
// with the bench's Authorization header and 401 to the others. Its HTTPS
// port, with the proxies' TLS settings, is what the passthrough cells
// reach.
var backendConfig = template.Must(template.New("backend").Parse(`{{define "name"}}backend{{end}}` + nginxCommon + `
http {
    {{- template "temp" .}}` + tlsSettings + `
    sendfile on;
    tcp_nopush on;
    keepalive_requests 1000000;
    keepalive_timeout 300s;
    server {
        listen 127.0.0.1:{{.Backend}} backlog=4096;
        {{- if .BackendTLS}}
        listen 127.0.0.1:{{.BackendTLS}} ssl backlog=4096;
        {{- end}}
        root "{{.Docroot}}";
        location = /status { stub_status; }
        location = /auth {
            if ($http_authorization != "Bearer bench") { return 401; }
            return 200;
        }
    }
}
`))

// nginxConfig is nginx as the proxy under test: upstream keep-alive
// (HTTP/1.1, no Connection header), responses streamed through one 32 KiB
// buffer as ramjetd copies them (proxy_buffering off is also
// ingress-nginx's default; proxy_buffers only has to be large enough for
// nginx's check of proxy_busy_buffers_size), and the forwarding headers
// ramjetd sets. With Auth, the route asks the backend's /auth first with
// auth_request, from an internal location built as ingress-nginx builds
// the one of auth-url (no body, its X-Original-URL, X-Original-Method,
// X-Auth-Request-Redirect and X-Sent-From, kept-alive connections to the
// service as ramjetd's external_auth keepalive) and, cached, remembers the
// answers 5 minutes by the Authorization header in a proxy_cache, as
// ingress-nginx's auth-cache-key does. With Passthrough, the HTTPS port is
// a stream server that reads the server name with ssl_preread and splices
// the connection to the backend's HTTPS port by a map of names.
var nginxConfig = template.Must(template.New("nginx").Parse(`{{define "name"}}nginx{{end}}` +
	`{{if .Passthrough}}load_module /usr/lib/nginx/modules/ngx_stream_module.so;
{{end}}` + nginxCommon + `
{{- if .Passthrough}}
stream {
    upstream backend_tls { server 127.0.0.1:{{.BackendTLS}}; }
    map $ssl_preread_server_name $passthrough { ` + passthroughHost + ` backend_tls; }
    server {
        listen 127.0.0.1:{{.HTTPS}} backlog=4096;
        ssl_preread on;
        proxy_pass $passthrough;
    }
}
{{- end}}
http {
    {{- template "temp" .}}
    keepalive_requests 1000000;
    keepalive_timeout 75s;` + tlsSettings + `
    {{- if eq .Auth "cached"}}
    proxy_cache_path "{{.Dir}}/nginx-authcache" levels=1 keys_zone=auth:1m;
    {{- end}}
    upstream backend {
        server 127.0.0.1:{{.Backend}};
        keepalive 128;
        keepalive_requests 1000000;
        keepalive_timeout 300s;
    }
    server {
        listen 127.0.0.1:{{.HTTP}} backlog=4096;
        {{- if not .Passthrough}}
        listen 127.0.0.1:{{.HTTPS}} ssl http2 backlog=4096;
        {{- end}}
        location / {
            {{- if .Auth}}
            auth_request /_auth;
            {{- end}}
            proxy_pass http://backend;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_buffering off;
            proxy_buffer_size 32k;
            proxy_buffers 4 32k; # unused without buffering; nginx checks their size
            proxy_set_header X-Forwarded-For $remote_addr;
            proxy_set_header X-Forwarded-Host $host;
            proxy_set_header X-Forwarded-Proto $scheme;
            proxy_set_header X-Forwarded-Port $server_port;
            proxy_set_header X-Scheme $scheme;
            proxy_set_header X-Real-IP $remote_addr;
            proxy_set_header X-Request-ID $request_id;
        }
        {{- if .Auth}}
        location = /_auth {
            internal;
            proxy_pass http://backend/auth;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_pass_request_body off;
            proxy_set_header Content-Length "";
            proxy_set_header X-Original-URL $scheme://$http_host$request_uri;
            proxy_set_header X-Original-Method $request_method;
            proxy_set_header X-Auth-Request-Redirect $request_uri;
            proxy_set_header X-Sent-From "nginx-ingress-controller";
            proxy_set_header X-Forwarded-For $remote_addr;
            proxy_set_header X-Forwarded-Host $host;
            proxy_set_header X-Forwarded-Proto $scheme;
            proxy_set_header X-Real-IP $remote_addr;
            proxy_set_header X-Request-ID $request_id;
            {{- if eq .Auth "cached"}}
            proxy_cache auth;
            proxy_cache_key $http_authorization;
            proxy_cache_valid 200 401 5m;
            {{- end}}
        }
        {{- end}}
    }
}
`))

// haproxyConfig is HAProxy as the proxy under test: one thread, no log,
// idle server connections shared by all clients (http-reuse always), 32
// KiB buffers and the forwarding headers ramjetd sets. With Passthrough,
// the HTTPS port is a TCP frontend that waits for the ClientHello and
// splices the connections naming passthroughHost (req_ssl_sni) to the
// backend's HTTPS port.
var haproxyConfig = template.Must(template.New("haproxy").Parse(`global
    nbthread 1
    maxconn 8000
    tune.bufsize 32768

defaults
    mode http
    timeout connect 5s
    timeout client 75s
    timeout server 75s
    timeout http-request 10s
    timeout http-keep-alive 75s

frontend proxy
    bind 127.0.0.1:{{.HTTP}}
    {{- if not .Passthrough}}
    bind 127.0.0.1:{{.HTTPS}} ssl crt "{{.Bundle}}" alpn h2,http/1.1 ssl-min-ver TLSv1.3 curves X25519:P-256 ciphersuites TLS_AES_128_GCM_SHA256
    {{- end}}
    option forwardfor
    http-request set-header X-Forwarded-Host %[req.hdr(host)]
    http-request set-header X-Forwarded-Proto https if { ssl_fc }
    http-request set-header X-Forwarded-Proto http if !{ ssl_fc }
    http-request set-header X-Forwarded-Port %[dst_port]
    http-request set-header X-Scheme %[req.hdr(x-forwarded-proto)]
    http-request set-header X-Real-IP %[src]
    http-request set-header X-Request-ID %[uuid]
    default_backend backend

backend backend
    http-reuse always
    server backend 127.0.0.1:{{.Backend}}
{{- if .Passthrough}}

frontend passthrough
    mode tcp
    bind 127.0.0.1:{{.HTTPS}}
    tcp-request inspect-delay 5s
    tcp-request content accept if { req_ssl_hello_type 1 }
    use_backend backend_tls if { req_ssl_sni -i ` + passthroughHost + ` }

backend backend_tls
    mode tcp
    server backend 127.0.0.1:{{.BackendTLS}}
{{- end}}
`))

// ramjetdConfig is ramjetd with one catch-all application, one route and
// one pool of one member (the backend). Its keep-alive pool has no
// setting: ramjetd keeps up to 320 idle connections per member. With Auth,
// the route's external_auth asks the backend's /auth (a loopback address,
// which allow_loopback_members permits), keeping up to 128 connections to
// it for a million requests each as nginx's upstream does, and, cached,
// remembers the answers 5 minutes by the Authorization header. With
// Passthrough, an application for passthroughHost splices its TLS
// connections to the backend's HTTPS port.
var ramjetdConfig = template.Must(template.New("ramjetd").Parse(`server:
  listeners:
    http: {address: "127.0.0.1:{{.HTTP}}"}
    https: {address: "127.0.0.1:{{.HTTPS}}", tls: {cert_file: "{{.Cert}}", key_file: "{{.Key}}"}}
  access_log: false
  {{- if .Auth}}
  admin: {allow_loopback_members: true}
  {{- end}}
tenants:
  bench:
    pools:
      backend: {members: ["127.0.0.1:{{.Backend}}"]}
      {{- if .Passthrough}}
      backend_tls: {members: ["127.0.0.1:{{.BackendTLS}}"]}
      {{- end}}
    applications:
      {{- if .Passthrough}}
      passthrough:
        domains: [` + passthroughHost + `]
        passthrough: {pool: backend_tls}
        routes:
          - match: {path: {prefix: /}}
            action: {pool: backend}
      {{- end}}
      all:
        domains: ["*"]
        routes:
          - match: {path: {prefix: /}}
            action: {pool: backend}
            {{- if .Auth}}
            policies:
              external_auth:
                url: "http://127.0.0.1:{{.Backend}}/auth"
                keepalive: {connections: 128, requests: 1000000}
                {{- if eq .Auth "cached"}}
                cache: {key: ["header:Authorization"], allowed: 5m, unauthorized: 5m}
                {{- end}}
            {{- end}}
`))
