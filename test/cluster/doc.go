//go:build conformance

// Package cluster runs a small Kubernetes cluster for end-to-end tests, one
// that the Gateway API conformance suite can use: Deployments become Ready
// Pods running real programs at addresses of a test network
// (198.18.0.0/15), Services get EndpointSlices, namespaces are deleted,
// `kubectl logs` works and Services of type LoadBalancer get an address
// that forwards to their endpoints.
//
//	c := cluster.Start(t)                   // a few seconds
//	c.Apply(t, manifests)                   // Deployments, Services...
//	// pods' and load balancers' addresses are in c.Network.Prefix
//	out := c.Kubectl(t, "logs", "-n", "shop", "web-7c9f-abcde")
//
// # What runs
//
// On the host, each on loopback: etcd and kube-apiserver
// (harness.StartAPIServer; WithAPIServer passes its options, such as
// harness.WithCRDs), kube-controller-manager, kube-scheduler and kwok, all
// with the API server's admin credential and without leader election. The
// binaries come from test/tools/build.sh like the harness's (Start builds
// the missing ones; kube-controller-manager and kube-scheduler from
// test/tools/kubecluster, at the same Kubernetes version as the API
// server, kwok from test/tools/kwok).
//
// kube-controller-manager runs only these controllers: deployment,
// replicaset, daemonset, endpointslice, endpointslice-mirroring,
// namespace, garbage-collector, serviceaccount, serviceaccount-token and
// root-ca-certificate-publisher. Service account tokens are signed with
// the API server's key (sa.key of the harness's PKI), and every namespace
// gets its ServiceAccount default and ConfigMap kube-root-ca.crt. There is
// no node lifecycle controller (no evictions; Start removes the not-ready
// taint the API server gives a new Node), no kube-proxy
// and no cluster DNS: cluster IPs other than the API server's lead
// nowhere, as with the harness's pods.
//
// The cluster has one Node, NodeName, whose status kwok keeps Ready (a
// configuration with a Node stage and no Pod stage, so kwok never touches
// pods). Its InternalIP is 127.0.0.1 and its kubelet endpoint a small
// HTTPS server of the test process that answers
// GET /containerLogs/NAMESPACE/POD/CONTAINER from the container's log in
// the CRI format (sinceTime, sinceSeconds, tailLines, limitBytes,
// timestamps and follow work), which is what `kubectl logs` reaches
// through the API server. Exec, attach and port-forward are not served.
//
// # Pods
//
// The scheduler binds every pod to the Node; the test process plays its
// kubelet. A pod whose images all have a program in the registry runs
// with harness.AdoptPod: each container a real local process with the
// manifest's command, args, environment (fieldRefs such as metadata.name,
// metadata.namespace and status.podIP) and volumes, in network, mount and
// UTS namespaces of its own, its status (podIP, Running, Ready from the
// readiness probes) written as kubelet writes it, stopped as kubelet stops
// it when the Pod is deleted. See harness.RunPod for what is supported.
//
// A pod with an image that has no program runs no process: it is
// reported Running and Ready at an address of the network where nothing
// listens, and removed at once when deleted. Of the conformance suite
// v1.6.3's manifests, only registry.k8s.io/coredns/coredns (the UDP tests'
// DNS server) is such an image.
//
// The default registry (Registry) maps the echo-basic image of the suite
// (EchoRepositories: registry.k8s.io/gateway-api/echo-basic, any tag, and
// gcr.io/k8s-staging-gateway-api/echo-basic) to test/conformance/echo,
// built once per test binary; WithImages adds others, such as Ramjet's
// (harness.DefaultRegistry).
//
// # Addresses
//
// Start creates one harness.Network, a /24 of 198.18.0.0/15 (say
// 198.18.7.0/24): .1 is the host, and every pod and load balancer takes
// the next free address from .2 up, in the order they appear, skipping
// the addresses harness.Network.Reserve keeps for Services that ask for
// them (the conformance suite reserves .250). Addresses are not reused,
// so one cluster runs at most about 250 pods and load balancers over its
// life. Nothing is routed outside the /24 and loopback.
//
// # Load balancers
//
// A Service of type LoadBalancer without spec.loadBalancerClass gets an
// address of the network, written to status.loadBalancer.ingress (ipMode
// VIP), where the test process listens on each TCP port of the Service
// and forwards every connection to a ready endpoint of that port, taken
// round robin from its EndpointSlices, as a cloud's load balancer does.
// UDP ports are not forwarded. The address stays the Service's until it
// is deleted or changes type.
//
// A Service that asks for an address in spec.loadBalancerIP gets it when
// it is an address of the /24 (.2 to .254) that no other Service or pod
// has, reserved ones included (harness.Network.AddAddrOf); a Service that
// had another address moves there with its listeners. Otherwise, as in a
// cloud whose requested IP is not available, the Service stays without an
// address (its status.loadBalancer emptied) until the field changes. An
// address given this way is freed when the Service lets it go, so that it
// may be asked for again; clearing the field keeps the Service's address.
package cluster
