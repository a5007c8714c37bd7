package main

import (
	"bytes"
	"os"
	"testing"
)

// The committed manifest is what the generator writes with its defaults:
// Kueue's baseline scenario, 15,000 Jobs.
func TestCommittedManifestIsGenerated(t *testing.T) {
	want, err := os.ReadFile("../baseline.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := (scenario{cohorts: 5, queues: 6, scale: 1, nominalQuota: 20, borrowingLimit: 100}).write(&got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Error("examples/kueue/baseline.yaml is not what the generator writes: go run -C examples/kueue ./baseline > examples/kueue/baseline.yaml")
	}
	if n := bytes.Count(want, []byte(`batkube.io/repeat: "350"`)); n != 30 {
		t.Errorf("%d ClusterQueues with 350 small Jobs, want 30", n)
	}
}
