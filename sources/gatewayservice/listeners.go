package gatewayservice

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ramjet-dev/ramjet/core"
	"github.com/ramjet-dev/ramjet/dataplane/config"
)

// ListenerFlag is the flag whose values ParseListenerMap reads.
const ListenerFlag = "--gateway-listener"

// ParseListenerMap reads the values of --gateway-listener, each PORT=NAME:
// Gateway port PORT (1-65535) is served by the pod's ramjetd listener
// NAME. A port may be named once; several ports may share a listener. No
// values is a nil map (shared mode off).
func ParseListenerMap(items []string) (map[int32]string, error) {
	var out map[int32]string
	for _, item := range items {
		portText, name, ok := strings.Cut(item, "=")
		if !ok {
			return nil, fmt.Errorf("%s %s: must be PORT=NAME", ListenerFlag, core.Quote(item))
		}
		port, err := strconv.ParseInt(portText, 10, 32)
		if err != nil || port < 1 || port > 65535 {
			return nil, fmt.Errorf("%s %s: PORT must be a number from 1 to 65535", ListenerFlag, core.Quote(item))
		}
		if config.ValidateName(name) != nil {
			return nil, fmt.Errorf("%s %s: NAME must be a ramjetd listener name (1 to %d letters, digits, '_', '.' or '-', starting with a letter or digit)",
				ListenerFlag, core.Quote(item), config.MaxNameLength)
		}
		if _, dup := out[int32(port)]; dup {
			return nil, fmt.Errorf("%s %s: port %d is mapped twice", ListenerFlag, core.Quote(item), port)
		}
		if out == nil {
			out = map[int32]string{}
		}
		out[int32(port)] = name
	}
	return out, nil
}
