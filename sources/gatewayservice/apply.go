package gatewayservice

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	coreclient "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/ramjet-dev/ramjet/sources/snapshot"
)

// Provisioner writes plans to the API server.
type Provisioner struct {
	// Options are those the plans were made with: the Provisioner writes
	// only Services in their namespace that are their controller's.
	Options Options
}

// Apply deletes, updates and creates the plan's Services, in that order,
// and returns the errors joined. A Service it would update or delete is
// read first and left alone, with an error, unless it is this controller's;
// a delete is conditional on the object read. Races are not errors: a
// Service already there (create), gone (update, delete) or changed since
// it was read (update, delete) is skipped, since the watch brings the
// change and the next plan starts from it.
func (p Provisioner) Apply(ctx context.Context, client kubernetes.Interface, plan Plan) error {
	services := client.CoreV1().Services(p.Options.Namespace)
	var errs []error
	for _, key := range plan.Delete {
		errs = append(errs, p.delete(ctx, services, key))
	}
	for _, svc := range plan.Update {
		errs = append(errs, p.update(ctx, services, svc))
	}
	for _, svc := range plan.Create {
		errs = append(errs, p.create(ctx, services, svc))
	}
	return errors.Join(errs...)
}

func (p Provisioner) create(ctx context.Context, c coreclient.ServiceInterface, svc *corev1.Service) error {
	if !p.Options.owns(svc) {
		return fmt.Errorf("create Service %s/%s: it does not carry this controller's marks", svc.Namespace, svc.Name)
	}
	_, err := c.Create(ctx, svc, metav1.CreateOptions{})
	return ignore(err, "create", svc.Namespace, svc.Name, apierrors.IsAlreadyExists)
}

func (p Provisioner) update(ctx context.Context, c coreclient.ServiceInterface, svc *corev1.Service) error {
	if !p.Options.owns(svc) {
		return fmt.Errorf("update Service %s/%s: it does not carry this controller's marks", svc.Namespace, svc.Name)
	}
	if _, err := p.live(ctx, c, svc.Namespace, svc.Name); err != nil {
		return ignore(err, "update", svc.Namespace, svc.Name, apierrors.IsNotFound)
	}
	_, err := c.Update(ctx, svc, metav1.UpdateOptions{})
	return ignore(err, "update", svc.Namespace, svc.Name, apierrors.IsNotFound, apierrors.IsConflict)
}

func (p Provisioner) delete(ctx context.Context, c coreclient.ServiceInterface, key snapshot.Key) error {
	live, err := p.live(ctx, c, key.Namespace, key.Name)
	if err != nil {
		return ignore(err, "delete", key.Namespace, key.Name, apierrors.IsNotFound)
	}
	err = c.Delete(ctx, key.Name, metav1.DeleteOptions{
		Preconditions: &metav1.Preconditions{UID: &live.UID, ResourceVersion: &live.ResourceVersion},
	})
	return ignore(err, "delete", key.Namespace, key.Name, apierrors.IsNotFound, apierrors.IsConflict)
}

// errForeign is why a Service that is not this controller's is left alone.
var errForeign = errors.New("it is not managed by this controller; left alone")

// live reads the Service as the API server has it; errForeign unless it
// is in the options' namespace and this controller's.
func (p Provisioner) live(ctx context.Context, c coreclient.ServiceInterface, namespace, name string) (*corev1.Service, error) {
	if namespace != p.Options.Namespace {
		return nil, errForeign
	}
	svc, err := c.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	if !p.Options.owns(svc) {
		return nil, errForeign
	}
	return svc, nil
}

// ignore is nil when err is nil or a race that skip names, else err with
// what was done to which Service.
func ignore(err error, verb, namespace, name string, skip ...func(error) bool) error {
	if err == nil {
		return nil
	}
	for _, s := range skip {
		if s(err) {
			return nil
		}
	}
	return fmt.Errorf("%s Service %s/%s: %w", verb, namespace, name, err)
}
