// Package clientcert is the client certificate authentication of an
// application (nginx's ssl_verify_client, ingress-nginx's auth-tls-*): the
// TLS settings that ask for a certificate in the handshake, its verification
// against the application's authorities, revocation lists and depth, and the
// handler that answers a request by the outcome and tells the member about
// the certificate in the ssl-client-* headers.
//
// The handshake only asks for the certificate; it is verified for every
// request, by the serving configuration, so that a failure is answered in
// HTTP (400, or a redirect to the error page) as nginx does, and a reload
// that changes the authorities applies to connections already open.
package clientcert

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"hash/maphash"
	"regexp"
	"slices"
	"sync/atomic"
	"time"

	"github.com/ramjet-dev/ramjet/dataplane/config"
)

// Policy is the compiled client_auth of one application. It never changes
// and is safe for concurrent use.
type Policy struct {
	mode      config.VerifyClient
	roots     *x509.CertPool
	crls      []*x509.RevocationList
	depth     int
	pass      bool
	errorPage string
	subject   *regexp.Regexp

	// verified remembers chains that verified, so that the requests of a
	// kept-alive connection do not each pay the signature checks of the
	// chain and of the revocation lists: a slot per hash of the leaf's
	// signature, replaced on a collision, read and written without a lock.
	verified [verifiedSlots]atomic.Pointer[success]
	seed     maphash.Seed
}

// verifiedSlots bounds the chains a Policy remembers; verifiedFor bounds
// how long a remembered verification stands (besides the certificates' and
// the lists' own validity).
const (
	verifiedSlots = 512
	verifiedFor   = time.Minute
)

// success is a remembered verification: leaf is the certificate of one
// handshake (pointer identity: a later handshake parses its own), until
// the first time it must be checked again.
type success struct {
	leaf  *x509.Certificate
	from  time.Time
	until time.Time
}

// New compiles cfg with its authorities and revocation lists, loaded and
// checked by the caller (certs.LoadCACertificatesFile, certs.LoadCRLFile).
// cfg.SubjectRegex must have passed validation.
func New(cfg *config.ClientAuth, cas []*x509.Certificate, crls []*x509.RevocationList) *Policy {
	roots := x509.NewCertPool()
	for _, ca := range cas {
		roots.AddCert(ca)
	}
	p := &Policy{mode: cfg.Mode(), roots: roots, crls: crls, depth: cfg.Depth(), pass: cfg.PassCertificate, errorPage: cfg.ErrorPage,
		seed: maphash.MakeSeed()}
	if cfg.SubjectRegex != "" {
		p.subject, _ = config.CompileSubjectRegex(cfg.SubjectRegex)
	}
	return p
}

// Handshake returns base with the settings that ask for a client
// certificate and, but in mode optional_no_ca, name the policy's
// authorities to the client (clients offer only certificates those
// issued; optional_no_ca takes any). The handshake never fails for the
// certificate: requests are answered by its verification (Handler).
// Sessions are not resumed, so that a certificate is always asked for
// anew: a ticket of a handshake that gave none, or gave one to another
// host, cannot stand in for it (nginx keeps the sessions of such a server
// apart by their session context).
func (p *Policy) Handshake(base *tls.Config) *tls.Config {
	cfg := base.Clone()
	cfg.ClientAuth = tls.RequestClientCert
	cfg.SessionTicketsDisabled = true
	if p.mode != config.VerifyOptionalNoCA {
		cfg.ClientCAs = p.roots
	}
	return cfg
}

// The values of ssl-client-verify besides "FAILED:<reason>".
const (
	verifySuccess = "SUCCESS"
	verifyNone    = "NONE"
)

// outcome is what a request's certificate is worth.
type outcome struct {
	// verify is the value of ssl-client-verify.
	verify string
	// leaf is the client's certificate, nil without one.
	leaf *x509.Certificate
	// refused is set when the request is answered 400 (or redirected to
	// the error page); message says why.
	refused bool
	message string
}

// The answers of refused requests, as nginx words them.
const (
	noCertMessage  = "No required SSL certificate was sent"
	certErrMessage = "The SSL certificate error"
)

