package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// prober sends requests to ramjetd's listeners whatever the URL's host
// (which becomes the Host header and the TLS server name), as the printed
// curl commands do with -H 'Host: ...' and --resolve.
type prober struct {
	client *http.Client
}

func newProber(httpAddr, httpsAddr string, ca *x509.CertPool) *prober {
	dialer := &net.Dialer{Timeout: 2 * time.Second}
	transport := &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			target := httpAddr
			if _, port, _ := net.SplitHostPort(addr); port == "443" {
				target = httpsAddr
			}
			return dialer.DialContext(ctx, network, target)
		},
		TLSClientConfig: &tls.Config{RootCAs: ca},
	}
	return &prober{client: &http.Client{
		Transport:     transport,
		Timeout:       5 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// answer is what ramjetd answered.
type answer struct {
	status int
	header http.Header
	body   string
}

// backend is the name of the backend that answered, "" when none did.
func (a answer) backend() string { return field(a.body, "backend") }

func (a answer) String() string {
	return fmt.Sprintf("%d %q", a.status, strings.TrimSpace(a.body))
}

// request is a GET of url with the header pairs (name, value, ...), and
// basic authentication when user is not empty.
type request struct {
	url, user, password string
	header              []string
}

// get sends r.
func (p *prober) get(ctx context.Context, r request) (answer, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.url, nil)
	if err != nil {
		return answer{}, err
	}
	for i := 0; i+1 < len(r.header); i += 2 {
		req.Header.Set(r.header[i], r.header[i+1])
	}
	if r.user != "" {
		req.SetBasicAuth(r.user, r.password)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64*1024))
	return answer{resp.StatusCode, resp.Header, string(body)}, err
}

// expect sends r and fails unless the answer has status and comes from one
// of backends (from none when there is none).
func (p *prober) expect(ctx context.Context, r request, status int, backends ...string) (answer, error) {
	a, err := p.get(ctx, r)
	if err != nil {
		return a, err
	}
	if a.status != status || (len(backends) > 0 && !slices.Contains(backends, a.backend())) ||
		(len(backends) == 0 && a.backend() != "") {
		who := "no backend"
		if len(backends) > 0 {
			who = "backend " + strings.Join(backends, " or ")
		}
		return a, fmt.Errorf("GET %s: got %s, want %d from %s", r.url, a, status, who)
	}
	return a, nil
}

// check is one behaviour the printed commands claim, tested before they
// are printed.
type check struct {
	name string
	run  func(ctx context.Context) error
}

// refusedEvent is the Event of the refused Ingress, for the output.
type refusedEvent struct{ reason, note string }

