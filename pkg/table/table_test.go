package table

import (
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// now is the simulated time of the tests.
var now = time.Date(2030, 1, 2, 12, 0, 0, 0, time.UTC)

func ago(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }

func objectMeta(name string, created time.Duration) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: "default", CreationTimestamp: ago(created), ResourceVersion: "42"}
}

func columnNames(t *metav1.Table) []string {
	var names []string
	for _, c := range t.ColumnDefinitions {
		names = append(names, c.Name)
	}
	return names
}

// convertOne converts obj and returns its only row.
func convertOne(t *testing.T, obj runtime.Object) (*metav1.Table, metav1.TableRow) {
	t.Helper()
	tbl, err := Convert(obj, metav1.IncludeNone, now)
	if err != nil {
		t.Fatalf("Convert: %v", err)
	}
	if len(tbl.Rows) != 1 {
		t.Fatalf("rows: got %d, want 1", len(tbl.Rows))
	}
	return tbl, tbl.Rows[0]
}

func checkCells(t *testing.T, got, want []any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("cells:\ngot  %#v\nwant %#v", got, want)
	}
}

func running(name string, ready bool, restarts int32) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name, Ready: ready, RestartCount: restarts,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: ago(time.Hour)}}}
}

func TestPods(t *testing.T) {
	twoContainers := corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}, {Name: "b"}}}
	tests := []struct {
		name      string
		pod       corev1.Pod
		want      []any
		completed string // reason of the Completed row condition, if any
	}{
		{
			name: "pending and unscheduled",
			pod:  corev1.Pod{ObjectMeta: objectMeta("job-1", 90*time.Second), Spec: twoContainers, Status: corev1.PodStatus{Phase: corev1.PodPending}},
			want: []any{"job-1", "0/2", "Pending", "0", "90s", "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "nominated",
			pod: corev1.Pod{ObjectMeta: objectMeta("job-2", 5*time.Minute), Spec: twoContainers,
				Status: corev1.PodStatus{Phase: corev1.PodPending, NominatedNodeName: "node-3"}},
			want: []any{"job-2", "0/2", "Pending", "0", "5m", "<none>", "<none>", "node-3", "<none>"},
		},
		{
			name: "running with a restart",
			pod: corev1.Pod{ObjectMeta: objectMeta("web", 3*time.Hour),
				Spec: corev1.PodSpec{NodeName: "node-1", Containers: twoContainers.Containers,
					ReadinessGates: []corev1.PodReadinessGate{{ConditionType: "example.com/gate"}}},
				Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIPs: []corev1.PodIP{{IP: "10.0.0.7"}},
					Conditions: []corev1.PodCondition{{Type: "example.com/gate", Status: corev1.ConditionTrue}},
					ContainerStatuses: []corev1.ContainerStatus{
						running("a", true, 0),
						func() corev1.ContainerStatus {
							s := running("b", true, 2)
							s.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{FinishedAt: ago(10 * time.Minute)}
							return s
						}(),
					}}},
			want: []any{"web", "2/2", "Running", "2 (10m ago)", "3h", "10.0.0.7", "node-1", "<none>", "1/1"},
		},
		{
			name: "succeeded",
			pod: corev1.Pod{ObjectMeta: objectMeta("batch", 49*time.Hour), Spec: corev1.PodSpec{NodeName: "node-2", Containers: []corev1.Container{{Name: "main"}}},
				Status: corev1.PodStatus{Phase: corev1.PodSucceeded, ContainerStatuses: []corev1.ContainerStatus{{Name: "main",
					State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed"}}}}}},
			want:      []any{"batch", "0/1", "Completed", "0", "2d1h", "<none>", "node-2", "<none>", "<none>"},
			completed: "Succeeded",
		},
		{
			name: "failed with an exit code",
			pod: corev1.Pod{ObjectMeta: objectMeta("crash", time.Minute), Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main"}}},
				Status: corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{Name: "main",
					State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 3}}}}}},
			want:      []any{"crash", "0/1", "ExitCode:3", "0", "60s", "<none>", "<none>", "<none>", "<none>"},
			completed: "Failed",
		},
		{
			name: "terminating",
			pod: corev1.Pod{ObjectMeta: func() metav1.ObjectMeta {
				m := objectMeta("old", 10*24*time.Hour)
				m.DeletionTimestamp = ptr.To(ago(0))
				return m
			}(), Spec: corev1.PodSpec{NodeName: "n", Containers: []corev1.Container{{Name: "main"}}},
				Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{running("main", true, 0)}}},
			want: []any{"old", "1/1", "Terminating", "0", "10d", "<none>", "n", "<none>", "<none>"},
		},
		{
			name: "lost node",
			pod: corev1.Pod{ObjectMeta: func() metav1.ObjectMeta {
				m := objectMeta("lost", time.Hour)
				m.DeletionTimestamp = ptr.To(ago(0))
				return m
			}(), Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main"}}},
				Status: corev1.PodStatus{Phase: corev1.PodRunning, Reason: "NodeLost"}},
			want: []any{"lost", "0/1", "Unknown", "0", "60m", "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "scheduling gated",
			pod: corev1.Pod{ObjectMeta: objectMeta("gated", time.Second), Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main"}}},
				Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "SchedulingGated"}}}},
			want: []any{"gated", "0/1", "SchedulingGated", "0", "1s", "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "init container waiting",
			pod: corev1.Pod{ObjectMeta: objectMeta("init", 2*time.Minute),
				Spec: corev1.PodSpec{InitContainers: []corev1.Container{{Name: "setup"}, {Name: "sidecar", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)}},
					Containers: []corev1.Container{{Name: "main"}}},
				Status: corev1.PodStatus{Phase: corev1.PodPending, InitContainerStatuses: []corev1.ContainerStatus{
					{Name: "setup", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff"}}},
				}}},
			want: []any{"init", "0/2", "Init:ImagePullBackOff", "0", "2m", "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "init container running",
			pod: corev1.Pod{ObjectMeta: objectMeta("init2", 2*time.Minute),
				Spec: corev1.PodSpec{InitContainers: []corev1.Container{{Name: "setup"}, {Name: "more"}}, Containers: []corev1.Container{{Name: "main"}}},
				Status: corev1.PodStatus{Phase: corev1.PodPending, InitContainerStatuses: []corev1.ContainerStatus{
					{Name: "setup", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}}},
					{Name: "more", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}},
				}}},
			want: []any{"init2", "0/1", "Init:1/2", "0", "2m", "<none>", "<none>", "<none>", "<none>"},
		},
		{
			name: "no creation time",
			pod:  corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "new"}, Status: corev1.PodStatus{Phase: corev1.PodPending}},
			want: []any{"new", "0/0", "Pending", "0", "<unknown>", "<none>", "<none>", "<none>", "<none>"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tbl, row := convertOne(t, &tt.pod)
			if got, want := columnNames(tbl), []string{"Name", "Ready", "Status", "Restarts", "Age", "IP", "Node", "Nominated Node", "Readiness Gates"}; !slices.Equal(got, want) {
				t.Errorf("columns: got %v, want %v", got, want)
			}
			checkCells(t, row.Cells, tt.want)
			var gotCompleted string
			for _, c := range row.Conditions {
				if c.Type == metav1.RowCompleted && c.Status == metav1.ConditionTrue {
					gotCompleted = c.Reason
				}
			}
			if gotCompleted != tt.completed {
				t.Errorf("Completed condition: got %q, want %q", gotCompleted, tt.completed)
			}
		})
	}
}

