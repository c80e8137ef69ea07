// Command ramjet-ingress is Ramjet's Kubernetes controller.
//
//	ramjet-ingress run --base F --out D --admin-socket S [flags]   the controller
//	ramjet-ingress bootstrap --base F --out D                      the first configuration
//	ramjet-ingress translate -f PATH [flags]   what Ramjet would serve for manifests
//	ramjet-ingress translate --nginx-configmap F   chart values for ingress-nginx's ConfigMap
//	ramjet-ingress annotations                 the compiled-in annotation families
//	ramjet-ingress version (or --version)      the version and the commit
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"

	_ "github.com/ramjet-dev/ramjet/annotations/all"
	"github.com/ramjet-dev/ramjet/annotations/customheaders"
	"github.com/ramjet-dev/ramjet/annotations/extauth"
	"github.com/ramjet-dev/ramjet/dataplane/config"
	"github.com/ramjet-dev/ramjet/dataplane/version"
	"github.com/ramjet-dev/ramjet/registry"
	"github.com/ramjet-dev/ramjet/sources"
	"github.com/ramjet-dev/ramjet/sources/gatewayapi"
	"github.com/ramjet-dev/ramjet/sources/gatewayservice"
	"github.com/ramjet-dev/ramjet/sources/ingress"
	"github.com/ramjet-dev/ramjet/sources/offline"
	"github.com/ramjet-dev/ramjet/sources/offline/nginxconfig"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: ramjet-ingress run|bootstrap|translate|annotations|version [flags] (--help for each)")
		os.Exit(2)
	}
	var err error
	code := 0
	switch cmd, args := os.Args[1], os.Args[2:]; cmd {
	case "run":
		err = run(args)
	case "bootstrap":
		err = bootstrap(args)
	case "translate":
		code, err = translate(args)
	case "annotations":
		err = annotations(args)
	case "version", "--version":
		fmt.Println(version.String("ramjet-ingress"))
	default:
		err = fmt.Errorf("unknown command %q; the commands are run, bootstrap, translate, annotations and version", cmd)
	}
	if errors.Is(err, pflag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "ramjet-ingress:", err)
		os.Exit(2)
	}
	os.Exit(code)
}

// translationFlags are the flags translation shares with the controller.
type translationFlags struct {
	base, annotations, defaultBackend, defaultCert, httpsListener, fileDir string
	ingressClass, controllerClass, backendTLSVerify, globalAuthURL         string
	allowedResponseHeaders                                                 string
	ingress, gatewayAPI, withoutClass, crossNamespace, externalName        bool
	sslPassthrough                                                         bool
	assumeClasses, annotationDefaults                                      []string
	limitStatus                                                            int
	globalRateLimit                                                        globalRateLimitFlags
	gateway                                                                gatewayFlags
	// publishService is run's --publish-service: in the Gateway API's
	// shared mode every Gateway reports its addresses.
	publishService string
	// gatewayServices are the per-Gateway Services' options of the
	// own-address mode (nil otherwise), set by options.
	gatewayServices *gatewayservice.Options
}

func (f *translationFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.base, "base", "", "base configuration (listeners, health, admin socket); empty: listeners http :80 and https :443")
	fs.StringVar(&f.annotations, "annotations", "all", `annotation families to serve: "all", "all,-cors", "rewrite,cors" (see the annotations command)`)
	fs.BoolVar(&f.ingress, "ingress", true, "serve Ingress resources")
	fs.BoolVar(&f.gatewayAPI, "gateway-api", false, "serve the Gateway API (GatewayClass, Gateway, HTTPRoute, GRPCRoute, ReferenceGrant, BackendTLSPolicy; see docs/gateway-api.md)")
	f.gateway.register(fs)
	fs.StringVar(&f.ingressClass, "ingress-class", ingress.DefaultIngressClass, "value of the kubernetes.io/ingress.class annotation to serve")
	fs.StringVar(&f.controllerClass, "controller-class", ingress.DefaultControllerClass, "spec.controller of the IngressClasses to serve")
	fs.BoolVar(&f.withoutClass, "watch-ingress-without-class", false, "also serve Ingresses that name no class")
	fs.BoolVar(&f.crossNamespace, "cross-namespace-paths", false, "let Ingresses of every namespace add paths to a host, as ingress-nginx does")
	fs.BoolVar(&f.externalName, "allow-external-name-services", false, "follow ExternalName Services (off: they answer 503)")
	fs.StringVar(&f.backendTLSVerify, "backend-tls-verify", string(ingress.VerifyAlways), `which members reached over TLS are verified: "always", or "annotated" (only with proxy-ssl-verify: "on", as ingress-nginx)`)
	fs.StringVar(&f.globalAuthURL, "global-auth-url", "", `external authentication of every Ingress without an auth-url of its own, unless it says enable-global-auth: "false" (ingress-nginx's global-auth-url); empty: none`)
	fs.StringVar(&f.allowedResponseHeaders, "global-allowed-response-headers", "", "comma-separated response header names the custom-headers annotation may set, matched exactly (ingress-nginx's global-allowed-response-headers); empty: none")
	fs.IntVar(&f.limitStatus, "limit-status-code", ingress.DefaultLimitStatus, "status of the requests the limit-rps, limit-rpm and limit-connections annotations refuse, 400..599 (ingress-nginx's limit-req-status-code and limit-conn-status-code; 429 is Too Many Requests)")
	f.globalRateLimit.register(fs)
	fs.BoolVar(&f.sslPassthrough, "enable-ssl-passthrough", false, `serve ssl-passthrough: "true" (TLS connections spliced undecrypted to the Service by their server name); off: the key is ignored with a finding, as ingress-nginx without the flag`)
	fs.StringArrayVar(&f.annotationDefaults, "annotation-default", nil, `KEY=VALUE: the value of an annotation key for every Ingress that does not have it, as ingress-nginx's ConfigMap key of the same name (proxy-read-timeout=600, ssl-redirect=false, ...); repeatable; see docs/controller.md`)
	fs.StringVar(&f.defaultBackend, "default-backend", "", "namespace/name:port of the Service answering unmatched requests (default: 404)")
	fs.StringVar(&f.defaultCert, "default-ssl-certificate", "", "namespace/name of the TLS Secret for hosts without their own certificate (default: a generated one)")
	fs.StringVar(&f.httpsListener, "https-listener", "https", "name of the base's listener that serves HTTPS")
	fs.StringVar(&f.fileDir, "file-dir", "/etc/ramjet/generated", "directory where ramjetd finds the generated files")
}

