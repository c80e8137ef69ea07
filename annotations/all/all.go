// Package all imports every annotation family, so that the controller
// compiles them all in. A new family adds one line here.
package all

import (
	_ "github.com/ramjet-dev/ramjet/annotations/accesslog"
	_ "github.com/ramjet-dev/ramjet/annotations/affinity"
	_ "github.com/ramjet-dev/ramjet/annotations/authtls"
	_ "github.com/ramjet-dev/ramjet/annotations/backendprotocol"
	_ "github.com/ramjet-dev/ramjet/annotations/basicauth"
	_ "github.com/ramjet-dev/ramjet/annotations/bodysize"
	_ "github.com/ramjet-dev/ramjet/annotations/canary"
	_ "github.com/ramjet-dev/ramjet/annotations/cors"
	_ "github.com/ramjet-dev/ramjet/annotations/extauth"
	_ "github.com/ramjet-dev/ramjet/annotations/globalratelimit"
	_ "github.com/ramjet-dev/ramjet/annotations/ignored"
	_ "github.com/ramjet-dev/ramjet/annotations/loadbalance"
	_ "github.com/ramjet-dev/ramjet/annotations/modsecurity"
	_ "github.com/ramjet-dev/ramjet/annotations/proxyssl"
	_ "github.com/ramjet-dev/ramjet/annotations/ratelimit"
	_ "github.com/ramjet-dev/ramjet/annotations/redirect"
	_ "github.com/ramjet-dev/ramjet/annotations/rewrite"
	_ "github.com/ramjet-dev/ramjet/annotations/satisfy"
	_ "github.com/ramjet-dev/ramjet/annotations/serviceupstream"
	_ "github.com/ramjet-dev/ramjet/annotations/snippets"
	_ "github.com/ramjet-dev/ramjet/annotations/sourcerange"
	_ "github.com/ramjet-dev/ramjet/annotations/sslpassthrough"
	_ "github.com/ramjet-dev/ramjet/annotations/sslredirect"
	_ "github.com/ramjet-dev/ramjet/annotations/timeouts"
	_ "github.com/ramjet-dev/ramjet/annotations/upstreamhashby"
	_ "github.com/ramjet-dev/ramjet/annotations/upstreamvhost"
)
