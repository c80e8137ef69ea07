// Package all imports every annotation family, so that the controller
// compiles them all in. A new family adds one line here.
package all

import (
	_ "github.com/ramjet-dev/ramjet/annotations/basicauth"
	_ "github.com/ramjet-dev/ramjet/annotations/rewrite"
	_ "github.com/ramjet-dev/ramjet/annotations/sourcerange"
	_ "github.com/ramjet-dev/ramjet/annotations/unsupported"
)