func TestNodes(t *testing.T) {
	ready := corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue}
	tests := []struct {
		name string
		node corev1.Node
		want []any
	}{
		{
			name: "simulated host",
			node: corev1.Node{ObjectMeta: objectMeta("host-0", 400*24*time.Hour),
				Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{ready}, NodeInfo: corev1.NodeSystemInfo{KubeletVersion: "v1.37.2"}}},
			want: []any{"host-0", "Ready", "<none>", "400d", "v1.37.2", "<none>", "<none>", "<unknown>", "<unknown>", "<unknown>"},
		},
		{
			name: "cordoned control plane",
			node: corev1.Node{
				ObjectMeta: func() metav1.ObjectMeta {
					m := objectMeta("cp", 2*time.Hour)
					m.Labels = map[string]string{"node-role.kubernetes.io/control-plane": "", "kubernetes.io/role": "master", "node-role.kubernetes.io/": "x"}
					return m
				}(),
				Spec: corev1.NodeSpec{Unschedulable: true},
				Status: corev1.NodeStatus{
					Conditions: []corev1.NodeCondition{{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse}, {Type: corev1.NodeReady, Status: corev1.ConditionFalse}},
					Addresses:  []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: "cp"}, {Type: corev1.NodeInternalIP, Address: "192.168.0.1"}},
					NodeInfo:   corev1.NodeSystemInfo{KubeletVersion: "v1.37.2", OSImage: "Debian", KernelVersion: "6.1", Architecture: "amd64", ContainerRuntimeVersion: "containerd://2.0"},
				}},
			want: []any{"cp", "NotReady,SchedulingDisabled", "control-plane,master", "120m", "v1.37.2", "192.168.0.1", "<none>", "Debian", "6.1 (amd64)", "containerd://2.0"},
		},
		{
			name: "no condition",
			node: corev1.Node{ObjectMeta: objectMeta("bare", time.Minute)},
			want: []any{"bare", "Unknown", "<none>", "60s", "", "<none>", "<none>", "<unknown>", "<unknown>", "<unknown>"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tbl, row := convertOne(t, &tt.node)
			if got, want := columnNames(tbl), []string{"Name", "Status", "Roles", "Age", "Version", "Internal-IP", "External-IP", "OS-Image", "Kernel-Version", "Container-Runtime"}; !slices.Equal(got, want) {
				t.Errorf("columns: got %v, want %v", got, want)
			}
			checkCells(t, row.Cells, tt.want)
		})
	}
}

