// Package harness runs the real components of Ramjet's end-to-end tests: a
// kube-apiserver with its etcd, and HTTP backends inside a network namespace
// whose addresses (198.18.0.0/15) EndpointSlices accept, unlike loopback.
//
// # API server
//
// StartAPIServer starts etcd and kube-apiserver on free loopback ports,
// waits until /readyz is ok and the default namespace exists, and stops
// both when the test ends (after a failure the last lines of their logs go
// to the test log):
//
//	c := harness.StartAPIServer(t)          // about 4 s
//	c.Client.CoreV1().Namespaces().Create(ctx, harness.Namespace("shop"), metav1.CreateOptions{})
//	c.Apply(t, ingressYAML)                  // kubectl apply -f -
//	out := c.Kubectl(t, "get", "ingress", "-A")
//	// run the controller against c.Kubeconfig, or with rest.CopyConfig(c.Config)
//
// The client credential (c.Config, c.Kubeconfig) is a certificate in the
// group system:masters: with RBAC on, it may do everything. Services get
// cluster IPs from ServiceCIDR; Events, Leases and CRDs work
// (WithCRDs(dir) installs the CustomResourceDefinitions of a folder, such as
// the Gateway API's config/crd/standard). Only the API server runs: no
// controller-manager, so tests write EndpointSlices themselves (see
// EndpointSlice), Pods never run and a deleted namespace stays Terminating;
// use a fresh namespace or cluster instead.
//
// c.Stop and c.Start stop the API server and start it again on the same
// address with the same certificates; etcd keeps the data meanwhile, so
// clients reconnect by themselves.
//
// The binaries (etcd, kube-apiserver, kubectl) come from .cache/bin at the
// root of the module, or from $RAMJET_TEST_BIN. When one is missing the
// harness runs test/tools/build.sh first: the first build takes about ten
// minutes on two cores, longer than go test's default timeout of ten
// minutes, so on a clean clone run `make test` (which builds them before
// the tests) or `go test -timeout 30m`.
//
// # Backends
//
// NewNetwork creates a network namespace joined to the host by a veth pair,
// with a /24 of 198.18.0.0/15 picked at random and claimed with a lock, so
// parallel tests and test binaries never share one; the networks a killed
// test binary left behind are removed by the next NewNetwork. Backend and
// TLSBackend start servers inside it, each on an address of its own and the
// same port (BackendPort, TLSBackendPort), as the endpoints of one
// EndpointSlice need:
//
//	network := harness.NewNetwork(t)
//	a, b := network.Backend(t, "a", nil), network.Backend(t, "b", nil) // answer "a\n", "b\n"
//	svc := harness.Service("shop", "web", 80, harness.BackendPort)
//	slice := harness.EndpointSlice("shop", "web", harness.BackendPort, a.IP, b.IP)
//
// The host (the test process, ramjetd) reaches the backends directly; no
// traffic leaves for any other address. Pods get addresses of the same
// /24 (see RunPod). Networks need root and iproute2's
// ip command: without them NewNetwork fails the test, on purpose, so that a
// broken CI environment is noticed rather than skipped.
//
// # Pods
//
// No kubelet runs, so RunPod plays one for the pod of a Deployment or
// DaemonSet read from the API server (one applied with kubectl, or
// installed by helm): it creates the Pod object (through the API server's
// admission) and runs it with local processes, keeping its status true,
// until Delete or a deletion through the API:
//
//	c.Apply(t, manifests)                 // ServiceAccount, RBAC, ConfigMap, Deployment...
//	pod := harness.RunPod(t, c, network, harness.Deployment("ingress", "ingress-ramjet"),
//		harness.PodOptions{ProbePeriod: 200 * time.Millisecond})
//	if err := pod.WaitReady(time.Minute); err != nil { t.Fatal(err) }
//	// http://POD-IP:8080 is the pod's wildcard listener, in a namespace of its own
//	resp, err := http.Get("http://" + pod.IP.String() + ":8080/")
//	pod.Log("controller")                 // a container's output
//	err = pod.Delete()                    // preStop, SIGTERM, grace, SIGKILL
//
// Each container runs as its securityContext's user with exactly the
// manifest's command, args and environment, in mount and UTS namespaces of
// its own whose root holds the image's programs and the volumes at their
// mount paths, so no argument or file is rewritten. Images are not pulled:
// a Registry maps image repositories to the programs the harness runs
// for them; DefaultRegistry holds Ramjet's image (ramjetd and
// ramjet-ingress built static from the working tree). The pod reaches the
// API server at the "kubernetes" Service's address, as in a cluster. See
// RunPod for what is supported; anything else fails with the field's name.
//
// NewCluster and CreateNetwork (with Close) and NewPod (with Delete) do
// the same for callers without a testing.TB, such as a TestMain that
// shares one cluster between tests, or a demo program. AdoptPod runs a
// Pod that a controller created instead (test/cluster runs the pods of a
// ReplicaSet with it, with PodOptions.CRILog for `kubectl logs`).
package harness
