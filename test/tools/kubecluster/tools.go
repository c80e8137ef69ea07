//go:build tools

// Package tools pins the Kubernetes commands the test cluster runs besides
// the API server.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