func TestOtherKinds(t *testing.T) {
	microNow := metav1.NewMicroTime(now.Add(-30 * time.Second))
	tests := []struct {
		name    string
		obj     runtime.Object
		columns []string
		want    []any
	}{
		{
			name:    "namespace",
			obj:     &corev1.Namespace{ObjectMeta: objectMeta("kube-system", 36*time.Hour), Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}},
			columns: []string{"Name", "Status", "Age"},
			want:    []any{"kube-system", "Active", "36h"},
		},
		{
			name: "core event",
			obj: &corev1.Event{ObjectMeta: objectMeta("job-1.17f", time.Minute), Type: "Warning", Reason: "FailedScheduling",
				InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "job-1"}, Message: " 0/3 nodes are available \n",
				Source: corev1.EventSource{Component: "default-scheduler"}, FirstTimestamp: ago(5 * time.Minute), LastTimestamp: ago(time.Minute), Count: 4},
			columns: []string{"Last Seen", "Type", "Reason", "Object", "Subobject", "Source", "Message", "First Seen", "Count", "Name"},
			want:    []any{"60s", "Warning", "FailedScheduling", "pod/job-1", "", "default-scheduler", "0/3 nodes are available", "5m", int64(4), "job-1.17f"},
		},
		{
			name: "events.k8s.io event from the scheduler",
			obj: &eventsv1.Event{ObjectMeta: objectMeta("job-2.18a", time.Minute), EventTime: microNow, Type: "Normal", Reason: "Scheduled",
				Regarding: corev1.ObjectReference{Kind: "Pod", Name: "job-2"}, Note: "Successfully assigned default/job-2 to host-1",
				ReportingController: "default-scheduler", ReportingInstance: "default-scheduler-host"},
			columns: []string{"Last Seen", "Type", "Reason", "Object", "Subobject", "Source", "Message", "First Seen", "Count", "Name"},
			want:    []any{"30s", "Normal", "Scheduled", "pod/job-2", "", "default-scheduler, default-scheduler-host", "Successfully assigned default/job-2 to host-1", "30s", int64(1), "job-2.18a"},
		},
		{
			name: "event series",
			obj: &eventsv1.Event{ObjectMeta: objectMeta("e", time.Hour), EventTime: metav1.NewMicroTime(now.Add(-time.Hour)), Type: "Warning", Reason: "FailedScheduling",
				Regarding: corev1.ObjectReference{Kind: "Node"}, Series: &eventsv1.EventSeries{Count: 7, LastObservedTime: microNow}},
			columns: []string{"Last Seen", "Type", "Reason", "Object", "Subobject", "Source", "Message", "First Seen", "Count", "Name"},
			want:    []any{"30s", "Warning", "FailedScheduling", "node", "", "", "", "60m", int64(7), "e"},
		},
		{
			name:    "lease",
			obj:     &coordinationv1.Lease{ObjectMeta: objectMeta("kube-scheduler", 20*time.Second), Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("host_1234")}},
			columns: []string{"Name", "Holder", "Age"},
			want:    []any{"kube-scheduler", "host_1234", "20s"},
		},
		{
			name: "service",
			obj: &corev1.Service{ObjectMeta: objectMeta("kubernetes", 3*time.Hour), Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP,
				ClusterIPs: []string{"10.96.0.1"}, Ports: []corev1.ServicePort{{Port: 443, Protocol: corev1.ProtocolTCP}}}},
			columns: []string{"Name", "Type", "Cluster-IP", "External-IP", "Port(s)", "Age", "Selector"},
			want:    []any{"kubernetes", "ClusterIP", "10.96.0.1", "<none>", "443/TCP", "3h", "<none>"},
		},
		{
			name: "load balancer",
			obj: &corev1.Service{ObjectMeta: objectMeta("lb", time.Hour), Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer,
				Selector: map[string]string{"app": "web"}, ExternalIPs: []string{"1.2.3.4"},
				Ports: []corev1.ServicePort{{Port: 80, NodePort: 30080, Protocol: corev1.ProtocolTCP}, {Port: 53, Protocol: corev1.ProtocolUDP}}},
				Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{Hostname: "lb.example.com"}, {IP: "5.6.7.8"}}}}},
			columns: []string{"Name", "Type", "Cluster-IP", "External-IP", "Port(s)", "Age", "Selector"},
			want:    []any{"lb", "LoadBalancer", "<none>", "5.6.7.8,lb.example.com,1.2.3.4", "80:30080/TCP,53/UDP", "60m", "app=web"},
		},
		{
			name: "deployment",
			obj: &appsv1.Deployment{ObjectMeta: objectMeta("web", 8*24*time.Hour), Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](3),
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:1"}, {Name: "log", Image: "busybox"}}}}},
				Status: appsv1.DeploymentStatus{ReadyReplicas: 2, UpdatedReplicas: 3, AvailableReplicas: 2}},
			columns: []string{"Name", "Ready", "Up-to-date", "Available", "Age", "Containers", "Images", "Selector"},
			want:    []any{"web", "2/3", int64(3), int64(2), "8d", "nginx,log", "nginx:1,busybox", "app=web"},
		},
		{
			name: "replicaset",
			obj: &appsv1.ReplicaSet{ObjectMeta: objectMeta("web-5d4", 8*24*time.Hour), Spec: appsv1.ReplicaSetSpec{
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
				Status: appsv1.ReplicaSetStatus{Replicas: 1, ReadyReplicas: 1}},
			columns: []string{"Name", "Desired", "Current", "Ready", "Age", "Containers", "Images", "Selector"},
			want:    []any{"web-5d4", int64(1), int64(1), int64(1), "8d", "", "", "app=web"},
		},
		{
			name:    "statefulset",
			obj:     &appsv1.StatefulSet{ObjectMeta: objectMeta("db", time.Hour), Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](0)}},
			columns: []string{"Name", "Ready", "Age", "Containers", "Images"},
			want:    []any{"db", "0/0", "60m", "", ""},
		},
		{
			name:    "configmap",
			obj:     &corev1.ConfigMap{ObjectMeta: objectMeta("cfg", time.Hour), Data: map[string]string{"a": "1"}, BinaryData: map[string][]byte{"b": nil}},
			columns: []string{"Name", "Data", "Age"},
			want:    []any{"cfg", int64(2), "60m"},
		},
		{
			name:    "priorityclass",
			obj:     &schedulingv1.PriorityClass{ObjectMeta: objectMeta("high", time.Hour), Value: 1000, PreemptionPolicy: ptr.To(corev1.PreemptNever)},
			columns: []string{"Name", "Value", "Global-Default", "Age", "PreemptionPolicy"},
			want:    []any{"high", int64(1000), false, "60m", "Never"},
		},
		{
			name: "poddisruptionbudget",
			obj: &policyv1.PodDisruptionBudget{ObjectMeta: objectMeta("pdb", time.Hour), Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromString("50%"))},
				Status: policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 2}},
			columns: []string{"Name", "Min Available", "Max Unavailable", "Allowed Disruptions", "Age"},
			want:    []any{"pdb", "50%", "N/A", int64(2), "60m"},
		},
		{
			name:    "default printer",
			obj:     &corev1.Secret{ObjectMeta: objectMeta("token", time.Hour)},
			columns: []string{"Name", "Created At"},
			want:    []any{"token", "2030-01-02T11:00:00Z"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tbl, row := convertOne(t, tt.obj)
			if got := columnNames(tbl); !slices.Equal(got, tt.columns) {
				t.Errorf("columns: got %v, want %v", got, tt.columns)
			}
			if len(tbl.ColumnDefinitions) != len(row.Cells) {
				t.Errorf("got %d cells for %d columns", len(row.Cells), len(tbl.ColumnDefinitions))
			}
			checkCells(t, row.Cells, tt.want)
			if tbl.ResourceVersion != "42" {
				t.Errorf("resourceVersion: got %q, want 42", tbl.ResourceVersion)
			}
		})
	}
}

