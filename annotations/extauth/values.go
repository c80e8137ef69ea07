package extauth

import (
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"slices"
	"strings"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/config"
)

// methods are the methods ingress-nginx accepts in auth-method.
var methods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "CONNECT", "OPTIONS", "TRACE"}

// signinParamRE is a query parameter name ramjetd accepts for the sign-in
// redirect.
var signinParamRE = regexp.MustCompile(`^[A-Za-z0-9_.~-]{1,64}$`)

func trim(v string) string { return strings.TrimSpace(v) }

// validateAuthURL accepts an absolute http or https URL without user,
// fragment or whitespace whose host is a DNS name or an IP address with an
// optional port, or $host, $http_host or $best_http_host alone (the
// object's own host: ramjetd asks itself); its path and query may hold
// the variables ramjetd interpolates (config.AuthVariables).
func validateAuthURL(v string) error {
	_, err := config.ParseAuthURL(v, false)
	return err
}

// target reads a valid auth-url: self reports a host of $host,
// $http_host or $best_http_host (the request's own, which ramjetd asks
// itself), and err the address rule of members applied to a host that is an
// IP address.
func target(raw string) (self bool, err error) {
	u, err := config.ParseAuthURL(raw, false)
	if err != nil || u.HostVar != "" {
		return err == nil, err
	}
	host := u.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	ip, err := netip.ParseAddr(strings.Trim(host, "[]"))
	if err != nil {
		return false, nil
	}
	return false, config.CheckMemberIP(ip)
}

// validateSignin is validateAuthURL with $scheme allowed as the scheme:
// ramjetd redirects to it, and appends the original URL itself unless its
// query has the parameter.
func validateSignin(v string) error {
	_, err := config.ParseAuthURL(v, true)
	return err
}

func validateMethod(v string) error {
	if !slices.Contains(methods, v) {
		return fmt.Errorf("%s is not one of %s", core.Quote(v), strings.Join(methods, ", "))
	}
	return nil
}

func validateRequestRedirect(v string) error {
	if err := config.ValidateHeaderValue(v); err != nil {
		return err
	}
	_, err := config.ParseAuthTemplate(v)
	return err
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
