package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/batkube/batkube/pkg/apiserver"
)

// BenchmarkServeKueueWorkload: what the server spends on one Kueue
// Workload's life as Kueue v0.17.0 writes it (its CustomResourceDefinition
// as make upstream leaves it in bin/): the job controller's create, then
// the scheduler's and the job controller's server-side applies of its
// status (quota reserved, admitted, finished), each validated against the
// definition's schema and CEL rules and tracked in its managed fields. It
// is the request that costs the server most on a Kueue run (issue 31).
func BenchmarkServeKueueWorkload(b *testing.B) {
	def := kueueWorkloadDefinition(b)
	srv := quietServer(b)
	if _, err := srv.API.Create(context.Background(), apiextensionsv1.SchemeGroupVersion.WithResource("customresourcedefinitions"), def); err != nil {
		b.Fatal(err)
	}
	h := srv.Handler()
	const base = "/apis/kueue.x-k8s.io/v1beta2/namespaces/default/workloads"
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		name := fmt.Sprintf("job-j%d-1a2b3", i)
		serve(b, h, http.MethodPost, base, "application/json", []byte(fmt.Sprintf(kueueWorkload, name, i)), http.StatusCreated)
		for k, status := range kueueStatuses {
			url := base + "/" + name + "/status?fieldManager=" + kueueOwners[k] + "&force=true"
			serve(b, h, http.MethodPatch, url, "application/apply-patch+yaml", []byte(fmt.Sprintf(kueueApply, name, i, status)), http.StatusOK)
		}
		i++
	}
}

// kueueWorkloadDefinition reads the Workload definition from Kueue's
// manifests in bin/ (make upstream), or skips.
func kueueWorkloadDefinition(b *testing.B) *apiextensionsv1.CustomResourceDefinition {
	path := filepath.Join("..", "..", "bin", "kueue-manifests.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		b.Skipf("no Kueue manifests (make upstream): %v", err)
	}
	docs, err := apiserver.ManifestDocuments(data)
	if err != nil {
		b.Fatal(err)
	}
	for _, doc := range docs {
		def := &apiextensionsv1.CustomResourceDefinition{}
		if err := json.Unmarshal(doc, def); err == nil && def.Kind == "CustomResourceDefinition" && def.Name == "workloads.kueue.x-k8s.io" {
			def.Spec.Conversion = nil // no webhook to convert with here; v1beta2 is the storage version
			return def
		}
	}
	b.Fatalf("%s has no Workload definition", path)
	return nil
}

// kueueWorkload is a Workload as Kueue's job controller creates it for a
// batch Job of one pod (name, UID suffix).
const kueueWorkload = `{"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"Workload","metadata":{"name":%[1]q,"namespace":"default",
"labels":{"kueue.x-k8s.io/job-uid":"00000000-0000-0000-0000-%012[2]d"},"finalizers":["kueue.x-k8s.io/resource-in-use"],
"ownerReferences":[{"apiVersion":"batch/v1","kind":"Job","name":"j","uid":"00000000-0000-0000-0000-%012[2]d","controller":true,"blockOwnerDeletion":true}]},
"spec":{"active":true,"queueName":"lq-0-cohort-0","priority":50,"priorityClassRef":{"group":"kueue.x-k8s.io","kind":"WorkloadPriorityClass","name":"small"},
"podSets":[{"name":"main","count":1,"template":{"metadata":{"labels":{"kueue.x-k8s.io/queue-name":"lq-0-cohort-0"}},
"spec":{"restartPolicy":"Never","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst","schedulerName":"default-scheduler",
"containers":[{"name":"job","image":"registry.k8s.io/pause:3.10","resources":{"requests":{"cpu":"1"}},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File","imagePullPolicy":"IfNotPresent"}]}}}]}}`

// kueueApply is the body of Kueue's status apply (name, UID suffix,
// status).
const kueueApply = `{"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"Workload","metadata":{"name":%[1]q,"namespace":"default","generation":1,
"labels":{"kueue.x-k8s.io/job-uid":"00000000-0000-0000-0000-%012[2]d"}},"status":%[3]s}`

var kueueOwners = []string{"kueue-admission", "kueue-admission", "kueue-job-controller-Finished"}

var kueueStatuses = []string{
	`{"conditions":[` + quotaReserved + `],"admission":` + admission + `,"resourceRequests":[{"name":"main","resources":{"cpu":"1"}}],
"schedulingStats":{}}`,
	`{"conditions":[` + quotaReserved + `,` + admitted + `],"admission":` + admission + `,"resourceRequests":[{"name":"main","resources":{"cpu":"1"}}]}`,
	`{"conditions":[{"type":"Finished","status":"True","reason":"Succeeded","message":"Job finished successfully","lastTransitionTime":"2026-01-01T00:00:09Z","observedGeneration":1}]}`,
}

const (
	quotaReserved = `{"type":"QuotaReserved","status":"True","reason":"QuotaReserved","message":"Quota reserved in ClusterQueue cq-0-0-cohort-0",
"lastTransitionTime":"2026-01-01T00:00:01Z","observedGeneration":1}`
	admitted = `{"type":"Admitted","status":"True","reason":"Admitted","message":"The workload is admitted","lastTransitionTime":"2026-01-01T00:00:01Z",
"observedGeneration":1}`
	admission = `{"clusterQueue":"cq-0-0-cohort-0","podSetAssignments":[{"name":"main","flavors":{"cpu":"default-flavor"},"resourceUsage":{"cpu":"1"},"count":1}]}`
)