// registerTranslateOnly registers the flags of translate alone, which
// also serves the Gateways of the own-address mode on the Services the
// leader would create (offline.PlannedServices).
func (f *translationFlags) registerTranslateOnly(fs *pflag.FlagSet) {
	f.gateway.planServices = true
	fs.StringSliceVar(&f.assumeClasses, "assume-class", nil, `treat Ingresses of these classes (ingressClassName or the annotation, e.g. "nginx") as Ramjet's, to see what it would serve after the switch`)
}

// options checks the flags and turns them into translation options.
func (f *translationFlags) options() (sources.Options, *config.Server, error) {
	sel, err := registry.Select(f.annotations)
	if err != nil {
		return sources.Options{}, nil, err
	}
	if err := registry.SelectInputs(map[string]bool{ingress.Name: f.ingress, gatewayapi.Name: f.gatewayAPI}); err != nil {
		return sources.Options{}, nil, err
	}
	if f.defaultBackend != "" {
		if _, _, err := sources.ParseDefaultBackend(f.defaultBackend); err != nil {
			return sources.Options{}, nil, err
		}
	}
	verify, err := ingress.ParseBackendTLSVerify(f.backendTLSVerify)
	if err != nil {
		return sources.Options{}, nil, err
	}
	if f.limitStatus < 400 || f.limitStatus > 599 {
		return sources.Options{}, nil, fmt.Errorf("--limit-status-code: must be 400..599, not %d", f.limitStatus)
	}
	global, err := f.globalAuth()
	if err != nil {
		return sources.Options{}, nil, err
	}
	allowed, err := customheaders.ParseAllowed(f.allowedResponseHeaders)
	if err != nil {
		return sources.Options{}, nil, err
	}
	defaults, err := ingress.ParseAnnotationDefaults(f.annotationDefaults, sel)
	if err != nil {
		return sources.Options{}, nil, err
	}
	base, err := f.loadBase()
	if err != nil {
		return sources.Options{}, nil, err
	}
	if err := f.globalRateLimit.apply(base); err != nil {
		return sources.Options{}, nil, err
	}
	opts := sources.Options{
		DefaultBackend: f.defaultBackend, DefaultSSLCertificate: f.defaultCert, HTTPSListener: f.httpsListener,
		AllowExternalName: f.externalName,
	}
	if f.ingress {
		opts.Inputs = append(opts.Inputs, &ingress.Input{Options: ingress.Options{
			IngressClass: f.ingressClass, ControllerClass: f.controllerClass,
			WatchWithoutClass: f.withoutClass, AllowExternalName: f.externalName, Annotations: sel,
			AssumeClasses: f.assumeClasses, BackendTLSVerify: verify, GlobalAuth: global, LimitStatus: f.limitStatus,
			SSLPassthrough: f.sslPassthrough, AllowedResponseHeaders: allowed, AnnotationDefaults: defaults,
			GlobalRateLimit: base.Memcached != nil, GlobalRateLimitStatus: f.globalRateLimit.status,
		}})
	}
	if f.gatewayAPI {
		in, services, err := f.gateway.input(base, f.externalName, f.publishService)
		if err != nil {
			return sources.Options{}, nil, err
		}
		opts.Inputs = append(opts.Inputs, in)
		f.gatewayServices = services
	}
	opts.Core.CrossNamespacePaths = f.crossNamespace
	opts.Core.FileDir = f.fileDir
	return opts, base, nil
}

