// Package bodysize is the body-size family: proxy-body-size, the largest
// request body a route accepts. ramjetd answers 413 above it (at once when
// Content-Length says so, otherwise when the streamed body passes the
// limit); 0 means no limit, as in nginx. Without the annotation the limit
// is ramjetd's server.limits.max_request_body_bytes.
package bodysize

import (
	"fmt"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/registry"
)

// maxBytes is the largest size ramjetd reads back from ramjet.yaml
// (config.ParseByteSize refuses more than 1<<62 bytes): a larger value
// would make the whole configuration fail to load.
const maxBytes = 1 << 62

func init() {
	registry.Register(&registry.Family{
		Name: "body-size",
		Doc:  "The largest request body a route accepts.",
		Keys: []registry.Key{
			{Name: "proxy-body-size", Validate: validate, Risk: registry.RiskMedium, Scope: registry.ScopeIngress,
				Default: "10m (ramjetd's server.limits.max_request_body_bytes)",
				Doc:     `Largest request body, in bytes or with k, m or g (8m); larger bodies get 413. "0" means no limit.`,
				Differs: "Without the annotation the limit is ramjetd's server.limits.max_request_body_bytes (default 10 MiB, a chart value) where ingress-nginx uses its ConfigMap's proxy-body-size (default 1m). " +
					"A body without Content-Length streams to the member while it is counted, so over the limit the client gets 413 but the member may have received part of it (nginx buffers the body and forwards none of it); " +
					`the suffix b ("10b"), which ingress-nginx accepts but never applies, is invalid.`},
		},
		Parse: parse,
	})
}

func parse(_ *registry.Context, values map[string]string) core.Fragment {
	n, err := registry.ParseSize(values["proxy-body-size"])
	if err != nil {
		return nil // validated at Apply
	}
	limit := config.ByteSize(n)
	return func(s *core.Settings) { s.Policies.MaxBody = &limit }
}

// validate accepts the sizes registry.ParseSize reads, up to what ramjetd
// loads.
func validate(v string) error {
	n, err := registry.ParseSize(v)
	if err != nil {
		return err
	}
	if n > maxBytes {
		return fmt.Errorf("%s is larger than ramjetd accepts (at most %dg)", core.Quote(v), maxBytes>>30)
	}
	return nil
}
