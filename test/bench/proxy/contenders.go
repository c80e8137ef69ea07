package main

import (
	"text/template"
)

// contender is a proxy under test: how to configure and start it. Every
// contender runs alone on CPU 0 with one worker (GOMAXPROCS=1,
// worker_processes 1, nbthread 1).
type contender struct {
	name   string // in the report
	file   string // its configuration, in the run folder
	config *template.Template
	argv   func(config string, d configData) []string
	env    []string
	// auth says it has external authentication (nginx's auth_request):
	// only such contenders run the authenticated cells.
	auth bool
}

// contenders are ramjetd (the binary at ramjetd), nginx and HAProxy, in
// the order of every repetition.
func contenders(ramjetd string) []contender {
	return []contender{
		{
			name: "ramjetd", file: "ramjetd.yaml", config: ramjetdConfig,
			argv: func(config string, _ configData) []string {
				// No drain on SIGTERM: nothing balances traffic away from it here.
				return []string{ramjetd, "--config", config, "--drain-delay", "0s", "--shutdown-timeout", "1s"}
			},
			env:  []string{"GOMAXPROCS=1"},
			auth: true,
		},
		{
			name: "nginx", file: "nginx.conf", config: nginxConfig,
			argv: func(config string, d configData) []string {
				return []string{"nginx", "-c", config, "-e", d.Dir + "/nginx.err"}
			},
			auth: true,
		},
		{
			// HAProxy has no auth_request: asking an HTTP service about a
			// request takes a Lua or SPOE program of one's own.
			name: "HAProxy", file: "haproxy.cfg", config: haproxyConfig,
			argv: func(config string, _ configData) []string {
				return []string{"haproxy", "-db", "-f", config}
			},
		},
	}
}

// runs reports whether k measures cell c: every contender measures the
// cells without authentication, only those with it the others.
func (k contender) runs(c cell) bool { return c.auth == noAuth || k.auth }

// contenderNames are the names of the contenders, in order.
func contenderNames() []string {
	var names []string
	for _, k := range contenders("") {
		names = append(names, k.name)
	}
	return names
}
