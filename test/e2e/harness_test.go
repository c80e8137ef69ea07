// Package e2e tests nginx annotations (and Gateway API routes) end to end, on the path the
// controller uses: Kubernetes objects (YAML) are read by offline.Read,
// translated by sources.Translate with every annotation family on, written
// with their files into a temporary folder, and served by a ramjetd running
// in the test process on loopback ports, in front of Go HTTP backends in
// network namespaces (test/harness: they need root, as the controller's
// end-to-end tests). Each test sends requests with a Host header and checks
// what a user sees: status, headers, body and which backend answered.
package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"text/template"
	"time"

	"gopkg.in/yaml.v3"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	_ "github.com/ramjet-dev/ramjet/annotations/all"
	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/dataplane/daemon"
	"github.com/ramjet-dev/ramjet/registry"
	"github.com/ramjet-dev/ramjet/sources"
	"github.com/ramjet-dev/ramjet/sources/gatewayapi"
	"github.com/ramjet-dev/ramjet/sources/ingress"
	"github.com/ramjet-dev/ramjet/sources/input"
	"github.com/ramjet-dev/ramjet/sources/offline"
	"github.com/ramjet-dev/ramjet/test/harness"
)

// ingressClass is prepended to every test's objects.
const ingressClass = `apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: ramjet}
spec: {controller: ramjet.dev/ingress}
---
`

// ramjet is a ramjetd serving the translation of a test's objects.
type ramjet struct {
	// url is the base URL of the plain HTTP listener.
	url    string
	client *http.Client
}