// check verifies the certificates of a TLS connection at now.
func (p *Policy) check(state *tls.ConnectionState, now time.Time) outcome {
	if state == nil || len(state.PeerCertificates) == 0 {
		return outcome{verify: verifyNone, refused: p.mode == config.VerifyOn, message: noCertMessage}
	}
	chain := state.PeerCertificates
	slot := &p.verified[maphash.Bytes(p.seed, chain[0].Signature)%verifiedSlots]
	if s := slot.Load(); s != nil && s.leaf == chain[0] && !now.Before(s.from) && now.Before(s.until) {
		return outcome{verify: verifySuccess, leaf: chain[0]}
	}
	reason, unknownIssuer := p.verify(chain, now)
	if reason == "" {
		slot.Store(&success{leaf: chain[0], from: now, until: p.recheck(chain, now)})
		return outcome{verify: verifySuccess, leaf: chain[0]}
	}
	refused := !(p.mode == config.VerifyOptionalNoCA && unknownIssuer)
	return outcome{verify: "FAILED:" + reason, leaf: chain[0], refused: refused, message: certErrMessage}
}

// recheck is when a chain that verified at now must be verified again: the
// first end of validity of its certificates or of the revocation lists,
// and at the latest verifiedFor after now.
func (p *Policy) recheck(chain []*x509.Certificate, now time.Time) time.Time {
	until := now.Add(verifiedFor)
	for _, c := range chain {
		if c.NotAfter.Before(until) {
			until = c.NotAfter
		}
	}
	for _, crl := range p.crls {
		if !crl.NextUpdate.IsZero() && crl.NextUpdate.Before(until) {
			until = crl.NextUpdate
		}
	}
	return until
}

// verify returns "" for a chain that verifies, else the reason in
// OpenSSL's words, and whether the reason is that no authority of the
// policy issued it (the failures optional_no_ca lets through).
func (p *Policy) verify(chain []*x509.Certificate, now time.Time) (reason string, unknownIssuer bool) {
	intermediates := x509.NewCertPool()
	for _, c := range chain[1:] {
		intermediates.AddCert(c)
	}
	chains, err := chain[0].Verify(x509.VerifyOptions{
		Roots:         p.roots,
		Intermediates: intermediates,
		CurrentTime:   now,
		KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	if err != nil {
		return failureReason(err, now)
	}
	verified := slices.MinFunc(chains, func(a, b []*x509.Certificate) int { return len(a) - len(b) })
	// verified runs from the leaf to the authority: what stands between
	// them are intermediates.
	if len(verified)-2 > p.depth {
		return "certificate chain too long", false
	}
	return p.revocation(verified, now), false
}

// failureReason words a verification error as OpenSSL's
// X509_verify_cert_error_string does, which nginx puts in
// $ssl_client_verify.
func failureReason(err error, now time.Time) (string, bool) {
	var invalid x509.CertificateInvalidError
	var unknown x509.UnknownAuthorityError
	switch {
	case errors.As(err, &unknown):
		if unknown.Cert != nil && unknown.Cert.CheckSignatureFrom(unknown.Cert) == nil {
			return "self signed certificate", true
		}
		return "unable to get local issuer certificate", true
	case errors.As(err, &invalid) && invalid.Reason == x509.Expired:
		if invalid.Cert != nil && now.Before(invalid.Cert.NotBefore) {
			return "certificate is not yet valid", false
		}
		return "certificate has expired", false
	case errors.As(err, &invalid) && invalid.Reason == x509.IncompatibleUsage:
		return "unsupported certificate purpose", false
	}
	return "certificate verify failed", false
}

// revocation returns "" when no certificate of the verified chain (leaf
// first, authority last) is revoked by a list of its issuer, else the
// reason.
func (p *Policy) revocation(verified []*x509.Certificate, now time.Time) string {
	for i, cert := range verified[:len(verified)-1] {
		issuer := verified[i+1]
		for _, crl := range p.crls {
			if crl.CheckSignatureFrom(issuer) != nil {
				continue
			}
			if !crl.NextUpdate.IsZero() && now.After(crl.NextUpdate) {
				return "CRL has expired"
			}
			for _, entry := range crl.RevokedCertificateEntries {
				if entry.SerialNumber.Cmp(cert.SerialNumber) == 0 {
					return "certificate revoked"
				}
			}
		}
	}
	return ""
}
