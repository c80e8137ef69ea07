// Command oidc is an OpenID Connect provider for tests: mockoidc serving
// on -listen, with a fixed client and one user. Its authorization endpoint
// signs that user in without a page (it redirects straight back to the
// client's redirect_uri with a code), so a test's HTTP client can follow
// the whole sign-in flow. It prints its issuer URL on stdout once it
// listens, and serves until SIGTERM or SIGINT.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/oauth2-proxy/mockoidc"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "oidc:", err)
		os.Exit(1)
	}
}

func run() error {
	listen := flag.String("listen", "127.0.0.1:0", "the address to serve on (host:port)")
	clientID := flag.String("client-id", "", "the client id the provider accepts")
	clientSecret := flag.String("client-secret", "", "the client secret the provider accepts")
	email := flag.String("email", "", "the e-mail address of the user (verified)")
	subject := flag.String("subject", "", "the user's subject (sub claim)")
	username := flag.String("username", "", "the user's preferred_username")
	flag.Parse()
	if *clientID == "" || *clientSecret == "" || *email == "" || *subject == "" {
		return errors.New("-client-id, -client-secret, -email and -subject are required")
	}
	user := &mockoidc.MockUser{Subject: *subject, Email: *email, EmailVerified: true, PreferredUsername: *username}
	m, err := mockoidc.NewServer(nil)
	if err != nil {
		return err
	}
	m.ClientID, m.ClientSecret = *clientID, *clientSecret
	// Every sign-in is the configured user's: without one queued, mockoidc
	// signs in its own default user.
	if err := m.AddMiddleware(queueUser(m, user)); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	if err := m.Start(ln, nil); err != nil {
		return err
	}
	fmt.Println(m.Issuer())
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	<-ctx.Done()
	return m.Shutdown()
}

// queueUser queues user before every request to the authorization
// endpoint.
func queueUser(m *mockoidc.MockOIDC, user mockoidc.User) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == mockoidc.AuthorizationEndpoint {
				m.QueueUser(user)
			}
			next.ServeHTTP(w, r)
		})
	}
}
