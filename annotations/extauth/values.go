package extauth

import (
	"fmt"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/config"
)

// methods are the methods ingress-nginx accepts in auth-method.
var methods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "CONNECT", "OPTIONS", "TRACE"}

// variableRE finds an nginx variable: $name or ${name}.
var variableRE = regexp.MustCompile(`\$(\{[A-Za-z0-9_]+\}|[A-Za-z0-9_]+)`)

// signinParamRE is a query parameter name ramjetd accepts for the sign-in
// redirect.
var signinParamRE = regexp.MustCompile(`^[A-Za-z0-9_.~-]{1,64}$`)

func trim(v string) string { return strings.TrimSpace(v) }

// checkVariables refuses a value holding an nginx variable, naming it.
func checkVariables(v string) error {
	if m := variableRE.FindString(v); m != "" {
		return fmt.Errorf("%s holds the nginx variable %s, which Ramjet does not interpolate: write the value literally", core.Quote(v), m)
	}
	return nil
}

// validateAuthURL is validateURL for auth-url, whose nginx variables
// usually name the object's own host.
func validateAuthURL(v string) error {
	if err := checkVariables(v); err != nil {
		return fmt.Errorf("%w (the service's own URL, such as http://oauth2-proxy.auth.svc.cluster.local:4180/oauth2/auth)", err)
	}
	return validateURL(v)
}

// validateURL accepts an absolute http or https URL without variables,
// user, fragment or whitespace, whose host is a DNS name or an IP address
// with an optional port.
func validateURL(v string) error {
	if err := checkVariables(v); err != nil {
		return err
	}
	u, err := url.Parse(v)
	switch {
	case err != nil:
		return fmt.Errorf("%s is not a URL", core.Quote(v))
	case strings.ContainsAny(v, " \t"):
		return fmt.Errorf("%s holds white space", core.Quote(v))
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("%s is not an absolute http or https URL", core.Quote(v))
	case u.User != nil:
		return fmt.Errorf("%s holds a user or password", core.Quote(v))
	case u.Fragment != "":
		return fmt.Errorf("%s holds a fragment", core.Quote(v))
	case !validHost(u):
		return fmt.Errorf("%s: the host must be a DNS name or an IP address, with an optional port 1..65535", core.Quote(v))
	}
	return nil
}

// validHost reports whether the URL's host is a DNS name (no wildcard) or
// an IP address, and its port, when given, 1..65535.
func validHost(u *url.URL) bool {
	host := u.Hostname()
	if _, err := netip.ParseAddr(host); err != nil && (strings.HasPrefix(host, "*") || config.ValidateDomain(strings.ToLower(host)) != nil) {
		return false
	}
	if strings.HasSuffix(u.Host, ":") {
		return false
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return false
		}
	}
	return true
}

// checkAddress applies the address rule of members to the host of a valid
// auth-url when it is an IP address.
func checkAddress(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	ip, err := netip.ParseAddr(u.Hostname())
	if err != nil {
		return nil
	}
	return config.CheckMemberIP(ip)
}

// validateSignin accepts what validateURL accepts: ramjetd redirects to it
// literally, and appends the original URL itself.
func validateSignin(v string) error {
	if err := checkVariables(v); err != nil {
		return fmt.Errorf("%w (the sign-in page's own URL, such as https://auth.example.com/oauth2/start: Ramjet appends rd=<the original URL> itself)", err)
	}
	return validateURL(v)
}

func validateMethod(v string) error {
	if !slices.Contains(methods, v) {
		return fmt.Errorf("%s is not one of %s", core.Quote(v), strings.Join(methods, ", "))
	}
	return nil
}

func validateRequestRedirect(v string) error {
	if err := checkVariables(v); err != nil {
		return err
	}
	return config.ValidateHeaderValue(v)
}

func validateSigninParam(v string) error {
	if !signinParamRE.MatchString(v) {
		return fmt.Errorf("%s is not a query parameter name (letters, digits and _.~-, at most 64)", core.Quote(v))
	}
	return nil
}

// headerList splits auth-response-headers: trimmed, empty entries left out.
func headerList(v string) []string {
	var names []string
	for entry := range strings.SplitSeq(v, ",") {
		if name := trim(entry); name != "" {
			names = append(names, name)
		}
	}
	return names
}

func validateResponseHeaders(v string) error {
	names := headerList(v)
	if len(names) == 0 {
		return fmt.Errorf("%s names no header", core.Quote(v))
	}
	for _, name := range names {
		if err := config.CheckAuthHeaderName(name); err != nil {
			return err
		}
		if strings.Contains(name, "_") {
			return fmt.Errorf("%s cannot be copied: headers with '_' never reach a member", core.Quote(name))
		}
	}
	return nil
}
