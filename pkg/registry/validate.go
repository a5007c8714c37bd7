package registry

import (
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateCreate returns what the real API server would reject in a new
// object with 422 Invalid: the name, for pods the containers and volumes,
// for Jobs their spec and pod template (validateJob), webhooks' clients.
// It is deliberately small: Batkube checks what schedulers, controllers
// and kubectl scripts trip over, not every rule of the Kubernetes
// validation code.
func ValidateCreate(obj runtime.Object) field.ErrorList {
	return validateObject(obj)
}

// ValidateUpdate returns what the real API server would reject in an
// update of old to obj: what ValidateCreate rejects, and the changes no
// update may make (a pod's spec but the fields validatePodSpecUpdate
// allows, a Job's selector).
func ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	errs := validateObject(obj)
	switch o := obj.(type) {
	case *corev1.Pod:
		if oldPod, ok := old.(*corev1.Pod); ok {
			errs = append(errs, validatePodSpecUpdate(&o.Spec, &oldPod.Spec, field.NewPath("spec"))...)
		}
	case *batchv1.Job:
		if oldJob, ok := old.(*batchv1.Job); ok {
			errs = append(errs, validateJobUpdate(o, oldJob)...)
		}
	}
	return errs
}

// validateObject holds the rules an object meets whether it is created or
// updated.
func validateObject(obj runtime.Object) field.ErrorList {
	m, ok := obj.(metav1.Object)
	if !ok {
		return nil
	}
	var errs field.ErrorList
	errs = append(errs, validateName(obj, m.GetName())...)
	switch o := obj.(type) {
	case *corev1.Pod:
		errs = append(errs, validatePodSpec(&o.Spec, field.NewPath("spec"))...)
	case *batchv1.Job:
		errs = append(errs, validateJob(o)...)
	case *admissionregistrationv1.MutatingWebhookConfiguration:
		errs = append(errs, validateWebhookClients(clientConfigsOfMutating(o), field.NewPath("webhooks"))...)
	case *admissionregistrationv1.ValidatingWebhookConfiguration:
		errs = append(errs, validateWebhookClients(clientConfigsOfValidating(o), field.NewPath("webhooks"))...)
	}
	return errs
}

func validateName(obj runtime.Object, name string) field.ErrorList {
	path := field.NewPath("metadata", "name")
	if name == "" {
		return field.ErrorList{field.Required(path, "name or generateName is required")}
	}
	var msgs []string
	switch obj.(type) {
	case *corev1.Namespace, *corev1.Service:
		msgs = validation.IsDNS1123Label(name)
	default:
		if name == "." || name == ".." {
			msgs = []string{fmt.Sprintf("may not be '%s'", name)}
		}
		for _, c := range name {
			if c == '/' || c == '%' {
				msgs = append(msgs, fmt.Sprintf("may not contain '%c'", c))
			}
		}
		if _, isPod := obj.(*corev1.Pod); isPod {
			msgs = append(msgs, validation.IsDNS1123Subdomain(name)...)
		}
		if _, isNode := obj.(*corev1.Node); isNode {
			msgs = append(msgs, validation.IsDNS1123Subdomain(name)...)
		}
		if _, isJob := obj.(*batchv1.Job); isJob {
			msgs = append(msgs, validation.IsDNS1123Subdomain(name)...)
		}
	}
	var errs field.ErrorList
	for _, msg := range msgs {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	return errs
}

func validatePodSpec(spec *corev1.PodSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(spec.Containers) == 0 {
		errs = append(errs, field.Required(path.Child("containers"), ""))
	}
	names := sets.New[string]()
	check := func(cs []corev1.Container, p *field.Path) {
		for i, c := range cs {
			cp := p.Index(i)
			if c.Name == "" {
				errs = append(errs, field.Required(cp.Child("name"), ""))
			} else {
				for _, msg := range validation.IsDNS1123Label(c.Name) {
					errs = append(errs, field.Invalid(cp.Child("name"), c.Name, msg))
				}
				if names.Has(c.Name) {
					errs = append(errs, field.Duplicate(cp.Child("name"), c.Name))
				}
				names.Insert(c.Name)
			}
			if c.Image == "" {
				errs = append(errs, field.Required(cp.Child("image"), ""))
			}
		}
	}
	check(spec.InitContainers, path.Child("initContainers"))
	check(spec.Containers, path.Child("containers"))
	errs = append(errs, validateVolumes(spec, path)...)
	return errs
}

// validateVolumes checks that the volumes have distinct DNS-label names
// and that every container's volume mount names one of them, with a path.
func validateVolumes(spec *corev1.PodSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	volumes := sets.New[string]()
	for i, v := range spec.Volumes {
		p := path.Child("volumes").Index(i).Child("name")
		switch {
		case v.Name == "":
			errs = append(errs, field.Required(p, ""))
		case volumes.Has(v.Name):
			errs = append(errs, field.Duplicate(p, v.Name))
		default:
			for _, msg := range validation.IsDNS1123Label(v.Name) {
				errs = append(errs, field.Invalid(p, v.Name, msg))
			}
		}
		volumes.Insert(v.Name)
	}
	mounts := func(cs []corev1.Container, p *field.Path) {
		for i, c := range cs {
			for j, m := range c.VolumeMounts {
				mp := p.Index(i).Child("volumeMounts").Index(j)
				if !volumes.Has(m.Name) {
					errs = append(errs, field.NotFound(mp.Child("name"), m.Name))
				}
				if m.MountPath == "" {
					errs = append(errs, field.Required(mp.Child("mountPath"), ""))
				}
			}
		}
	}
	mounts(spec.InitContainers, path.Child("initContainers"))
	mounts(spec.Containers, path.Child("containers"))
	return errs
}
