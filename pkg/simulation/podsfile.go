package simulation

import (
	"bufio"
	"errors"
	"fmt"
	"os"
)

// outputFile is a buffered file the broker writes a log to (_pods.csv,
// _controllers.csv).
type outputFile struct {
	what string
	f    *os.File
	*bufio.Writer
}

func createOutputFile(path, what string) (*outputFile, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return &outputFile{what: what, f: f, Writer: bufio.NewWriterSize(f, 64<<10)}, nil
}

// Close flushes and closes the file; a nil *outputFile does nothing.
func (p *outputFile) Close() error {
	if p == nil {
		return nil
	}
	err := errors.Join(p.Flush(), p.f.Close())
	if err != nil {
		return fmt.Errorf("%s %s: %w", p.what, p.f.Name(), err)
	}
	return nil
}

// outputFiles are the run's log files, closed together.
type outputFiles []*outputFile

// Close closes every file.
func (fs outputFiles) Close() error {
	var errs []error
	for _, f := range fs {
		errs = append(errs, f.Close())
	}
	return errors.Join(errs...)
}
