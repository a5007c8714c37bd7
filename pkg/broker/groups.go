package broker

import (
	"context"
	"fmt"
	"maps"

	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/batkube/batkube/pkg/settle"
	"github.com/batkube/batkube/pkg/translate"
)

// releaseGroups creates the pod groups a settle verdict releases: a gang's
// group held back since its submission is created; a group that exists is
// deleted and created again, the same but for its status (what the
// scheduler wrote) and its identity. kube-scheduler attempts a pod group
// as soon as it appears, with all the pods it holds for it, whereas it
// retries one it has seen only on a back-off of real time.
func (r *run) releaseGroups(ctx context.Context, refs []settle.GroupRef) error {
	for _, ref := range refs {
		if group, held := r.heldGroups[ref]; held {
			delete(r.heldGroups, ref)
			if _, err := r.api.Create(ctx, podGroupsGVR, group); err != nil {
				return fmt.Errorf("creating pod group %s: %w", ref, err)
			}
			continue
		}
		cur, err := r.store.Get(podGroupsGVR.GroupResource(), ref.Namespace, ref.Name)
		if apierrors.IsNotFound(err) {
			continue // gone with its job meanwhile
		}
		if err != nil {
			return fmt.Errorf("reading pod group %s: %w", ref, err)
		}
		old, ok := cur.Object().(*schedulingv1beta1.PodGroup)
		if !ok {
			return fmt.Errorf("pod group %s: stored as %T", ref, cur.Object())
		}
		fresh := &schedulingv1beta1.PodGroup{
			TypeMeta: old.TypeMeta,
			ObjectMeta: metav1.ObjectMeta{Name: old.Name, Namespace: old.Namespace, Labels: maps.Clone(old.Labels),
				Annotations: maps.Clone(old.Annotations), OwnerReferences: old.OwnerReferences},
			Spec: *old.Spec.DeepCopy(),
		}
		if _, err := r.api.Delete(ctx, podGroupsGVR, ref.Namespace, ref.Name); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting pod group %s to create it again: %w", ref, err)
		}
		if _, err := r.api.Create(ctx, podGroupsGVR, fresh); err != nil {
			return fmt.Errorf("creating pod group %s again: %w", ref, err)
		}
	}
	return nil
}

// deletePodGroup deletes the PodGroup of a forgotten multi-host job, if it
// has one (translate.PodGroup), or forgets it if it was still held back.
func (r *run) deletePodGroup(ctx context.Context, j *job) {
	if r.opts.Pods.Gangs != translate.GangsPodGroup || len(j.pods) < 2 {
		return
	}
	ref := settle.GroupRef{Namespace: j.pods[0].namespace, Name: translate.PodGroupName(string(j.id))}
	if _, held := r.heldGroups[ref]; held {
		delete(r.heldGroups, ref)
		return
	}
	if _, err := r.api.Delete(ctx, podGroupsGVR, ref.Namespace, ref.Name); err != nil && !apierrors.IsNotFound(err) {
		r.log.Warn("cannot delete the pod group of a finished job", "job", j.id, "podGroup", ref.String(), "err", err)
	}
}
