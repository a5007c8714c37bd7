package registry

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Validate returns what the real API server would reject in obj with 422
// Invalid: the name, and for pods the containers. It is deliberately small:
// Batkube checks what schedulers and kubectl scripts trip over, not every
// rule of the Kubernetes validation code.
func Validate(obj runtime.Object) field.ErrorList {
	m, ok := obj.(metav1.Object)
	if !ok {
		return nil
	}
	var errs field.ErrorList
	errs = append(errs, validateName(obj, m.GetName())...)
	if pod, ok := obj.(*corev1.Pod); ok {
		errs = append(errs, validatePodSpec(&pod.Spec, field.NewPath("spec"))...)
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
	return errs
}