// checks returns the checks of every claim of the printed commands about
// examples/ingress; event is filled in by the check of the refused
// Ingress's Event.
func checks(p *prober, client kubernetes.Interface, event *refusedEvent) []check {
	const shop = "https://shop.demo.test"
	never := []string{"X-Canary", "never"}
	// only checks that r gets status from one of backends.
	only := func(r request, status int, backends ...string) func(context.Context) error {
		return func(ctx context.Context) error {
			_, err := p.expect(ctx, r, status, backends...)
			return err
		}
	}
	return []check{
		{"shop.demo.test over HTTPS is served by web's pods web-a and web-b in turn", func(ctx context.Context) error {
			seen := map[string]bool{}
			for range 4 {
				a, err := p.expect(ctx, request{url: shop + "/cart", header: never}, 200, "web-a", "web-b")
				if err != nil {
					return err
				}
				if field(a.body, "path") != "/cart" || field(a.body, "x-forwarded-proto") != "https" ||
					field(a.body, "host") != "shop.demo.test" {
					return fmt.Errorf("got %s, want host=shop.demo.test path=/cart x-forwarded-proto=https", a)
				}
				seen[a.backend()] = true
			}
			if len(seen) != 2 {
				return fmt.Errorf("only %v answered four requests", seen)
			}
			return nil
		}},
		{"plain HTTP to shop.demo.test is redirected to HTTPS with 308", func(ctx context.Context) error {
			a, err := p.expect(ctx, request{url: "http://shop.demo.test/cart?step=2"}, 308)
			if err != nil {
				return err
			}
			if loc := a.header.Get("Location"); loc != "https://shop.demo.test/cart?step=2" {
				return fmt.Errorf("the Location header is %q, want https://shop.demo.test/cart?step=2", loc)
			}
			return nil
		}},
		{"/api/orders/7 reaches api as /orders/7 (rewrite-target)", func(ctx context.Context) error {
			a, err := p.expect(ctx, request{url: shop + "/api/orders/7"}, 200, "api")
			if err != nil {
				return err
			}
			if path := field(a.body, "path"); path != "/orders/7" {
				return fmt.Errorf("api received path %s, want /orders/7", path)
			}
			return nil
		}},
		{"X-Canary: always goes to web-v2", only(request{url: shop + "/", header: []string{"X-Canary", "always"}}, 200, "web-v2")},
		{"about 20% of other requests go to web-v2", func(ctx context.Context) error {
			counts := map[string]int{}
			for range 100 {
				a, err := p.expect(ctx, request{url: shop + "/"}, 200, "web-a", "web-b", "web-v2")
				if err != nil {
					return err
				}
				counts[a.backend()]++
			}
			// 20 expected; outside 3..50 has a chance below one in a million.
			if n := counts["web-v2"]; n < 3 || n > 50 {
				return fmt.Errorf("web-v2 answered %d of 100 requests, want about 20 (%v)", n, counts)
			}
			return nil
		}},
		{"admin.demo.test refuses a request without credentials (401)", func(ctx context.Context) error {
			a, err := p.expect(ctx, request{url: "http://admin.demo.test/"}, 401)
			if err != nil {
				return err
			}
			if h := a.header.Get("WWW-Authenticate"); !strings.HasPrefix(h, "Basic") {
				return fmt.Errorf("WWW-Authenticate %q, want Basic", h)
			}
			return nil
		}},
		{"admin.demo.test refuses a wrong password", only(request{url: "http://admin.demo.test/", user: "demo", password: "wrong"}, 401)},
		{"admin.demo.test accepts demo/demo", only(request{url: "http://admin.demo.test/", user: "demo", password: "demo"}, 200, "admin")},
		{"private.demo.test, of the refused Ingress, answers 404", only(request{url: "http://private.demo.test/"}, 404)},
		{"the refused Ingress has an Event that says why", func(ctx context.Context) error {
			list, err := client.EventsV1().Events(namespace).List(ctx, metav1.ListOptions{})
			if err != nil {
				return err
			}
			for _, e := range list.Items {
				if e.Regarding.Kind == "Ingress" && e.Regarding.Name == "refused" && e.Type == "Warning" {
					*event = refusedEvent{e.Reason, e.Note}
					return nil
				}
			}
			return fmt.Errorf("no Warning Event regarding Ingress %s/refused yet", namespace)
		}},
		{"a host no Ingress names answers 404", only(request{url: "http://nope.demo.test/"}, 404)},
	}
}

// waitChecks runs the checks every 200 ms, each until it passes once,
// until all have passed or timeout; status reports how many pass. The
// error lists those that did not pass, with their last error.
func waitChecks(ctx context.Context, list []check, timeout time.Duration, status func(passed int)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	last := make([]error, len(list))
	passed := make([]bool, len(list))
	for {
		n := 0
		for i, c := range list {
			if !passed[i] {
				attempt, cancelAttempt := context.WithTimeout(ctx, 10*time.Second)
				last[i] = c.run(attempt)
				cancelAttempt()
				passed[i] = last[i] == nil
			}
			if passed[i] {
				n++
			}
		}
		status(n)
		if n == len(list) {
			return nil
		}
		select {
		case <-ctx.Done():
			var b strings.Builder
			fmt.Fprintf(&b, "after %s, %d of %d checks still fail:", timeout, len(list)-n, len(list))
			for i, c := range list {
				if !passed[i] {
					fmt.Fprintf(&b, "\n    %s: %v", c.name, last[i])
				}
			}
			return fmt.Errorf("%s", b.String())
		case <-time.After(200 * time.Millisecond):
		}
	}
}
