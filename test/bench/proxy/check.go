package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"time"
)

// check asks url once, as the cell's load generator will (HTTP/1.1 or
// HTTP/2; TLS 1.3 with X25519 as wrk's and h2load's OpenSSL offer it), and
// wants 200 with exactly want as the body, and over TLS the protocol,
// cipher suite and key exchange every proxy is set to use. For an
// authenticated cell it first wants 401 for a request without the bench's
// Authorization header (the proxy asked the service), then sends the
// header.
func check(ctx context.Context, c cell, url string, want []byte, cert certFiles) error {
	protocols := new(http.Protocols)
	if c.mode == http2 {
		protocols.SetHTTP2(true)
	} else {
		protocols.SetHTTP1(true)
	}
	tr := &http.Transport{
		Protocols: protocols,
		TLSClientConfig: &tls.Config{
			RootCAs:          cert.roots,
			MinVersion:       tls.VersionTLS13,
			CurvePreferences: []tls.CurveID{tls.X25519},
		},
		DisableCompression: true,
	}
	defer tr.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	header := http.Header{}
	if c.auth != noAuth {
		resp, _, err := fetch(ctx, tr, url, header)
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusUnauthorized {
			return fmt.Errorf("GET %s without %s: status %d, want the authentication service's 401", url, authHeader, resp.StatusCode)
		}
		header.Set(authHeader, authToken)
	}
	resp, body, err := fetch(ctx, tr, url, header)
	if err != nil {
		return err
	}
	switch {
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("GET %s: status %d, want 200", url, resp.StatusCode)
	case !bytes.Equal(body, want):
		return fmt.Errorf("GET %s: %d bytes that differ from the backend's file of %d bytes", url, len(body), len(want))
	case c.mode == http2 && resp.ProtoMajor != 2:
		return fmt.Errorf("GET %s: answered over %s, want HTTP/2", url, resp.Proto)
	case c.tls && (resp.TLS == nil || resp.TLS.Version != tls.VersionTLS13 ||
		resp.TLS.CipherSuite != tls.TLS_AES_128_GCM_SHA256 || resp.TLS.CurveID != tls.X25519):
		return fmt.Errorf("GET %s: not TLS 1.3 with TLS_AES_128_GCM_SHA256 and X25519", url)
	}
	return nil
}

// fetch sends GET url with header through tr and returns the answer and
// its body (err is about the body too).
func fetch(ctx context.Context, tr *http.Transport, url string, header http.Header) (*http.Response, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, nil, err
	}
	req.Header = header
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		err = fmt.Errorf("GET %s: body: %w", url, err)
	}
	return resp, body, err
}
