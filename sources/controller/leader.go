package controller

import (
	"context"
	"log/slog"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// The Lease timing of seed 002 (15 s duration).
const (
	leaseDuration = 15 * time.Second
	renewDeadline = 10 * time.Second
	retryPeriod   = 2 * time.Second
)

// Elect runs leader election with a Lease until ctx ends, calling
// onChange(true) when this replica becomes the leader and onChange(false)
// when it stops. The Lease is released when ctx ends, so that another
// replica takes over at once. Serving never waits for it: only Events and
// status need the leader.
func Elect(ctx context.Context, client kubernetes.Interface, namespace, name, identity string, onChange func(bool), log *slog.Logger) {
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: namespace, Name: name},
		Client:     client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: identity},
	}
	for ctx.Err() == nil {
		leaderelection.RunOrDie(ctx, leaderelection.LeaderElectionConfig{
			Lock: lock, LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod,
			ReleaseOnCancel: true, Name: name,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(context.Context) {
					log.Info("became the leader: writing Events and status", "lease", namespace+"/"+name)
					onChange(true)
				},
				OnStoppedLeading: func() {
					log.Info("no longer the leader", "lease", namespace+"/"+name)
					onChange(false)
				},
			},
		})
	}
}
