package table

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Printers of the core group, after k8s.io/kubernetes/pkg/printers/internalversion.

var podPrinter = typed([]metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Ready", Type: "string", Description: "The aggregate readiness state of this pod for accepting traffic."},
	{Name: "Status", Type: "string", Description: "The aggregate status of the containers in this pod."},
	{Name: "Restarts", Type: "string", Description: "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted."},
	ageColumn,
	{Name: "IP", Type: "string", Priority: 1, Description: corev1.PodStatus{}.SwaggerDoc()["podIP"]},
	{Name: "Node", Type: "string", Priority: 1, Description: corev1.PodSpec{}.SwaggerDoc()["nodeName"]},
	{Name: "Nominated Node", Type: "string", Priority: 1, Description: corev1.PodStatus{}.SwaggerDoc()["nominatedNodeName"]},
	{Name: "Readiness Gates", Type: "string", Priority: 1, Description: corev1.PodSpec{}.SwaggerDoc()["readinessGates"]},
}, podRow)

// nodeUnreachablePodReason is the status reason of pods on a lost node.
const nodeUnreachablePodReason = "NodeLost"

func isRestartableInit(c *corev1.Container) bool {
	return c != nil && c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

func hasCondition(conds []corev1.PodCondition, t corev1.PodConditionType) (found, isTrue bool) {
	for _, c := range conds {
		if c.Type == t {
			return true, c.Status == corev1.ConditionTrue
		}
	}
	return false, false
}

// podStatus computes the READY, STATUS and RESTARTS cells the way kubectl
// always has: init containers first, then the containers from last to first.
func podStatus(pod *corev1.Pod, now time.Time) (ready, reason, restarts string) {
	restartCount, initRestarts := 0, 0
	total := len(pod.Spec.Containers)
	readyCount := 0
	var lastRestart, lastInitRestart metav1.Time

	reason = string(pod.Status.Phase)
	if pod.Status.Reason != "" {
		reason = pod.Status.Reason
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Reason == corev1.PodReasonSchedulingGated {
			reason = corev1.PodReasonSchedulingGated
		}
	}

	initContainers := make(map[string]*corev1.Container, len(pod.Spec.InitContainers))
	for i := range pod.Spec.InitContainers {
		initContainers[pod.Spec.InitContainers[i].Name] = &pod.Spec.InitContainers[i]
		if isRestartableInit(&pod.Spec.InitContainers[i]) {
			total++
		}
	}

	initializing := false
	for i, c := range pod.Status.InitContainerStatuses {
		restartCount += int(c.RestartCount)
		if t := c.LastTerminationState.Terminated; t != nil && lastRestart.Before(&t.FinishedAt) {
			lastRestart = t.FinishedAt
		}
		restartable := isRestartableInit(initContainers[c.Name])
		if restartable {
			initRestarts += int(c.RestartCount)
			if t := c.LastTerminationState.Terminated; t != nil && lastInitRestart.Before(&t.FinishedAt) {
				lastInitRestart = t.FinishedAt
			}
		}
		switch {
		case c.State.Terminated != nil && c.State.Terminated.ExitCode == 0:
			continue
		case restartable && c.Started != nil && *c.Started:
			if c.Ready {
				readyCount++
			}
			continue
		case c.State.Terminated != nil:
			switch t := c.State.Terminated; {
			case t.Reason != "":
				reason = "Init:" + t.Reason
			case t.Signal != 0:
				reason = fmt.Sprintf("Init:Signal:%d", t.Signal)
			default:
				reason = fmt.Sprintf("Init:ExitCode:%d", t.ExitCode)
			}
		case c.State.Waiting != nil && c.State.Waiting.Reason != "" && c.State.Waiting.Reason != "PodInitializing":
			reason = "Init:" + c.State.Waiting.Reason
		default:
			reason = fmt.Sprintf("Init:%d/%d", i, len(pod.Spec.InitContainers))
		}
		initializing = true
		break
	}

	if _, initialized := hasCondition(pod.Status.Conditions, corev1.PodInitialized); !initializing || initialized {
		restartCount, lastRestart = initRestarts, lastInitRestart
		hasRunning := false
		errorReason := ""
		for i := len(pod.Status.ContainerStatuses) - 1; i >= 0; i-- {
			c := pod.Status.ContainerStatuses[i]
			restartCount += int(c.RestartCount)
			if t := c.LastTerminationState.Terminated; t != nil && lastRestart.Before(&t.FinishedAt) {
				lastRestart = t.FinishedAt
			}
			switch {
			case c.State.Waiting != nil && c.State.Waiting.Reason != "":
				reason = c.State.Waiting.Reason
			case c.State.Terminated != nil:
				switch t := c.State.Terminated; {
				case t.Reason != "":
					reason = t.Reason
				case t.Signal != 0:
					reason = fmt.Sprintf("Signal:%d", t.Signal)
				default:
					reason = fmt.Sprintf("ExitCode:%d", t.ExitCode)
				}
				if c.State.Terminated.ExitCode != 0 {
					errorReason = reason
				}
			case c.Ready && c.State.Running != nil:
				hasRunning = true
				readyCount++
			}
		}
		// A pod whose containers are still running is not "Completed".
		if reason == "Completed" {
			_, podReady := hasCondition(pod.Status.Conditions, corev1.PodReady)
			switch {
			case hasRunning && podReady:
				reason = "Running"
			case errorReason != "":
				reason = errorReason
			case hasRunning:
				reason = "NotReady"
			}
		}
	}

	terminal := pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
	switch {
	case pod.DeletionTimestamp != nil && pod.Status.Reason == nodeUnreachablePodReason:
		reason = "Unknown"
	case pod.DeletionTimestamp != nil && !terminal:
		reason = "Terminating"
	}

	restarts = strconv.Itoa(restartCount)
	if restartCount != 0 && !lastRestart.IsZero() {
		restarts = fmt.Sprintf("%d (%s ago)", restartCount, age(lastRestart, now))
	}
	return fmt.Sprintf("%d/%d", readyCount, total), reason, restarts
}

func podRow(pod *corev1.Pod, now time.Time) metav1.TableRow {
	var row metav1.TableRow
	switch pod.Status.Phase {
	case corev1.PodSucceeded:
		row.Conditions = []metav1.TableRowCondition{{Type: metav1.RowCompleted, Status: metav1.ConditionTrue, Reason: string(corev1.PodSucceeded), Message: "The pod has completed successfully."}}
	case corev1.PodFailed:
		row.Conditions = []metav1.TableRowCondition{{Type: metav1.RowCompleted, Status: metav1.ConditionTrue, Reason: string(corev1.PodFailed), Message: "The pod failed."}}
	}
	ready, reason, restarts := podStatus(pod, now)

	ip := "<none>"
	if len(pod.Status.PodIPs) > 0 && pod.Status.PodIPs[0].IP != "" {
		ip = pod.Status.PodIPs[0].IP
	}
	readinessGates := "<none>"
	if n := len(pod.Spec.ReadinessGates); n > 0 {
		trueConditions := 0
		for _, g := range pod.Spec.ReadinessGates {
			if _, ok := hasCondition(pod.Status.Conditions, g.ConditionType); ok {
				trueConditions++
			}
		}
		readinessGates = fmt.Sprintf("%d/%d", trueConditions, n)
	}
	row.Cells = []any{
		pod.Name, ready, reason, restarts, age(pod.CreationTimestamp, now),
		ip, orNone(pod.Spec.NodeName), orNone(pod.Status.NominatedNodeName), readinessGates,
	}
	return row
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

func orUnknown(s string) string {
	if s == "" {
		return "<unknown>"
	}
	return s
}

var nodeInfoDoc = corev1.NodeSystemInfo{}.SwaggerDoc()

var nodePrinter = typed([]metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Status", Type: "string", Description: "The status of the node"},
	{Name: "Roles", Type: "string", Description: "The roles of the node"},
	ageColumn,
	{Name: "Version", Type: "string", Description: nodeInfoDoc["kubeletVersion"]},
	{Name: "Internal-IP", Type: "string", Priority: 1, Description: corev1.NodeStatus{}.SwaggerDoc()["addresses"]},
	{Name: "External-IP", Type: "string", Priority: 1, Description: corev1.NodeStatus{}.SwaggerDoc()["addresses"]},
	{Name: "OS-Image", Type: "string", Priority: 1, Description: nodeInfoDoc["osImage"]},
	{Name: "Kernel-Version", Type: "string", Priority: 1, Description: nodeInfoDoc["kernelVersion"]},
	{Name: "Container-Runtime", Type: "string", Priority: 1, Description: nodeInfoDoc["containerRuntimeVersion"]},
}, nodeRow)

// Node role labels.
const (
	labelNodeRolePrefix = "node-role.kubernetes.io/"
	labelNodeRole       = "kubernetes.io/role"
)

func nodeRow(node *corev1.Node, now time.Time) metav1.TableRow {
	var status []string
	for _, c := range node.Status.Conditions {
		if c.Type != corev1.NodeReady {
			continue
		}
		if c.Status == corev1.ConditionTrue {
			status = append(status, string(c.Type))
		} else {
			status = append(status, "Not"+string(c.Type))
		}
		break
	}
	if len(status) == 0 {
		status = append(status, "Unknown")
	}
	if node.Spec.Unschedulable {
		status = append(status, "SchedulingDisabled")
	}

	roleSet := map[string]bool{}
	for k, v := range node.Labels {
		switch {
		case strings.HasPrefix(k, labelNodeRolePrefix):
			if role := strings.TrimPrefix(k, labelNodeRolePrefix); role != "" {
				roleSet[role] = true
			}
		case k == labelNodeRole && v != "":
			roleSet[v] = true
		}
	}
	roles := make([]string, 0, len(roleSet))
	for r := range roleSet {
		roles = append(roles, r)
	}
	sort.Strings(roles)

	info := node.Status.NodeInfo
	kernel := orUnknown(info.KernelVersion)
	if info.Architecture != "" {
		kernel += " (" + info.Architecture + ")"
	}
	return metav1.TableRow{Cells: []any{
		node.Name, strings.Join(status, ","), orNone(strings.Join(roles, ",")), age(node.CreationTimestamp, now), info.KubeletVersion,
		nodeAddress(node, corev1.NodeInternalIP), nodeAddress(node, corev1.NodeExternalIP),
		orUnknown(info.OSImage), kernel, orUnknown(info.ContainerRuntimeVersion),
	}}
}

func nodeAddress(node *corev1.Node, t corev1.NodeAddressType) string {
	for _, a := range node.Status.Addresses {
		if a.Type == t {
			return a.Address
		}
	}
	return "<none>"
}

var namespacePrinter = typed([]metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Status", Type: "string", Description: "The status of the namespace"},
	ageColumn,
}, func(ns *corev1.Namespace, now time.Time) metav1.TableRow {
	return metav1.TableRow{Cells: []any{ns.Name, string(ns.Status.Phase), age(ns.CreationTimestamp, now)}}
})

