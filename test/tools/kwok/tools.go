//go:build tools

// Package tools pins the kwok command the test cluster runs for its Node.
package tools

import _ "sigs.k8s.io/kwok/cmd/kwok"