func TestEveryPrinterHasOneCellPerColumn(t *testing.T) {
	objects := []runtime.Object{
		&corev1.Pod{}, &corev1.Node{}, &corev1.Namespace{}, &corev1.Event{}, &eventsv1.Event{}, &corev1.Service{},
		&corev1.ConfigMap{}, &appsv1.Deployment{}, &appsv1.ReplicaSet{}, &appsv1.StatefulSet{}, &coordinationv1.Lease{},
		&schedulingv1.PriorityClass{}, &policyv1.PodDisruptionBudget{}, &corev1.Secret{},
	}
	for _, obj := range objects {
		t.Run(reflect.TypeOf(obj).Elem().Name(), func(t *testing.T) {
			tbl, row := convertOne(t, obj)
			if len(row.Cells) != len(tbl.ColumnDefinitions) {
				t.Errorf("got %d cells for %d columns", len(row.Cells), len(tbl.ColumnDefinitions))
			}
		})
	}
}

func TestLists(t *testing.T) {
	list := &corev1.PodList{
		ListMeta: metav1.ListMeta{ResourceVersion: "77", Continue: "next", RemainingItemCount: ptr.To[int64](5)},
		Items: []corev1.Pod{
			{ObjectMeta: objectMeta("a", time.Minute)},
			{ObjectMeta: objectMeta("b", 2*time.Minute)},
		},
	}
	tbl, err := Convert(list, metav1.IncludeMetadata, now)
	if err != nil {
		t.Fatalf("Convert: %v", err)
	}
	if len(tbl.Rows) != 2 || tbl.Rows[0].Cells[0] != "a" || tbl.Rows[1].Cells[0] != "b" {
		t.Errorf("rows: got %d (%v), want a and b", len(tbl.Rows), tbl.Rows)
	}
	if tbl.ResourceVersion != "77" || tbl.Continue != "next" || tbl.RemainingItemCount == nil || *tbl.RemainingItemCount != 5 {
		t.Errorf("list metadata: got %+v, want resourceVersion 77, continue next, 5 remaining", tbl.ListMeta)
	}
	if tbl.Kind != "Table" || tbl.APIVersion != "meta.k8s.io/v1" {
		t.Errorf("type: got %s %s, want meta.k8s.io/v1 Table", tbl.APIVersion, tbl.Kind)
	}

	empty, err := Convert(&appsv1.DeploymentList{}, metav1.IncludeMetadata, now)
	if err != nil {
		t.Fatalf("Convert(empty list): %v", err)
	}
	if len(empty.ColumnDefinitions) != 8 || empty.Rows == nil || len(empty.Rows) != 0 {
		t.Errorf("empty list: got %d columns and rows %v, want the 8 deployment columns and no rows", len(empty.ColumnDefinitions), empty.Rows)
	}
	b, _ := json.Marshal(empty)
	var decoded map[string]any
	_ = json.Unmarshal(b, &decoded)
	if rows, ok := decoded["rows"].([]any); !ok || len(rows) != 0 {
		t.Errorf("empty list JSON: got rows %v, want []", decoded["rows"])
	}
}