var serviceSpecDoc = corev1.ServiceSpec{}.SwaggerDoc()

var servicePrinter = typed([]metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Type", Type: "string", Description: serviceSpecDoc["type"]},
	{Name: "Cluster-IP", Type: "string", Description: serviceSpecDoc["clusterIP"]},
	{Name: "External-IP", Type: "string", Description: serviceSpecDoc["externalIPs"]},
	{Name: "Port(s)", Type: "string", Description: serviceSpecDoc["ports"]},
	ageColumn,
	{Name: "Selector", Type: "string", Priority: 1, Description: serviceSpecDoc["selector"]},
}, serviceRow)

func serviceRow(svc *corev1.Service, now time.Time) metav1.TableRow {
	clusterIP := "<none>"
	if len(svc.Spec.ClusterIPs) > 0 {
		clusterIP = svc.Spec.ClusterIPs[0]
	}
	ports := make([]string, len(svc.Spec.Ports))
	for i, p := range svc.Spec.Ports {
		ports[i] = fmt.Sprintf("%d/%s", p.Port, p.Protocol)
		if p.NodePort > 0 {
			ports[i] = fmt.Sprintf("%d:%d/%s", p.Port, p.NodePort, p.Protocol)
		}
	}
	return metav1.TableRow{Cells: []any{
		svc.Name, string(svc.Spec.Type), clusterIP, serviceExternalIP(svc), orNone(strings.Join(ports, ",")),
		age(svc.CreationTimestamp, now), labels.FormatLabels(svc.Spec.Selector),
	}}
}

