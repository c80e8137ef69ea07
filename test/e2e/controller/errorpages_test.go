package controller

import (
	"fmt"
	"net/http"
	"strconv"
	"testing"
)

// errorPagesBackend is a custom error backend as ingress-nginx's docs
// describe one: it answers the status of X-Code (200 without one) with
// X-Backend: errors, and echoes the X-* headers and path it received in
// X-Seen-* headers.
func errorPagesBackend() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Backend", "errors")
		for _, name := range []string{"X-Code", "X-Format", "X-Original-URI", "X-Namespace", "X-Ingress-Name", "X-Service-Name", "X-Service-Port", "X-Request-ID"} {
			h.Set("X-Seen-"+name[2:], r.Header.Get(name))
		}
		h.Set("X-Seen-Method", r.Method)
		h.Set("X-Seen-Path", r.URL.RequestURI())
		status := http.StatusOK
		if code, err := strconv.Atoi(r.Header.Get("X-Code")); err == nil {
			status = code
		}
		w.WriteHeader(status)
	})
}

// statusMember answers 404 for /missing, 503 for /down and 200 otherwise,
// with X-Backend: app.
func statusMember() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Backend", "app")
		switch r.URL.Path {
		case "/missing":
			w.WriteHeader(http.StatusNotFound)
		case "/down":
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		w.Write([]byte("the member's body"))
	})
}

// seen checks the X-Seen-* headers of an answer of the error backend.
func seen(resp *http.Response, want map[string]string) error {
	for name, value := range want {
		if got := resp.Header.Get("X-Seen-" + name); got != value {
			return fmt.Errorf("the error backend saw %s %q, want %q", name, got, value)
		}
	}
	if value := resp.Header.Get("X-Seen-Request-ID"); value == "" {
		return fmt.Errorf("the error backend saw no X-Request-ID")
	}
	return nil
}

// TestErrorPages: custom-http-errors with a default-backend of the
// object's namespace replaces the member's 404 and 503 by the error
// backend's answer, which gets ingress-nginx's X-* headers; other answers
// pass. Once the path's Service has no endpoints, the default-backend
// serves the path (X-Code: 503, the request as sent; 503 is not listed by
// that Ingress, so its answer is not replaced in turn). An Ingress without
// default-backend uses the controller's --default-backend, and with
// disable-proxy-intercept-errors the member's 404 passes.
func TestErrorPages(t *testing.T) {
	e := newEnv(t)
	errs := e.network.Backend(t, "errors", errorPagesBackend())
	e.service("errors", errs)
	e.service("app", e.network.Backend(t, "app", statusMember()))
	r := e.startRamjet("--default-backend=" + e.ns + "/errors:80")
	client := r.Client(nil)
	e.create(e.ingress("shop", e.host("shop"), "app", map[string]string{
		"nginx.ingress.kubernetes.io/custom-http-errors": "404,503",
		"nginx.ingress.kubernetes.io/default-backend":    "errors",
	}))
	e.create(e.ingress("global", e.host("global"), "app", map[string]string{
		"nginx.ingress.kubernetes.io/custom-http-errors": "404",
	}))
	e.create(e.ingress("spare", e.host("spare"), "app", map[string]string{
		"nginx.ingress.kubernetes.io/custom-http-errors": "404",
		"nginx.ingress.kubernetes.io/default-backend":    "errors",
	}))
	e.create(e.ingress("quiet", e.host("quiet"), "app", map[string]string{
		"nginx.ingress.kubernetes.io/custom-http-errors":             "404",
		"nginx.ingress.kubernetes.io/disable-proxy-intercept-errors": "true",
	}))
	shop := "http://" + e.host("shop")
	accept := map[string]string{"Accept": "application/json"}

	expect(t, client, shop+"/", "app")
	for _, tc := range []struct {
		path string
		code int
	}{{"/missing?x=1", 404}, {"/down", 503}} {
		eventually(t, wait, "GET "+tc.path+" answered by the error backend", func() error {
			resp, err := do(client, shop+tc.path, accept)
			if err != nil {
				return err
			}
			if resp.StatusCode != tc.code || resp.Header.Get("X-Backend") != "errors" {
				return fmt.Errorf("%d from backend %q, want %d from errors", resp.StatusCode, resp.Header.Get("X-Backend"), tc.code)
			}
			return seen(resp, map[string]string{"Code": strconv.Itoa(tc.code), "Format": "application/json", "Original-URI": tc.path,
				"Namespace": e.ns, "Ingress-Name": "shop", "Service-Name": "app", "Service-Port": "80", "Method": "GET", "Path": "/" + query(tc.path)})
		})
	}

	eventually(t, wait, "the global default backend answers the 404s of an Ingress without default-backend", func() error {
		resp, err := do(client, "http://"+e.host("global")+"/missing", nil)
		if err != nil {
			return err
		}
		if resp.StatusCode != 404 || resp.Header.Get("X-Backend") != "errors" {
			return fmt.Errorf("%d from backend %q, want 404 from errors", resp.StatusCode, resp.Header.Get("X-Backend"))
		}
		return seen(resp, map[string]string{"Code": "404", "Ingress-Name": "global"})
	})
	eventually(t, wait, "with disable-proxy-intercept-errors the member's 404 passes", func() error {
		return expectAnswer(client, "http://"+e.host("quiet")+"/missing", nil, 404, "app")
	})

	e.scale("app")
	eventually(t, wait, "the default-backend serves the path whose Service has no endpoints", func() error {
		resp, err := do(client, "http://"+e.host("spare")+"/cart?id=7", accept)
		if err != nil {
			return err
		}
		if resp.StatusCode != 503 || resp.Header.Get("X-Backend") != "errors" {
			return fmt.Errorf("%d from backend %q, want 503 from errors", resp.StatusCode, resp.Header.Get("X-Backend"))
		}
		return seen(resp, map[string]string{"Code": "503", "Format": "application/json", "Original-URI": "",
			"Namespace": e.ns, "Ingress-Name": "spare", "Service-Name": "app", "Service-Port": "80", "Path": "/cart?id=7"})
	})
}

// query is the "?..." of a request target, "" without one.
func query(target string) string {
	for i := range len(target) {
		if target[i] == '?' {
			return target[i:]
		}
	}
	return ""
}
