package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
)

// printCommands prints the commands that show each behaviour, with what
// they answer (the checks of waitServed tested those claims).
func (d *demo) printCommands() {
	p := d.p
	httpURL := fmt.Sprintf("http://127.0.0.1:%d", d.httpPort)
	shop := fmt.Sprintf("--cacert %s --resolve shop.demo.test:%d:127.0.0.1", quote(d.caFile), d.httpsPort)
	shopURL := func(path string) string { return fmt.Sprintf("https://shop.demo.test:%d%s", d.httpsPort, path) }
	kubectl := quote(filepath.Join(d.tools, "kubectl")) + " --kubeconfig " + quote(d.cluster.Kubeconfig)
	ramjetd := quote(filepath.Join(d.bin, "ramjetd"))
	sock := quote(d.adminSocket())
	webC := d.backends["web-c"].IP

	var out strings.Builder
	section := func(title string) { fmt.Fprintf(&out, "\n%s\n", p.bold(title)) }
	show := func(what, command string) { fmt.Fprintf(&out, "  # %s\n  %s\n", what, command) }

	fmt.Fprintf(&out, "\n%s\n", p.bold("Ramjet serves examples/ingress. Try these commands in another terminal:"))

	section("Host and path routing (Ingresses shop and shop-api)")
	show("/ of shop.demo.test goes to the Service web; every answer says which backend answered, the Host and path it received and the forwarding headers ramjetd added:",
		fmt.Sprintf("curl %s %s", shop, shopURL("/cart")))
	show("/api/... goes to the Service api with /api taken off (rewrite-target /$2): api receives path=/orders/7",
		fmt.Sprintf("curl %s %s", shop, shopURL("/api/orders/7")))
	show("a host no Ingress names is answered 404 by ramjetd itself:",
		fmt.Sprintf("curl -i -H 'Host: nope.demo.test' %s/", httpURL))

	section("TLS (the Secret shop-tls, signed by the demo CA)")
	show("the certificate of shop.demo.test, verified with the demo CA (no -k):",
		fmt.Sprintf("curl -sv -o /dev/null %s %s 2>&1 | grep -E 'subject:|issuer:|SSL certificate verify'", shop, shopURL("/")))
	show("plain HTTP to a TLS host is redirected to HTTPS with 308, as ingress-nginx does (to port 443; the demo's HTTPS port is "+
		fmt.Sprint(d.httpsPort)+"):",
		fmt.Sprintf("curl -i -H 'Host: shop.demo.test' '%s/cart?step=2'", httpURL))

	section("Load balancing and the canary (Ingress shop-canary)")
	show("X-Canary: never keeps requests on web, whose two pods web-a and web-b answer in turn:",
		fmt.Sprintf("for i in 1 2 3 4; do curl -s -H 'X-Canary: never' %s %s | cut -d' ' -f1; done", shop, shopURL("/")))
	show("X-Canary: always sends them to web-v2:",
		fmt.Sprintf("curl -H 'X-Canary: always' %s %s", shop, shopURL("/")))
	show("without the header, about 20% go to web-v2 (canary-weight: 20), counted over 100 requests:",
		fmt.Sprintf("for i in $(seq 100); do curl -s %s %s | cut -d' ' -f1; done | sort | uniq -c", shop, shopURL("/")))

	section("Basic authentication (Ingress admin; user demo, password demo)")
	show(`without credentials: 401 with WWW-Authenticate: Basic realm="Ramjet demo":`,
		fmt.Sprintf("curl -i -H 'Host: admin.demo.test' %s/", httpURL))
	show("a wrong password is refused the same way:",
		fmt.Sprintf("curl -i -u demo:wrong -H 'Host: admin.demo.test' %s/", httpURL))
	show("with demo/demo the backend admin answers:",
		fmt.Sprintf("curl -u demo:demo -H 'Host: admin.demo.test' %s/", httpURL))

	section("An Ingress Ramjet refuses (Ingress refused: auth-url, external authentication, is not provided)")
	show("private.demo.test is not served without the protection it asks for: ramjetd answers 404:",
		fmt.Sprintf("curl -i -H 'Host: private.demo.test' %s/", httpURL))
	why := "the Event that says why"
	if d.event.reason != "" {
		why += fmt.Sprintf(" (%s: %s)", d.event.reason, d.event.note)
	}
	show(why+":", kubectl+" events -n demo --for ingress/refused")
	show("the Ingresses, with the address the controller wrote in their status (the chart's Service, whose load balancer is 127.0.0.1):",
		kubectl+" get ingress -n demo")

	section("Scaling without a reload (the EndpointSlice of web)")
	metrics := fmt.Sprintf("curl -s http://%s/metrics | grep -E '^ramjet_(config_generation|reloads_total|upstream_members)'", d.ramjetdAddr())
	show("ramjetd's configuration generation, reloads and pool members (a reload would raise the generation):", metrics)
	show(fmt.Sprintf("add the spare pod web-c (%s) to web's EndpointSlice, as a scale-up would:", webC),
		fmt.Sprintf(`%s -n demo patch endpointslice web --type=json -p '[{"op":"add","path":"/endpoints/-","value":{"addresses":["%s"],"conditions":{"ready":true}}}]'`,
			kubectl, webC))
	show("web-a, web-b and web-c now answer in turn:",
		fmt.Sprintf("for i in 1 2 3 4 5 6; do curl -s -H 'X-Canary: never' %s %s | cut -d' ' -f1; done", shop, shopURL("/")))
	show("the pool of web has three members now, the generation and reloads are unchanged: the controller sent the members with PUT /v1/upstreams, no reload:",
		metrics)
	show("the pools and their members, from ramjetd's admin API:",
		fmt.Sprintf("%s upstreams --admin-socket %s", ramjetd, sock))
	show("or change members by hand (delete an endpoint, or set its conditions.ready to false):",
		kubectl+" -n demo edit endpointslice web")

	section("The cluster, the controller and the logs")
	show("kubectl for this cluster in your shell:",
		fmt.Sprintf("export KUBECONFIG=%s; alias kubectl=%s", quote(d.cluster.Kubeconfig), quote(filepath.Join(d.tools, "kubectl"))))
	show("the controller's metrics (synchronisations, member updates, Ingresses by state):",
		fmt.Sprintf("curl -s http://%s/metrics | grep -E '^ramjet_ingress_(syncs_total|member_updates_total|ingresses)'", d.controllerAddr()))
	show("what the chart installed (helm is in "+filepath.Dir(quote(filepath.Join(d.tools, "helm")))+"):",
		fmt.Sprintf("%s get manifest %s --namespace %s --kubeconfig %s", quote(filepath.Join(d.tools, "helm")), release, releaseNamespace, quote(d.cluster.Kubeconfig)))
	show("the chart's pod, its containers and their state (the harness writes the status a kubelet would):",
		kubectl+" get pods -n "+releaseNamespace+" -o wide")
	fmt.Fprintf(&out, "  ramjet.yaml written by the controller: %s\n", filepath.Join(d.pod.VolumeDir("generated"), "ramjet.yaml"))
	fmt.Fprintf(&out, "  logs: %s, %s, %s,\n        %s\n",
		d.pod.LogPath("controller"), d.pod.LogPath("ramjetd"),
		filepath.Join(d.run, "backends.log"), filepath.Join(d.cluster.Dir, "kube-apiserver.log"))
	fmt.Fprintf(&out, "\nPress Ctrl-C to stop: every process stops, the network namespace %s and the run folder %s are removed.\n",
		d.network.Name, d.run)
	p.printf("%s", out.String())
}

// safe matches words the shell takes as they are.
var safe = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

// quote quotes s for a POSIX shell when it needs it.
func quote(s string) string {
	if safe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
