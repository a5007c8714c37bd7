package openb

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/batkube/batkube/pkg/translate"
)

// WriteJSON writes the workload as Batsim workload JSON, one job and one
// profile a line, profiles sorted by name: the same workload always gives
// the same bytes.
func (w Workload) WriteJSON(out io.Writer) error {
	bw := bufio.NewWriter(out)
	fmt.Fprintf(bw, "{\n  \"nb_res\": %d,\n", w.NbRes)
	if w.Description != "" {
		desc, err := json.Marshal(w.Description)
		if err != nil {
			return err
		}
		fmt.Fprintf(bw, "  \"description\": %s,\n", desc)
	}
	bw.WriteString("  \"jobs\": [")
	for i, j := range w.Jobs {
		line, err := json.Marshal(j)
		if err != nil {
			return fmt.Errorf("job %s: %w", j.ID, err)
		}
		writeItem(bw, i, line)
	}
	closeList(bw, len(w.Jobs), "],\n  \"profiles\": {")
	names := make([]string, 0, len(w.Profiles))
	for name := range w.Profiles {
		names = append(names, name)
	}
	sort.Strings(names)
	for i, name := range names {
		line, err := json.Marshal(w.Profiles[name])
		if err != nil {
			return fmt.Errorf("profile %s: %w", name, err)
		}
		writeItem(bw, i, append([]byte(strconv.Quote(name)+": "), line...))
	}
	closeList(bw, len(names), "}\n}\n")
	return bw.Flush()
}

func writeItem(bw *bufio.Writer, i int, item []byte) {
	if i > 0 {
		bw.WriteByte(',')
	}
	bw.WriteString("\n    ")
	bw.Write(item)
}

func closeList(bw *bufio.Writer, n int, closing string) {
	if n > 0 {
		bw.WriteString("\n  ")
	}
	bw.WriteString(closing)
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
