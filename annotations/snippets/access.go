package snippets

import (
	"strconv"
	"strings"
)

// use is one access directive found in a snippet: how findings name it and
// the line it is on.
type use struct {
	label string
	line  int
}

// accessUses lists the access directives of parsed snippets, in order,
// nested blocks (location, if, limit_except) included. The body of a
// named location (location @name) counts only when a directive other than
// error_page refers to it (try_files ... @name): one only error_page enters
// holds the answer to a request already refused or failed (a custom 403
// page), and denies nothing.
// The references to named locations are those of all the object's
// snippets (server-snippet may hold the location, configuration-snippet
// the try_files); the uses are returned for each snippet.
func accessUses(snippets [][]*directive) [][]use {
	entered := map[string]bool{}
	for _, ds := range snippets {
		walk(ds, func(d *directive) bool {
			if name := strings.ToLower(d.name); name != "error_page" && name != "location" {
				for _, a := range d.args {
					if strings.HasPrefix(a, "@") {
						entered[a] = true
					}
				}
			}
			return true
		})
	}
	out := make([][]use, len(snippets))
	for i, ds := range snippets {
		walk(ds, func(d *directive) bool {
			if strings.EqualFold(d.name, "location") && len(d.args) == 1 && strings.HasPrefix(d.args[0], "@") && !entered[d.args[0]] {
				return false
			}
			if label := accessLabel(d); label != "" {
				out[i] = append(out[i], use{label, d.line})
			}
			return true
		})
	}
	return out
}

// walk calls visit on every directive, depth first, entering a block only
// when visit returns true.
func walk(ds []*directive, visit func(*directive) bool) {
	for _, d := range ds {
		if visit(d) {
			walk(d.block, visit)
		}
	}
}

// accessLabel names what a directive does if it denies or authenticates
// requests (or may: Lua code, an included file), "" otherwise. The list is
// in the family's documentation (accessDoc).
func accessLabel(d *directive) string {
	name := strings.ToLower(d.name)
	off := len(d.args) == 1 && strings.EqualFold(d.args[0], "off")
	switch {
	case name == "allow", name == "deny", name == "limit_except", name == "internal", name == "include",
		strings.HasPrefix(name, "secure_link"):
		return name
	case name == "satisfy":
		if len(d.args) == 1 && strings.EqualFold(d.args[0], "all") {
			return "" // what Ramjet always does, as the satisfy annotation
		}
		return name
	case strings.HasPrefix(name, "auth_"):
		// auth_request_set only copies a value of the auth subrequest's
		// answer; "off" only lifts a control.
		if name == "auth_request_set" || off {
			return ""
		}
		return name
	case name == "ssl_verify_client", strings.HasPrefix(name, "modsecurity"):
		if off {
			return ""
		}
		return name
	case name == "return":
		if len(d.args) > 0 {
			if code, err := strconv.Atoi(d.args[0]); err == nil && code >= 400 && code <= 599 {
				return name + " " + strconv.Itoa(code)
			}
		}
		return ""
	case isLua(name):
		// Only these two phases cannot end a request or change its answer.
		if strings.HasPrefix(name, "log_by_lua") || strings.HasPrefix(name, "set_by_lua") {
			return ""
		}
		return name
	}
	return ""
}

// isLua reports whether a directive runs Lua code (ngx_lua's *_by_lua,
// *_by_lua_block and *_by_lua_file).
func isLua(name string) bool {
	return strings.HasSuffix(name, "_by_lua") || strings.HasSuffix(name, "_by_lua_block") || strings.HasSuffix(name, "_by_lua_file")
}