// globalAuth checks --global-auth-url; nil when it is empty.
func (f *translationFlags) globalAuth() (*config.ExternalAuth, error) {
	if f.globalAuthURL == "" {
		return nil, nil
	}
	return extauth.Global(f.globalAuthURL)
}

func (f *translationFlags) loadBase() (*config.Server, error) {
	if f.base == "" {
		return &config.Server{Listeners: map[string]*config.Listener{
			"http":  {Address: ":80"},
			"https": {Address: ":443", TLS: &config.ListenerTLS{}},
		}}, nil
	}
	cfg, _, err := config.ReadFile(f.base)
	if err != nil {
		return nil, fmt.Errorf("--base: %w", err)
	}
	return &cfg.Server, nil
}

func translate(args []string) (int, error) {
	fs := pflag.NewFlagSet("ramjet-ingress translate", pflag.ContinueOnError)
	var tf translationFlags
	tf.register(fs)
	tf.registerTranslateOnly(fs)
	files := fs.StringArrayP("filename", "f", nil, `manifests: files, folders, or - for stdin (as "kubectl get ingress,ingressclass,svc,endpointslices,secrets,configmaps -A -o yaml" prints them); repeatable`)
	output := fs.StringP("output", "o", "text", "text (for a person), yaml or json")
	check := fs.Bool("check", false, "exit 1 when an object is not served as written")
	out := fs.String("out", "", "also write the generated files (certificates, keys, htpasswd) into this directory, mode 0600")
	nginxConfigMap := fs.String("nginx-configmap", "", `instead of translating manifests, read ingress-nginx's controller ConfigMap (or its chart's values, controller.config) from this file (- for stdin) and print the Ramjet chart values with the same settings, and what happens instead for each key without a counterpart`)
	if err := fs.Parse(args); err != nil {
		return 0, err
	}
	if *nginxConfigMap != "" {
		if len(*files) > 0 {
			return 0, fmt.Errorf("translate: --nginx-configmap translates the controller's settings, -f the objects: run them one at a time")
		}
		return 0, translateConfigMap(*nginxConfigMap, *output)
	}
	if len(*files) == 0 {
		return 0, fmt.Errorf("translate: give manifests with -f (a file, a folder or -)")
	}
	opts, base, err := tf.options()
	if err != nil {
		return 0, err
	}
	snap, notes, err := offline.Read(*files, os.Stdin)
	if err != nil {
		return 0, err
	}
	result := sources.Translate(snap, base, opts)
	report := offline.NewReport(result, notes)
	if err := report.Write(os.Stdout, *output); err != nil {
		return 0, err
	}
	if *out != "" {
		if err := offline.WriteFiles(*out, result.Files); err != nil {
			return 0, err
		}
	}
	if *check && report.NotAsWritten() {
		return 1, nil
	}
	return 0, nil
}

// translateConfigMap prints the chart values that carry the settings of
// ingress-nginx's controller ConfigMap in file.
func translateConfigMap(file, output string) error {
	var data []byte
	var err error
	if file == "-" {
		data, err = io.ReadAll(os.Stdin)
		file = "stdin"
	} else {
		data, err = os.ReadFile(file)
	}
	if err != nil {
		return fmt.Errorf("--nginx-configmap: %w", err)
	}
	settings, err := nginxconfig.Read(file, data)
	if err != nil {
		return fmt.Errorf("--nginx-configmap: %w", err)
	}
	return nginxconfig.Translate(settings).Write(os.Stdout, output)
}

func annotations(args []string) error {
	fs := pflag.NewFlagSet("ramjet-ingress annotations", pflag.ContinueOnError)
	spec := fs.String("annotations", "all", "the selection to show as enabled")
	if err := fs.Parse(args); err != nil {
		return err
	}
	sel, err := registry.Select(*spec)
	if err != nil {
		return err
	}
	for _, f := range registry.Families() {
		state := "enabled"
		if !sel.Enabled(f.Name) {
			state = "disabled"
		}
		kind := ""
		if f.AccessControl {
			kind = ", access control (fails closed)"
		}
		fmt.Printf("%s (%s%s): %s\n", f.Name, state, kind, f.Doc)
		for _, k := range f.Keys {
			name := registry.Prefix + k.Name
			if k.Wildcard {
				name += "*"
			}
			def := ""
			if k.Default != "" {
				def = fmt.Sprintf(" [default %s]", k.Default)
			}
			doc := strings.TrimSpace(k.Doc)
			if k.Ignored != "" {
				doc = "ignored, no counterpart in Ramjet: " + k.Ignored
			}
			fmt.Printf("  %-52s risk %-8s scope %-8s%s %s\n", name, k.Risk, k.Scope, def, doc)
		}
	}
	return nil
}
