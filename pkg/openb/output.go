package openb

import (
	"bufio"
	"fmt"
	"io"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/batkube/batkube/pkg/translate"
	"github.com/batkube/batkube/pkg/workloadjson"
)

// WriteJSON writes the workload as Batsim workload JSON, one job and one
// profile a line, profiles sorted by name: the same workload always gives
// the same bytes (package workloadjson).
func (w Workload) WriteJSON(out io.Writer) error {
	return workloadjson.Write(out, w.NbRes, w.Description, w.Jobs, w.Profiles)
}

// Objects returns the Kubernetes objects the workload's pods name: its
// PriorityClasses, then its ResourceClaimTemplates (without a namespace:
// they go where the run creates its pods).
func (w Workload) Objects() []any {
	var objs []any
	for _, c := range w.PriorityClasses {
		objs = append(objs, &schedulingv1.PriorityClass{
			TypeMeta:         metav1.TypeMeta{APIVersion: "scheduling.k8s.io/v1", Kind: "PriorityClass"},
			ObjectMeta:       metav1.ObjectMeta{Name: c.Name},
			Value:            c.Value,
			PreemptionPolicy: ptr.To(corev1.PreemptNever),
			Description:      c.Description,
		})
	}
	for _, t := range w.ClaimTemplates {
		objs = append(objs, claimTemplate(t))
	}
	return objs
}

// claimTemplate is the ResourceClaimTemplate of a GPU request: exactly
// Count devices of the DeviceClass translate.GPUDriver; for a share, the
// capacity translate.GPUMilliCapacity it consumes; for models, a CEL
// selector on the model attribute.
func claimTemplate(t ClaimTemplate) *resourcev1.ResourceClaimTemplate {
	exact := &resourcev1.ExactDeviceRequest{
		DeviceClassName: translate.GPUDriver,
		AllocationMode:  resourcev1.DeviceAllocationModeExactCount,
		Count:           int64(t.Request.Count),
	}
	if t.Request.Milli > 0 {
		exact.Capacity = &resourcev1.CapacityRequirements{Requests: map[resourcev1.QualifiedName]resource.Quantity{
			translate.GPUMilliCapacity: *resource.NewQuantity(t.Request.Milli, resource.DecimalSI),
		}}
	}
	if sel := t.Request.Selector(); sel != "" {
		exact.Selectors = []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: sel}}}
	}
	return &resourcev1.ResourceClaimTemplate{
		TypeMeta:   metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "ResourceClaimTemplate"},
		ObjectMeta: metav1.ObjectMeta{Name: t.Name},
		Spec: resourcev1.ResourceClaimTemplateSpec{Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{
			Requests: []resourcev1.DeviceRequest{{Name: gpuClaimName, Exactly: exact}},
		}}},
	}
}

// WriteObjects writes Objects as a YAML stream, loadable with batkube-run
// --objects.
func (w Workload) WriteObjects(out io.Writer, comment string) error {
	bw := bufio.NewWriter(out)
	if comment != "" {
		fmt.Fprintf(bw, "# %s\n", comment)
	}
	for i, o := range w.Objects() {
		y, err := yaml.Marshal(o)
		if err != nil {
			return fmt.Errorf("object %d: %w", i, err)
		}
		if i > 0 {
			bw.WriteString("---\n")
		}
		bw.Write(y)
	}
	return bw.Flush()
}
