package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteWithKeepsTheOldFileOnError: a write that fails leaves the old
// content and no temporary file; one that succeeds replaces it, 0644.
func TestWriteWithKeepsTheOldFileOnError(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := Write(path, []byte("old")); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := WriteWith(path, func(w io.Writer) error {
		io.WriteString(w, "half")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("error %v, want boom", err)
	}
	if data, _ := os.ReadFile(path); string(data) != "old" {
		t.Errorf("after a failed write: %q, want the old content", data)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d files left, want 1 (no temporary file)", len(entries))
	}
	if err := Write(path, []byte("new")); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(path)
	if data, _ := os.ReadFile(path); string(data) != "new" || st.Mode().Perm() != 0o644 {
		t.Errorf("after a write: %q mode %v, want \"new\" 0644", data, st.Mode().Perm())
	}
}
