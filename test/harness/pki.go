package harness

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"time"

	"github.com/ramjet-dev/ramjet/dataplane/certs"
)

// apiServiceIP is the cluster IP of the "kubernetes" Service: the first
// address of ServiceCIDR.
func apiServiceIP() netip.Addr { return netip.MustParsePrefix(ServiceCIDR).Addr().Next() }

// adminUser is the client certificate's user; its group system:masters
// is allowed everything by the API server's RBAC bootstrap policy.
const adminUser = "ramjet-admin"

// pki holds the credentials of one cluster, PEM-encoded.
type pki struct {
	caCert                []byte
	serverCert, serverKey []byte
	clientCert, clientKey []byte
	// saKey signs service account tokens and saPub verifies them.
	saKey, saPub []byte
}

// newPKI makes a CA, the API server's serving certificate (127.0.0.1,
// localhost, and as kube-apiserver's own certificates the "kubernetes"
// Service's names and cluster IP, which pods reach it at) and the admin
// client certificate, valid for a day.
func newPKI() (*pki, error) {
	ca, err := NewCA("ramjet-harness-ca")
	if err != nil {
		return nil, err
	}
	p := &pki{caCert: ca.PEM}
	p.serverCert, p.serverKey, err = ca.Issue("127.0.0.1", "::1", "localhost", "kubernetes", "kubernetes.default",
		"kubernetes.default.svc", "kubernetes.default.svc.cluster.local", apiServiceIP().String())
	if err != nil {
		return nil, err
	}
	client := certTemplate(adminUser)
	client.Subject.Organization = []string{"system:masters"}
	client.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	if p.clientCert, p.clientKey, err = issue(client, ca.Cert, ca.key); err != nil {
		return nil, err
	}

	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	if p.saKey, err = keyPEM(saKey); err != nil {
		return nil, err
	}
	pub, err := x509.MarshalPKIXPublicKey(saKey.Public())
	if err != nil {
		return nil, err
	}
	p.saPub = pemBlock("PUBLIC KEY", pub)
	return p, nil
}

// CA is a certificate authority for a test: it issues server and client
// certificates signed with an ECDSA P-256 key, valid for a day.
type CA struct {
	// Cert is the authority's certificate, PEM its encoding, Pool a pool
	// that trusts it.
	Cert *x509.Certificate
	PEM  []byte
	Pool *x509.CertPool
	key  crypto.Signer
}

// NewCA makes an authority named name.
func NewCA(name string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := certTemplate(name)
	tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
	tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &CA{Cert: cert, PEM: pemBlock("CERTIFICATE", der), Pool: pool, key: key}, nil
}

// Issue returns a server certificate for hosts (DNS names, or IP addresses
// for those that parse as one; the first is its common name) and its new
// key, PEM-encoded.
func (ca *CA) Issue(hosts ...string) (certPEM, keyPEM []byte, err error) {
	tmpl := certTemplate(hosts[0])
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	return issue(tmpl, ca.Cert, ca.key)
}

// IssueClient returns a client certificate whose subject is the common name
// cn (for client certificate authentication) and its new key, PEM-encoded.
func (ca *CA) IssueClient(cn string) (certPEM, keyPEM []byte, err error) {
	tmpl := certTemplate(cn)
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	return issue(tmpl, ca.Cert, ca.key)
}

// RevocationList returns a PEM revocation list of the authority, valid
// from an hour ago for a day, revoking the certificates of the serial
// numbers given.
func (ca *CA) RevocationList(serials ...*big.Int) ([]byte, error) {
	now := time.Now()
	list := &x509.RevocationList{Number: big.NewInt(now.UnixNano()), ThisUpdate: now.Add(-time.Hour), NextUpdate: now.Add(24 * time.Hour)}
	for _, serial := range serials {
		entry := x509.RevocationListEntry{SerialNumber: serial, RevocationTime: now.Add(-time.Minute)}
		list.RevokedCertificateEntries = append(list.RevokedCertificateEntries, entry)
	}
	der, err := x509.CreateRevocationList(rand.Reader, list, ca.Cert, ca.key)
	if err != nil {
		return nil, err
	}
	return pemBlock("X509 CRL", der), nil
}

// certTemplate returns a certificate template named cn, valid from an hour
// ago (clock skew) for a day.
func certTemplate(cn string) *x509.Certificate {
	serial, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	return &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
	}
}

// issue signs tmpl with the CA and returns the certificate and its new key.
func issue(tmpl, ca *x509.Certificate, caKey crypto.Signer) (certPEM, key []byte, err error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, k.Public(), caKey)
	if err != nil {
		return nil, nil, err
	}
	key, err = keyPEM(k)
	return pemBlock("CERTIFICATE", der), key, err
}

// SelfSigned returns a self-signed certificate for hosts (IP addresses and
// DNS names) and a pool that trusts it: for a TLSBackend and the clients
// that check it.
func SelfSigned(hosts ...string) (tls.Certificate, *x509.CertPool, error) {
	cert, err := certs.SelfSigned("ramjet-harness-backend", hosts...)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert.Leaf)
	return *cert, pool, nil
}

func keyPEM(k crypto.Signer) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return nil, err
	}
	return pemBlock("PRIVATE KEY", der), nil
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

// write stores the credentials in dir under the names the API server's
// flags use, readable by the owner only.
func (p *pki) write(dir string) error {
	for name, data := range map[string][]byte{
		"ca.crt":        p.caCert,
		"apiserver.crt": p.serverCert,
		"apiserver.key": p.serverKey,
		"sa.key":        p.saKey,
		"sa.pub":        p.saPub,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return err
		}
	}
	return nil
}
