package gatewayservice

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// The pod ports of the default range.
const (
	DefaultFirstPort int32 = 20000
	DefaultLastPort  int32 = 20999
)

// The marks of Ramjet's Services.
const (
	// LabelManagedBy with the value ManagedBy marks a Service as Ramjet's.
	LabelManagedBy = "app.kubernetes.io/managed-by"
	// ManagedBy is the value of LabelManagedBy.
	ManagedBy = "ramjet"
	// LabelGateway holds a hash of the Gateway's namespace/name, to
	// select the Service of one Gateway.
	LabelGateway = prefix + "gateway"
	// AnnotationController holds the Gateway controller name the Service
	// was made for.
	AnnotationController = prefix + "controller"
	// AnnotationGatewayNamespace and AnnotationGatewayName hold the
	// Gateway's namespace and name.
	AnnotationGatewayNamespace = prefix + "gateway-namespace"
	AnnotationGatewayName      = prefix + "gateway-name"
	// annotationLabels and annotationAnnotations record the keys copied
	// from spec.infrastructure, comma-separated.
	annotationLabels      = prefix + "infrastructure-labels"
	annotationAnnotations = prefix + "infrastructure-annotations"

	prefix = "gateway.ramjet.dev/"
)

// Options say where Ramjet's Services live and what they look like.
type Options struct {
	// Namespace is the controller's namespace, where the Services are.
	Namespace string
	// Selector selects the ingress pods; it must not be empty.
	Selector map[string]string
	// Type is the Services' type; empty is LoadBalancer.
	Type corev1.ServiceType
	// PortRange is the first and last pod port a Gateway port may take;
	// zero is DefaultFirstPort to DefaultLastPort.
	PortRange [2]int32
	// ControllerName is the Gateway controller's name (such as
	// ramjet.dev/gateway); only Services recording it are this
	// controller's.
	ControllerName gatewayv1.GatewayController
}

// Validate reports what is wrong with the options, naming the field.
func (o Options) Validate() error {
	o = o.withDefaults()
	var errs []error
	if msgs := validation.IsDNS1123Label(o.Namespace); len(msgs) > 0 {
		errs = append(errs, errors.New("namespace: must be a namespace name"))
	}
	if len(o.Selector) == 0 {
		errs = append(errs, errors.New("selector: must select the ingress pods"))
	}
	for k, v := range o.Selector {
		if len(validation.IsQualifiedName(k)) > 0 || len(validation.IsValidLabelValue(v)) > 0 {
			errs = append(errs, errors.New("selector: keys and values must be valid label keys and values"))
			break
		}
	}
	switch o.Type {
	case corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeNodePort, corev1.ServiceTypeClusterIP:
	default:
		errs = append(errs, errors.New("type: must be LoadBalancer, NodePort or ClusterIP"))
	}
	if first, last := o.PortRange[0], o.PortRange[1]; first < 1 || last > 65535 || first > last {
		errs = append(errs, fmt.Errorf("port range %d-%d: must be first-last within 1-65535", first, last))
	}
	if o.ControllerName == "" {
		errs = append(errs, errors.New("controller name: is required"))
	}
	return errors.Join(errs...)
}

// withDefaults fills in the defaults of the zero fields.
func (o Options) withDefaults() Options {
	if o.Type == "" {
		o.Type = corev1.ServiceTypeLoadBalancer
	}
	if o.PortRange == [2]int32{} {
		o.PortRange = [2]int32{DefaultFirstPort, DefaultLastPort}
	}
	return o
}

// owns reports whether svc is one of this controller's Services.
func (o Options) owns(svc *corev1.Service) bool {
	return svc.Namespace == o.Namespace &&
		svc.Labels[LabelManagedBy] == ManagedBy &&
		svc.Annotations[AnnotationController] == string(o.ControllerName)
}
