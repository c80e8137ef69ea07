package main

import (
	"bytes"
	"errors"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/ramjet-dev/ramjet/test/harness"
)

// TestServicesMatchExamples: the backends serve the Services of
// examples/ingress, on the port the EndpointSlices name (http, to
// harness.BackendPort), in the demo's namespace.
func TestServicesMatchExamples(t *testing.T) {
	files, err := filepath.Glob("../ingress/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples/ingress manifests: %v", err)
	}
	var names []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(data))
		for {
			var obj struct {
				Kind     string
				Metadata struct{ Name, Namespace string }
				Spec     struct {
					Ports []struct {
						Name       string
						TargetPort int `yaml:"targetPort"`
					}
				}
			}
			if err := dec.Decode(&obj); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if obj.Kind != "Service" {
				continue
			}
			names = append(names, obj.Metadata.Name)
			if obj.Metadata.Namespace != namespace {
				t.Errorf("%s: Service %s is in namespace %q, want %q", f, obj.Metadata.Name, obj.Metadata.Namespace, namespace)
			}
			if len(obj.Spec.Ports) != 1 || obj.Spec.Ports[0].Name != "http" || obj.Spec.Ports[0].TargetPort != harness.BackendPort {
				t.Errorf("%s: Service %s has ports %+v, want one named http to %d", f, obj.Metadata.Name, obj.Spec.Ports, harness.BackendPort)
			}
		}
	}
	slices.Sort(names)
	want := services()
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("examples/ingress has the Services %v, the demo's backends serve %v", names, want)
	}
}

// TestDescribe: an answer names the backend first, then what it received,
// one word per field, which field reads back.
func TestDescribe(t *testing.T) {
	r := httptest.NewRequest("GET", "http://shop.demo.test/orders/7?x=1", nil)
	r.Header.Set("X-Forwarded-For", "127.0.0.1")
	r.Header.Set("X-Forwarded-Proto", "https")
	r.Header.Set("X-Forwarded-Host", `odd "host"`)
	got := describe("api", r)
	want := `backend=api host=shop.demo.test path=/orders/7?x=1 x-forwarded-for=127.0.0.1 x-forwarded-host="odd \"host\"" ` +
		`x-forwarded-port=- x-forwarded-proto=https x-real-ip=-`
	if got != want {
		t.Errorf("describe:\n got %s\nwant %s", got, want)
	}
	for key, value := range map[string]string{"backend": "api", "path": "/orders/7?x=1", "x-forwarded-proto": "https", "missing": ""} {
		if v := field(got, key); v != value {
			t.Errorf("field %s = %q, want %q", key, v, value)
		}
	}
}

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		"/tmp/ramjet-demo-1/ca.crt": "/tmp/ramjet-demo-1/ca.crt",
		"/home/a b/ca.crt":          "'/home/a b/ca.crt'",
		"it's":                      `'it'\''s'`,
	} {
		if got := quote(in); got != want {
			t.Errorf("quote(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestStepNotATerminal: out of a terminal a step prints its title, its
// notes, a line while it still runs, the live line's hint taken from a
// build.sh note, and its duration.
func TestStepNotATerminal(t *testing.T) {
	defer func(d time.Duration) { progressEvery = d }(progressEvery)
	progressEvery = time.Second
	var out strings.Builder
	p := &progress{out: &out}
	err := p.step("building things", "", func(note func(string)) error {
		note("building kube-apiserver from k8s.io/kubernetes/cmd/kube-apiserver")
		time.Sleep(2200 * time.Millisecond)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"==> building things\n",
		"    building kube-apiserver from k8s.io/kubernetes/cmd/kube-apiserver\n",
		"    still running after 1s (kube-apiserver: about ten minutes the first time on two cores)\n",
		"    done in 2.2s\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the output lacks %q:\n%s", want, out.String())
		}
	}
}
