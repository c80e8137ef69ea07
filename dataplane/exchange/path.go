package exchange

import "strings"

// ReplacePrefix replaces the prefix a prefix route matched in path with
// replacement, by whole segments and with the Gateway API's slash rules
// (HTTPPathModifier.ReplacePrefixMatch): a trailing slash of the prefix or
// of the replacement is ignored, the rest of the path is kept with its
// slash, and an empty result is "/". "/foo/bar" with prefix "/foo" becomes
// "/xyz/bar" with "/xyz" or "/xyz/", "/bar" with "" or "/"; "/foo/" with
// "/xyz" becomes "/xyz/". A path the prefix does not match is returned as
// it is.
func ReplacePrefix(path, prefix, replacement string) string {
	prefix = strings.TrimRight(prefix, "/")
	rest, ok := strings.CutPrefix(path, prefix)
	if !ok || (rest != "" && rest[0] != '/') {
		return path
	}
	out := strings.TrimRight(replacement, "/") + rest
	if out == "" {
		return "/"
	}
	return out
}
