package simulation

import (
	"bufio"
	"errors"
	"fmt"
	"os"
)

// podsFile is the buffered file the broker writes _pods.csv to.
type podsFile struct {
	f *os.File
	*bufio.Writer
}

func createPodsFile(path string) (*podsFile, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("the pods' log: %w", err)
	}
	return &podsFile{f: f, Writer: bufio.NewWriterSize(f, 64<<10)}, nil
}

// Close flushes and closes the file; a nil *podsFile does nothing.
func (p *podsFile) Close() error {
	if p == nil {
		return nil
	}
	err := errors.Join(p.Flush(), p.f.Close())
	if err != nil {
		return fmt.Errorf("the pods' log %s: %w", p.f.Name(), err)
	}
	return nil
}
