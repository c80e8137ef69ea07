package nginxconfig

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ramjet-dev/ramjet/annotations/extauth"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/registry"
)

// seconds maps a key ingress-nginx reads as a whole number of seconds to
// a duration of ramjetd, which allows at most max.
func seconds(key, path string, max time.Duration, note string) rule {
	return rule{key: key, apply: func(v string, _ map[string]string) outcome {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return invalid(quote(v) + " is not a whole number of seconds, as ingress-nginx reads this key (it keeps its default)")
		}
		d := time.Duration(n) * time.Second
		if d > max {
			return invalid(fmt.Sprintf("%ds is more than ramjetd's %s allows (at most %s)", n, path, max))
		}
		return mapped(note, Setting{path, d.String()})
	}}
}

// boolean maps a boolean key through to, which gives the settings.
func boolean(key string, to func(b bool, data map[string]string) outcome) rule {
	return rule{key: key, apply: func(v string, data map[string]string) outcome {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return invalid(quote(v) + ` is not a boolean ("true" or "false")`)
		}
		return to(b, data)
	}}
}

// bodySize maps proxy-body-size to ramjetd's request body limit.
func bodySize(v string, _ map[string]string) outcome {
	size, err := config.ParseByteSize(v)
	if err != nil {
		return invalid(quote(v) + " is not an nginx size (1024, 8k, 10m, 1g)")
	}
	if size == 0 {
		return noCounterpart(`"0" lifts nginx's limit; ramjetd's server-wide limit cannot be lifted (server.limits.max_request_body_bytes, 10MiB by default): give proxy-body-size: "0" to the Ingresses that need bodies without a limit`)
	}
	return mapped("also the default of the proxy-body-size annotation", Setting{"server.limits.max_request_body_bytes", formatSize(int64(size))})
}

// headerBuffers maps large-client-header-buffers ("4 8k": a number and a
// size) to ramjetd's bound on the request line and headers together.
func headerBuffers(v string, _ map[string]string) outcome {
	fields := strings.Fields(v)
	if len(fields) != 2 {
		return invalid(quote(v) + ` is not "<number> <size>", such as "4 8k"`)
	}
	n, err := strconv.Atoi(fields[0])
	size, serr := config.ParseByteSize(fields[1])
	if err != nil || n < 1 || serr != nil || size == 0 {
		return invalid(quote(v) + ` is not "<number> <size>", such as "4 8k"`)
	}
	total := int64(n) * int64(size)
	if total < 1<<10 || total > 1<<20 {
		return invalid(fmt.Sprintf("%s in all is outside what ramjetd's server.limits.max_header_bytes takes (1KiB..1MiB)", formatSize(total)))
	}
	return mapped("nginx bounds each header line by one buffer and all of them by the buffers' total; ramjetd bounds the request line and headers together by that total (431 beyond it)",
		Setting{"server.limits.max_header_bytes", formatSize(total)})
}

// trustedProxies maps use-forwarded-headers and enable-real-ip: with
// either on, the addresses of proxy-real-ip-cidr (ingress-nginx's default
// 0.0.0.0/0) become ramjetd's trusted proxies.
func trustedProxies(on bool, data map[string]string) outcome {
	if !on {
		return same("what Ramjet does without trusted proxies: forwarding headers from clients are not believed")
	}
	cidrs := []string{"0.0.0.0/0"}
	if v, ok := data["proxy-real-ip-cidr"]; ok && strings.TrimSpace(v) != "" {
		cidrs = registry.SplitList(v)
	}
	if err := config.CheckRanges(cidrs); err != nil {
		return invalid("proxy-real-ip-cidr: " + err.Error())
	}
	return mapped("ramjetd believes X-Forwarded-For, -Proto, -Host, -Port and Forwarded from these addresses only, where ingress-nginx with use-forwarded-headers believes X-Forwarded-Proto, -Host and -Port from every client",
		Setting{"server.trusted_proxies", cidrs})
}

// limitStatus maps limit-req-status-code and limit-conn-status-code to the
// one status Ramjet gives both kinds of limit.
func limitStatus(key, other string) rule {
	return rule{key: key, apply: func(v string, data map[string]string) outcome {
		code, err := strconv.Atoi(v)
		if err != nil || code < 400 || code > 599 {
			return invalid(quote(v) + " is not a status code 400..599")
		}
		if o, ok := data[other]; ok && strings.TrimSpace(o) != v {
			if key > other {
				return noCounterpart("Ramjet gives the request and connection limits one status, and " + other + "'s is taken")
			}
			return mapped("Ramjet gives the request and connection limits one status: this one, not "+other+"'s", Setting{"ingressController.limitStatusCode", code})
		}
		return mapped("", Setting{"ingressController.limitStatusCode", code})
	}}
}

// globalAuthURL maps global-auth-url, checked as the controller checks
// --global-auth-url.
func globalAuthURL(v string, _ map[string]string) outcome {
	if v == "" {
		return same("no global authentication")
	}
	if _, err := extauth.Global(v); err != nil {
		return invalid(err.Error())
	}
	return mapped("", Setting{"ingressController.globalAuthURL", v})
}

// shutdownTimeout maps worker-shutdown-timeout, an nginx time ("240s",
// "5m", or seconds), to the seconds requests in flight get at shutdown.
func shutdownTimeout(v string, _ map[string]string) outcome {
	d, err := nginxTime(v)
	if err != nil {
		return invalid(quote(v) + " is not an nginx time (240s, 5m, 300)")
	}
	return mapped("the seconds requests in flight and WebSockets get after the drain delay (drainDelaySeconds) before they are closed",
		Setting{"shutdownTimeoutSeconds", int(d / time.Second)})
}

// logLevel maps error-log-level, nginx's levels, to the programs' level.
func logLevel(v string, _ map[string]string) outcome {
	levels := map[string]string{"debug": "debug", "info": "info", "notice": "info", "warn": "warn",
		"error": "error", "crit": "error", "alert": "error", "emerg": "error"}
	level, ok := levels[strings.ToLower(v)]
	if !ok {
		return invalid(quote(v) + " is not an nginx log level (debug, info, notice, warn, error, crit, alert, emerg)")
	}
	return mapped("the level of both programs' logs (stderr, logFormat text or json); notice is info, crit, alert and emerg are error", Setting{"logLevel", level})
}

// nginxTime parses an nginx time: a number of seconds, or a number with
// one of the units ms, s, m, h, d.
func nginxTime(v string) (time.Duration, error) {
	units := []struct {
		suffix string
		unit   time.Duration
	}{{"ms", time.Millisecond}, {"s", time.Second}, {"m", time.Minute}, {"h", time.Hour}, {"d", 24 * time.Hour}}
	unit := time.Second
	for _, u := range units {
		if strings.HasSuffix(v, u.suffix) {
			v, unit = strings.TrimSuffix(v, u.suffix), u.unit
			break
		}
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > 1<<20 {
		return 0, fmt.Errorf("not a time")
	}
	return time.Duration(n) * unit, nil
}

// formatSize writes a size the largest whole unit of ramjetd can.
func formatSize(n int64) string {
	for _, u := range []struct {
		suffix string
		factor int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n%u.factor == 0 {
			return strconv.FormatInt(n/u.factor, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}