func TestIncludeObject(t *testing.T) {
	pod := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: objectMeta("p", time.Minute)}
	pod.Labels = map[string]string{"app": "x"}
	bookmark := pod.DeepCopy()
	bookmark.Annotations = map[string]string{"k8s.io/initial-events-end": "true"}
	tests := []struct {
		name    string
		obj     runtime.Object
		include metav1.IncludeObjectPolicy
		want    string // the JSON of the row's object
	}{
		{"none", pod, metav1.IncludeNone, `null`},
		{"metadata", pod, metav1.IncludeMetadata, `{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"p","namespace":"default","resourceVersion":"42","creationTimestamp":"2030-01-02T11:59:00Z","labels":{"app":"x"}}}`},
		{"default is metadata", pod, "", `{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"p","namespace":"default","resourceVersion":"42","creationTimestamp":"2030-01-02T11:59:00Z","labels":{"app":"x"}}}`},
		{"object", pod, metav1.IncludeObject, `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","namespace":"default","resourceVersion":"42","creationTimestamp":"2030-01-02T11:59:00Z","labels":{"app":"x"}},"spec":{"containers":null},"status":{}}`},
		{"bookmark is metadata", bookmark, metav1.IncludeObject, `{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"p","namespace":"default","resourceVersion":"42","creationTimestamp":"2030-01-02T11:59:00Z","labels":{"app":"x"},"annotations":{"k8s.io/initial-events-end":"true"}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tbl, err := Convert(tt.obj, tt.include, now)
			if err != nil {
				t.Fatalf("Convert: %v", err)
			}
			got, err := json.Marshal(tbl.Rows[0].Object)
			if err != nil {
				t.Fatalf("encoding the row object: %v", err)
			}
			if string(got) != tt.want {
				t.Errorf("row object:\ngot  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name     string
		obj      runtime.Object
		include  metav1.IncludeObjectPolicy
		wantCode int32
	}{
		{"unknown includeObject", &corev1.Pod{}, "Everything", http.StatusBadRequest},
		{"no metadata", &metav1.Status{}, metav1.IncludeNone, http.StatusNotAcceptable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Convert(tt.obj, tt.include, now)
			var status apierrors.APIStatus
			if !errors.As(err, &status) || status.Status().Code != tt.wantCode {
				t.Errorf("got %v, want a %d status error", err, tt.wantCode)
			}
		})
	}
}

func TestTableDecodesLikeKubectl(t *testing.T) {
	list := &corev1.NodeList{Items: []corev1.Node{{ObjectMeta: objectMeta("n1", time.Hour)}}}
	tbl, err := Convert(list, metav1.IncludeMetadata, now)
	if err != nil {
		t.Fatalf("Convert: %v", err)
	}
	b, err := json.Marshal(tbl)
	if err != nil {
		t.Fatalf("encoding: %v", err)
	}
	var decoded metav1.Table
	if err := json.Unmarshal(b, &decoded); err != nil {
		t.Fatalf("decoding: %v", err)
	}
	if decoded.Rows[0].Cells[0] != "n1" || decoded.Rows[0].Cells[3] != "60m" {
		t.Errorf("cells: got %v, want n1 ... 60m", decoded.Rows[0].Cells)
	}
	var partial metav1.PartialObjectMetadata
	if err := json.Unmarshal(decoded.Rows[0].Object.Raw, &partial); err != nil || partial.Name != "n1" {
		t.Errorf("row object: got %s (%v), want the node's metadata", decoded.Rows[0].Object.Raw, err)
	}
}

func BenchmarkConvertPodList(b *testing.B) {
	list := &corev1.PodList{}
	for i := range 1000 {
		list.Items = append(list.Items, corev1.Pod{
			ObjectMeta: objectMeta("job-"+string(rune('a'+i%26)), time.Duration(i)*time.Second),
			Spec:       corev1.PodSpec{NodeName: "host", Containers: []corev1.Container{{Name: "main"}}},
			Status:     corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{running("main", true, 0)}},
		})
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Convert(list, metav1.IncludeMetadata, now); err != nil {
			b.Fatal(err)
		}
	}
}
