package sources_test

import (
	"crypto/x509"
	"encoding/pem"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/certs"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/sources"
	"github.com/ramjet-dev/ramjet/sources/snapshot"
)

// TestDefaultCertificate covers --default-ssl-certificate: a usable Secret
// becomes the HTTPS listener's certificate, written as files named by
// their digest; any problem keeps the generated certificate and is
// reported without Secret data.
func TestDefaultCertificate(t *testing.T) {
	certPEM, keyPEM := selfSignedPEM(t)
	snap := snapshot.New()
	snap.Add(tlsSecret("ops", "default-cert", corev1.SecretTypeTLS, certPEM, keyPEM))
	snap.Add(tlsSecret("ops", "opaque", corev1.SecretTypeOpaque, certPEM, keyPEM))
	snap.Add(tlsSecret("ops", "broken", corev1.SecretTypeTLS, certPEM, []byte("not a key")))

	tests := []struct {
		name, flag, listener string
		wantCert             bool
		wantProblem          string
	}{
		{"usable", "ops/default-cert", "https", true, ""},
		{"unset", "", "https", false, ""},
		{"malformed", "default-cert", "https", false, `--default-ssl-certificate "default-cert": want namespace/name`},
		{"missing", "ops/nothing", "https", false, "--default-ssl-certificate ops/nothing: the Secret does not exist; the generated certificate is served"},
		{"opaque", "ops/opaque", "https", false, `the Secret is of type "Opaque", not kubernetes.io/tls`},
		{"broken key", "ops/broken", "https", false, "--default-ssl-certificate ops/broken: tls.key"},
		{"no such listener", "ops/default-cert", "tls", false, `--https-listener "tls": the base configuration has no such listener`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base := &config.Server{Listeners: map[string]*config.Listener{
				"http":  {Address: ":80"},
				"https": {Address: ":443", TLS: &config.ListenerTLS{}},
			}}
			opts := sources.Options{DefaultSSLCertificate: tc.flag, HTTPSListener: tc.listener}
			opts.Core.FileDir = "/run/ramjet"
			out := sources.Translate(snap, base, opts)

			problems := strings.Join(out.Problems, "\n")
			if tc.wantProblem == "" && problems != "" || !strings.Contains(problems, tc.wantProblem) {
				t.Errorf("problems = %q, want %q", problems, tc.wantProblem)
			}
			if strings.Contains(problems, "BEGIN") || strings.Contains(problems, "not a key") {
				t.Errorf("a problem holds Secret data: %q", problems)
			}
			if base.Listeners["https"].TLS.CertFile != "" {
				t.Error("the base configuration was modified")
			}
			checkHTTPSListener(t, out, tc.wantCert, certPEM, keyPEM)
			if err := out.Config.Validate(); err != nil {
				t.Errorf("the configuration is invalid: %v", err)
			}
		})
	}
}

func checkHTTPSListener(t *testing.T, out *sources.Output, wantCert bool, certPEM, keyPEM []byte) {
	t.Helper()
	tls := out.Config.Server.Listeners["https"].TLS
	if !wantCert {
		if tls.CertFile != "" || tls.KeyFile != "" || len(out.Files) != 0 {
			t.Errorf("listener TLS = %+v, files %d; want the generated certificate and no files", tls, len(out.Files))
		}
		return
	}
	wantCertFile := "/run/ramjet/" + core.FileName(certPEM, ".crt")
	wantKeyFile := "/run/ramjet/" + core.FileName(keyPEM, ".key")
	if tls.CertFile != wantCertFile || tls.KeyFile != wantKeyFile {
		t.Errorf("listener TLS = %s, %s; want %s, %s", tls.CertFile, tls.KeyFile, wantCertFile, wantKeyFile)
	}
	if string(out.Files[core.FileName(certPEM, ".crt")]) != string(certPEM) || string(out.Files[core.FileName(keyPEM, ".key")]) != string(keyPEM) {
		t.Error("the certificate and key files do not hold the Secret's data")
	}
	if out.Config.Server.Listeners["http"].TLS != nil {
		t.Error("the http listener got TLS")
	}
}

func tlsSecret(namespace, name string, typ corev1.SecretType, certPEM, keyPEM []byte) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Type:       typ,
		Data:       map[string][]byte{corev1.TLSCertKey: certPEM, corev1.TLSPrivateKeyKey: keyPEM},
	}
}

func selfSignedPEM(t *testing.T) (certPEM, keyPEM []byte) {
	t.Helper()
	cert, err := certs.SelfSigned("default.example.com", "default.example.com")
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	certPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]})
	keyPEM = pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	return certPEM, keyPEM
}
