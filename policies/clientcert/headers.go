package clientcert

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"net/http"
	"strings"
)

// The headers the member receives, as ingress-nginx names them. Whatever
// the client sent under these names is removed first.
const (
	HeaderVerify    = "Ssl-Client-Verify"
	HeaderSubjectDN = "Ssl-Client-Subject-Dn"
	HeaderIssuerDN  = "Ssl-Client-Issuer-Dn"
	HeaderCert      = "Ssl-Client-Cert"
)

// removeClientHeaders deletes the client's values of the headers.
func removeClientHeaders(h http.Header) {
	for _, name := range []string{HeaderVerify, HeaderSubjectDN, HeaderIssuerDN, HeaderCert} {
		delete(h, name)
	}
}

// setHeaders tells the member the outcome: always ssl-client-verify, the
// DNs when there is a certificate, and the certificate itself when pass is
// set.
func setHeaders(h http.Header, o outcome, pass bool) {
	h[HeaderVerify] = []string{o.verify}
	if o.leaf == nil {
		return
	}
	h[HeaderSubjectDN] = []string{distinguishedName(o.leaf.RawSubject)}
	h[HeaderIssuerDN] = []string{distinguishedName(o.leaf.RawIssuer)}
	if pass {
		h[HeaderCert] = []string{escapedPEM(o.leaf)}
	}
}

// distinguishedName writes a DER name as RFC 2253 does (the last RDN of
// the certificate first, as nginx's $ssl_client_s_dn since 1.11.6), in the
// order of the certificate.
func distinguishedName(raw []byte) string {
	var seq pkix.RDNSequence
	if rest, err := asn1.Unmarshal(raw, &seq); err != nil || len(rest) > 0 {
		return ""
	}
	return seq.String()
}

// escapedPEM is the PEM of cert, URL-encoded as nginx's
// $ssl_client_escaped_cert: every byte but RFC 3986's unreserved ones is
// percent-encoded, so that any URL decoder gets the PEM back ('+' stays
// "%2B", never a space).
func escapedPEM(cert *x509.Certificate) string {
	const hex = "0123456789ABCDEF"
	data := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw})
	var b strings.Builder
	b.Grow(len(data) * 3 / 2)
	for _, c := range data {
		if isUnreserved(c) {
			b.WriteByte(c)
		} else {
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
	return b.String()
}

func isUnreserved(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}
