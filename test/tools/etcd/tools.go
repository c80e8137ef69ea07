//go:build tools

// Package tools pins the etcd server the end-to-end tests run.
package tools

import _ "go.etcd.io/etcd/server/v3"
