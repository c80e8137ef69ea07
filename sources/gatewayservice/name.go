package gatewayservice

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/ramjet-dev/ramjet/sources/snapshot"
)

// ServiceName is the name of the Service of a Gateway: "gw-", as much of
// "namespace-name" as fits, reduced to lower-case letters, digits and '-',
// then '-' and a hash of "namespace/name". It is a DNS-1035 label of at
// most 63 characters, and the hash keeps the names of different Gateways
// apart even when their readable parts are cut to the same text.
func ServiceName(gateway snapshot.Key) string {
	const readable = 63 - len("gw-") - len("-") - hashLen
	var b strings.Builder
	b.WriteString("gw-")
	for _, r := range gateway.Namespace + "-" + gateway.Name {
		if b.Len() == len("gw-")+readable {
			break
		}
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case r >= 'A' && r <= 'Z':
			b.WriteRune(r - 'A' + 'a')
		default:
			b.WriteByte('-')
		}
	}
	return strings.TrimRight(b.String(), "-") + "-" + gatewayHash(gateway)
}

// hashLen is the length of gatewayHash's result.
const hashLen = 16

// gatewayHash is a hash of the Gateway's key: 16 lower-case hex digits, a
// valid label value and the end of a DNS label.
func gatewayHash(gateway snapshot.Key) string {
	sum := sha256.Sum256([]byte(gateway.String()))
	return hex.EncodeToString(sum[:hashLen/2])
}

// gatewayOf is the Gateway whose Service svc is, from its annotations;
// false when they name none, or a Gateway whose Service has another name.
func gatewayOf(svc *corev1.Service) (snapshot.Key, bool) {
	k := snapshot.Key{Namespace: svc.Annotations[AnnotationGatewayNamespace], Name: svc.Annotations[AnnotationGatewayName]}
	if k.Namespace == "" || k.Name == "" || svc.Name != ServiceName(k) {
		return snapshot.Key{}, false
	}
	return k, true
}
