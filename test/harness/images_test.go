package harness

import (
	"testing"
)

func TestRepository(t *testing.T) {
	for _, tc := range []struct{ ref, want string }{
		{"ghcr.io/ramjet-dev/ramjet", "ghcr.io/ramjet-dev/ramjet"},
		{"ghcr.io/ramjet-dev/ramjet:0.3.0", "ghcr.io/ramjet-dev/ramjet"},
		{"ghcr.io/ramjet-dev/ramjet@sha256:abcd", "ghcr.io/ramjet-dev/ramjet"},
		{"ghcr.io/ramjet-dev/ramjet:0.3.0@sha256:abcd", "ghcr.io/ramjet-dev/ramjet"},
		{"localhost:5000/echo", "localhost:5000/echo"},
		{"localhost:5000/echo:v1", "localhost:5000/echo"},
		{"busybox", "busybox"},
	} {
		if got := Repository(tc.ref); got != tc.want {
			t.Errorf("Repository(%q) = %q, want %q", tc.ref, got, tc.want)
		}
	}
}

func TestRegistryImage(t *testing.T) {
	r := Registry{"example.com/echo": {Entrypoint: []string{"/echo"}}, "example.com/other": {Env: []string{"PATH=/bin"}}}
	img, err := r.Image("example.com/echo:v1")
	if err != nil || img.Entrypoint[0] != "/echo" || len(img.Env) != 1 || img.Env[0] != defaultPath {
		t.Errorf("Image(example.com/echo:v1) = %+v, %v; want the echo image with the default PATH", img, err)
	}
	if img, _ := r.Image("example.com/other"); len(img.Env) != 1 || img.Env[0] != "PATH=/bin" {
		t.Errorf("an image's own environment became %q", img.Env)
	}
	_, err = r.Image("docker.io/library/nginx:1.27")
	want := `image "docker.io/library/nginx:1.27": the harness's registry has no program for repository "docker.io/library/nginx" (it has example.com/echo, example.com/other)`
	if err == nil || err.Error() != want {
		t.Errorf("an image not in the registry: %v\nwant %s", err, want)
	}
}
