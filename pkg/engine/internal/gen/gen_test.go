package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestCommittedFilesAreUpToDate checks that the committed example files are
// what the generator writes (run `go run ./pkg/engine/internal/gen -out
// examples` from the repository root after changing it).
func TestCommittedFilesAreUpToDate(t *testing.T) {
	for name, want := range files() {
		t.Run(name, func(t *testing.T) {
			got, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "examples", name))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("examples/%s differs from the generator's output (%d bytes, want %d): regenerate it", name, len(got), len(want))
			}
			if len(got) > 1<<20 {
				t.Errorf("examples/%s is %d bytes, want < 1 MiB", name, len(got))
			}
		})
	}
}

func TestGeneratorIsDeterministic(t *testing.T) {
	a, b := files(), files()
	for name := range a {
		if !bytes.Equal(a[name], b[name]) {
			t.Errorf("%s: two runs of the generator differ", name)
		}
	}
}
