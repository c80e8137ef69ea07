// Package gatewayservice gives every Gateway of Ramjet's classes an address
// of its own, as the Gateway API asks: two Gateways that both listen on
// port 80 route independently (the conformance test
// HTTPRouteMultipleGateways), so they cannot share one address and port.
//
// # Own-address mode (the default)
//
// Every ingress pod runs ramjetd, whose listeners are added and removed on
// reload. For each Gateway the leader keeps one Service in the
// controller's namespace that selects the ingress pods. Each distinct port
// P of the Gateway's listeners becomes a port of that Service: port P, and
// as targetPort a pod port allocated from a range (20000-20999 unless
// configured). The Gateway's addresses are the Service's: the entries of
// status.loadBalancer.ingress for a LoadBalancer Service, its cluster IPs
// otherwise. A Gateway that asks for an address (spec.addresses of type
// IPAddress, or without a type) has the first such IP address put into
// its LoadBalancer Service's spec.loadBalancerIP, the field most load
// balancers take a requested address from; Hostname addresses and further
// IP addresses are not passed on, and the field is cleared when the
// Gateway stops asking. Whether the address is given is the load
// balancer's to decide: one that cannot give it usually leaves the
// Service without an address.
//
// The Service is the single record of the allocation. Every replica reads
// the Services from its snapshot (Assignments) to know which pod port
// serves which Gateway port, so all replicas agree without talking to each
// other, and a restart, a new leader or a rolled pod keeps the ports: the
// allocation is never held in memory only. Desired keeps the pod port of
// every port already on a Service and gives a new Gateway port the lowest
// pod port that none of Ramjet's Services uses, counting Services about to
// be deleted or updated: a freed pod port is reused only once no Service
// names it any more, so two replicas never read one pod port for two
// Gateways. When the range is exhausted the Gateway port gets no Service
// port and the plan reports a Problem, which Status turns into a listener
// that is not programmed.
//
// Services are Ramjet's when they carry the label
// app.kubernetes.io/managed-by=ramjet and name the controller in the
// annotation gateway.ramjet.dev/controller. Nothing else is ever updated
// or deleted, and a foreign Service that holds the name a Gateway's
// Service would take is reported, not replaced. A Service's name is built
// from the Gateway's namespace and name, cut and reduced to a DNS-1035
// label, followed by a hash of the namespace/name key, so that it is
// stable, valid and distinct for every Gateway; the Gateway's namespace
// and name themselves are kept in annotations. The labels and annotations
// of the Gateway's spec.infrastructure are copied onto its Service (the
// specification's SHOULD), except keys under gateway.ramjet.dev/,
// gateway.networking.k8s.io/ and the managed-by label, which are
// Ramjet's; the keys copied are recorded on the Service so that a key
// removed from the Gateway is removed from the Service, while labels and
// annotations other controllers add (a load balancer controller's, say)
// are left alone.
//
// Desired, Assignments and Status are pure functions of the objects they
// are given; Provisioner.Apply writes a plan.
//
// # Shared mode
//
// A user who maps Gateway ports onto the fixed listeners of the pod's
// ramjetd (--gateway-listener PORT=NAME, read by gatewayapi.ParseListeners) needs no
// Services: every Gateway shares the pod's addresses.
package gatewayservice