// serviceExternalIP is the EXTERNAL-IP cell (wide: load balancer addresses are
// not shortened).
func serviceExternalIP(svc *corev1.Service) string {
	switch svc.Spec.Type {
	case corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort:
		if len(svc.Spec.ExternalIPs) > 0 {
			return strings.Join(svc.Spec.ExternalIPs, ",")
		}
		return "<none>"
	case corev1.ServiceTypeLoadBalancer:
		seen := map[string]bool{}
		var lb []string
		for _, in := range svc.Status.LoadBalancer.Ingress {
			addr := in.IP
			if addr == "" {
				addr = in.Hostname
			}
			if addr != "" && !seen[addr] {
				seen[addr] = true
				lb = append(lb, addr)
			}
		}
		sort.Strings(lb)
		if all := append(lb, svc.Spec.ExternalIPs...); len(all) > 0 {
			return strings.Join(all, ",")
		}
		return "<pending>"
	case corev1.ServiceTypeExternalName:
		return svc.Spec.ExternalName
	}
	return "<unknown>"
}

var configMapPrinter = typed([]metav1.TableColumnDefinition{
	nameColumn,
	{Name: "Data", Type: "string", Description: corev1.ConfigMap{}.SwaggerDoc()["data"]},
	ageColumn,
}, func(cm *corev1.ConfigMap, now time.Time) metav1.TableRow {
	return metav1.TableRow{Cells: []any{cm.Name, int64(len(cm.Data) + len(cm.BinaryData)), age(cm.CreationTimestamp, now)}}
})