// start renders objects (a text/template executed on data, with the
// functions of templateFuncs), translates them as the controller does,
// and serves the result with a ramjetd that stops when the test ends. The
// test fails when the translation leaves an object unserved or the
// configuration is invalid; findings are logged.
func start(t *testing.T, objects string, data map[string]any) *ramjet {
	t.Helper()
	tmpl := template.Must(template.New("objects").Funcs(templateFuncs).Parse(objects))
	var manifest strings.Builder
	manifest.WriteString(ingressClass)
	if err := tmpl.Execute(&manifest, data); err != nil {
		t.Fatalf("objects template: %v", err)
	}
	snap, notes, err := offline.Read([]string{"-"}, strings.NewReader(manifest.String()))
	if err != nil {
		t.Fatalf("reading the objects: %v", err)
	}
	for _, w := range append(notes.Warnings, notes.Unreadable...) {
		t.Errorf("reading the objects: %s", w)
	}

	// A short folder of its own: the admin socket's path must stay under
	// the 108 bytes a unix socket name may have.
	dir, err := os.MkdirTemp("", "ramjet-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sel, err := registry.Select("all")
	if err != nil {
		t.Fatal(err)
	}
	// Gateways share the base's listeners (--gateway-listener 80=http
	// 443=https), so one ramjetd serves both inputs.
	gateways := &gatewayapi.Input{Addressing: &gatewayapi.Shared{Ports: map[gatewayv1.PortNumber]string{80: "http", 443: "https"}}}
	opts := sources.Options{
		Inputs: []input.Input{&ingress.Input{Options: ingress.Options{
			IngressClass: "ramjet", ControllerClass: ingress.DefaultControllerClass, Annotations: sel,
		}}, gateways},
		HTTPSListener: "https",
	}
	opts.Core.FileDir = dir
	base := &config.Server{
		Listeners: map[string]*config.Listener{
			"http":  {Address: "127.0.0.1:0"},
			"https": {Address: "127.0.0.1:0", TLS: &config.ListenerTLS{}},
		},
		Health: config.Health{Address: "127.0.0.1:0"},
		Admin:  config.Admin{Socket: filepath.Join(dir, "admin.sock")},
	}
	out := sources.Translate(snap, base, opts)
	checkTranslation(t, out)

	cfg, err := yaml.Marshal(out.Config)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "ramjet.yaml")
	if err := os.WriteFile(path, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := offline.WriteFiles(dir, out.Files); err != nil {
		t.Fatal(err)
	}
	d, err := daemon.New(daemon.Options{ConfigPath: path, ShutdownTimeout: 2 * time.Second, Log: testLogger(t)})
	if err != nil {
		t.Fatalf("ramjetd refused the configuration: %v\n%s", err, cfg)
	}
	if err := d.Start(); err != nil {
		t.Fatalf("starting ramjetd: %v", err)
	}
	r := &ramjet{
		url: "http://" + d.Status().Listeners["http"],
		client: &http.Client{
			Transport:     &http.Transport{MaxIdleConnsPerHost: 16},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
			Timeout:       10 * time.Second,
		},
	}
	t.Cleanup(func() {
		r.client.CloseIdleConnections()
		d.Shutdown()
	})
	return r
}

// checkTranslation fails the test when an object is not served, a flag's
// object has a problem or the configuration is invalid, and logs the
// findings.
func checkTranslation(t *testing.T, out *sources.Output) {
	t.Helper()
	for _, f := range out.Findings {
		t.Logf("finding: %s %s/%s %s: %s", f.Object.Kind, f.Object.Namespace, f.Object.Name, f.Reason, f.Message)
	}
	if len(out.Objects) == 0 {
		t.Fatal("the translation took no object")
	}
	for o, s := range out.Objects {
		if s != core.Served {
			t.Fatalf("%s %s/%s is %s", o.Kind, o.Namespace, o.Name, s)
		}
	}
	for _, p := range out.Problems {
		t.Errorf("translation problem: %s", p)
	}
	if err := out.Config.Validate(); err != nil {
		t.Fatalf("the translation is not valid: %v", err)
	}
}

// templateFuncs are the functions the objects' templates may call.
var templateFuncs = template.FuncMap{
	// b64 encodes a Secret's value.
	"b64": func(v any) string {
		switch v := v.(type) {
		case []byte:
			return base64.StdEncoding.EncodeToString(v)
		default:
			return base64.StdEncoding.EncodeToString(fmt.Append(nil, v))
		}
	},
	"ingress": ingressObject,
	"service": service,
}

// ingressObject renders an Ingress of namespace app sending every path of
// host (the Prefix /) to port http of service. The annotations are given
// without their prefix, as key, value pairs or maps.
func ingressObject(name, host, service string, annotations ...any) (string, error) {
	values := map[string]string{}
	for i := 0; i < len(annotations); i++ {
		switch a := annotations[i].(type) {
		case map[string]string:
			maps.Copy(values, a)
		case string:
			v, ok := "", i+1 < len(annotations)
			if ok {
				v, ok = annotations[i+1].(string)
			}
			if !ok {
				return "", fmt.Errorf("ingress %s: annotation %s has no string value", name, a)
			}
			values[a] = v
			i++
		default:
			return "", fmt.Errorf("ingress %s: annotation argument %v is neither a key nor a map", name, a)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: %s\n  namespace: app\n  annotations:\n", name)
	for _, k := range slices.Sorted(maps.Keys(values)) {
		fmt.Fprintf(&b, "    %s%s: %q\n", registry.Prefix, k, values[k])
	}
	fmt.Fprintf(&b, "spec:\n  ingressClassName: ramjet\n  rules:\n    - host: %s\n      http:\n        paths:\n"+
		"          - {path: /, pathType: Prefix, backend: {service: {name: %s, port: {name: http}}}}\n", host, service)
	return b.String(), nil
}

// service renders a Service of namespace app with one port, 80 named
// http, and one EndpointSlice per backend, each with the backend's own
// port under that name: the Service's members are all the backends.
func service(name string, backends ...*backend) string {
	var b strings.Builder
	fmt.Fprintf(&b, "---\napiVersion: v1\nkind: Service\nmetadata: {name: %s, namespace: app}\nspec: {ports: [{name: http, port: 80}]}\n", name)
	for i, be := range backends {
		fmt.Fprintf(&b, "---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\n"+
			"metadata: {name: %s-%d, namespace: app, labels: {kubernetes.io/service-name: %s}}\n"+
			"addressType: IPv4\nports: [{name: http, port: %d}]\nendpoints: [{addresses: [%s]}]\n",
			name, i, name, be.port, be.ip)
	}
	return b.String()
}

// testLogger sends ramjetd's logs to the test log.
func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// echo is what a backend answers: its name and what it received.
type echo struct {
	Backend string      `json:"backend"`
	Method  string      `json:"method"`
	Path    string      `json:"path"`
	Query   string      `json:"query"`
	Header  http.Header `json:"header"`
}

// backend is a Go HTTP server in a network namespace of its own
// (test/harness), answering with an echo (and the header X-Backend naming
// it) and counting its requests. Not on loopback: the controller's
// translation never makes a member of a loopback endpoint (the address
// rule), so a backend has the address a pod would.
type backend struct {
	name     string
	ip       string
	port     int32
	requests atomic.Int64
}

// startBackend serves over TLS when tlsConfig is not nil, until the test
// ends.
func startBackend(t *testing.T, name string, tlsConfig *tls.Config) *backend {
	t.Helper()
	b := &backend{name: name}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.requests.Add(1)
		io.Copy(io.Discard, r.Body)
		w.Header().Set("X-Backend", name)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(echo{Backend: name, Method: r.Method, Path: r.URL.EscapedPath(), Query: r.URL.RawQuery, Header: r.Header})
	})
	network := harness.NewNetwork(t)
	var served *harness.Backend
	if tlsConfig != nil {
		served = network.TLSBackend(t, name, handler, tlsConfig)
	} else {
		served = network.Backend(t, name, handler)
	}
	b.ip, b.port = served.IP, served.Port
	return b
}

// response is what came back to the client; echo is set when a backend
// answered.
type response struct {
	status int
	header http.Header
	body   string
	echo   *echo
}

// backend names the backend that answered, or "" when ramjetd did.
func (r response) backend() string {
	if r.echo == nil {
		return ""
	}
	return r.echo.Backend
}

// get sends a GET for target (path and query) with the Host header host
// and the headers given as name, value pairs.
func (r *ramjet) get(t *testing.T, host, target string, header ...string) response {
	t.Helper()
	return r.do(t, http.MethodGet, host, target, header...)
}

// do sends a request to the plain HTTP listener.
func (r *ramjet) do(t *testing.T, method, host, target string, header ...string) response {
	t.Helper()
	req, err := http.NewRequest(method, r.url+target, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Add(header[i], header[i+1])
	}
	resp, err := r.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s (Host %s): %v", method, target, host, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s (Host %s): reading the body: %v", method, target, host, err)
	}
	out := response{status: resp.StatusCode, header: resp.Header, body: string(body)}
	if resp.Header.Get("X-Backend") != "" {
		out.echo = new(echo)
		if err := json.Unmarshal(body, out.echo); err != nil {
			t.Fatalf("%s %s (Host %s): the backend's echo does not decode: %v\n%s", method, target, host, err, body)
		}
	}
	return out
}

// testCA is a certificate authority for test certificates.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	// pem is the CA certificate, as a ca.crt holds it.
	pem []byte
}

func newCA(t *testing.T, name string) *testCA {
	t.Helper()
	tmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: name},
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	cert, key, der := makeCert(t, tmpl, nil, nil)
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue returns a leaf certificate for name, for servers or for clients,
// as PEM (the certificate and its key, as tls.crt and tls.key hold them)
// and as a tls.Certificate.
func (ca *testCA) issue(t *testing.T, name string, usage x509.ExtKeyUsage) (certPEM, keyPEM []byte, cert tls.Certificate) {
	t.Helper()
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: name},
		DNSNames:    []string{name},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{usage},
	}
	_, key, der := makeCert(t, tmpl, ca.cert, ca.key)
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM = pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	cert, err = tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return certPEM, keyPEM, cert
}

// makeCert signs tmpl, valid for an hour either side of now, with a new
// P-256 key, by parent (self-signed when nil).
func makeCert(t *testing.T, tmpl, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		t.Fatal(err)
	}
	tmpl.SerialNumber = serial
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key, der
}
