//go:build tools

// Package tools pins the oauth2-proxy the end-to-end tests of external
// authentication run.
package tools

import _ "github.com/oauth2-proxy/oauth2-proxy/v7"
