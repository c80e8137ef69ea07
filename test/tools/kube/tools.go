//go:build tools

// Package tools pins the Kubernetes commands the end-to-end tests run.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
