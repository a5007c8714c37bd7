package broker

import (
	"context"
	"fmt"

	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/batkube/batkube/pkg/settle"
	"github.com/batkube/batkube/pkg/store"
	"github.com/batkube/batkube/pkg/translate"
)

// Gangs whose attempts the settle policy decides (settle.Abilities.Hold).
//
// kube-scheduler 1.37 retries a pod group it could not place only on a
// back-off of real time, whatever the cluster does meanwhile; and a group
// that appears with its pods all known is attempted at once, but may be
// popped before all of them have joined it. So Batkube, which owns its
// gangs' PodGroups as a workload controller would, creates each one held:
// a gang policy whose minCount is one more than the gang's pods, which
// kube-scheduler's GangScheduling keeps gated with all the pods it is
// given. Releasing it sets minCount to the gang's size: kube-scheduler
// moves the whole group, with all its pods, to its active queue and
// attempts it at once (minCount may change: the field is mutable, for
// workload scaling). A released group that did not fit waits on the
// back-off: to attempt it again, Batkube renews it (deletes it and creates
// it held: kube-scheduler's informer hands it the deletion, the creation,
// then the release, in order, so the group is whole and gated before its
// release), then releases it.

// heldGroup returns a copy of a gang's released group, held.
func heldGroup(released *schedulingv1beta1.PodGroup) *schedulingv1beta1.PodGroup {
	g := released.DeepCopy()
	if gang := g.Spec.SchedulingPolicy.Gang; gang != nil {
		gang.MinCount++
	}
	return g
}

// actOnGroups does what a settle verdict asks of the gangs.
func (r *run) actOnGroups(ctx context.Context, actions []settle.GroupAction) error {
	for _, a := range actions {
		released, ok := r.gangs[a.Group]
		if !ok {
			continue // gone with its job meanwhile
		}
		if a.Renew {
			if _, err := r.api.Delete(ctx, podGroupsGVR, a.Group.Namespace, a.Group.Name); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("deleting pod group %s to renew it: %w", a.Group, err)
			}
			if _, err := r.api.Create(ctx, podGroupsGVR, heldGroup(released)); err != nil {
				return fmt.Errorf("creating pod group %s again, held: %w", a.Group, err)
			}
		}
		if err := r.setMinCount(ctx, released); err != nil {
			return err
		}
	}
	return nil
}

// setMinCount releases a gang: its group's minCount becomes its size.
func (r *run) setMinCount(ctx context.Context, released *schedulingv1beta1.PodGroup) error {
	want := released.Spec.SchedulingPolicy.Gang
	_, err := r.api.Update(ctx, podGroupsGVR, released.Namespace, released.Name, func(cur store.Object) (store.Object, error) {
		pg, ok := cur.(*schedulingv1beta1.PodGroup)
		if !ok {
			return nil, fmt.Errorf("pod group %s/%s: stored as %T", released.Namespace, released.Name, cur)
		}
		pg = pg.DeepCopy()
		pg.Spec.SchedulingPolicy.Gang = want.DeepCopy()
		return pg, nil
	})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("releasing pod group %s/%s: %w", released.Namespace, released.Name, err)
	}
	return nil
}

// deletePodGroup deletes the PodGroup of a forgotten multi-host job, if it
// has one (translate.PodGroup).
func (r *run) deletePodGroup(ctx context.Context, j *job) {
	if r.opts.Pods.Gangs != translate.GangsPodGroup || len(j.pods) < 2 {
		return
	}
	ref := settle.GroupRef{Namespace: j.pods[0].namespace, Name: translate.PodGroupName(string(j.id))}
	delete(r.gangs, ref)
	if _, err := r.api.Delete(ctx, podGroupsGVR, ref.Namespace, ref.Name); err != nil && !apierrors.IsNotFound(err) {
		r.log.Warn("cannot delete the pod group of a finished job", "job", j.id, "podGroup", ref.String(), "err", err)
	}
}
