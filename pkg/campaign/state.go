package campaign

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/batkube/batkube/pkg/launch"
)

// Files of a run's folder that tell its state.
const (
	// SettingsFile holds the settings the run was started with.
	SettingsFile = "run.json"
	// SummaryFile is launch's summary, written last and atomically.
	SummaryFile = "summary.json"
)

// State is what a run's folder says of it.
type State int

const (
	// NotStarted: no folder.
	NotStarted State = iota
	// Unfinished: a folder without a summary — the run was interrupted
	// (or runs right now elsewhere).
	Unfinished
	// Failed: the run ended and its summary says it failed.
	Failed
	// Changed: a finished run, started with other settings than the
	// campaign's (the file changed since).
	Changed
	// Finished: the run ended as it should, with the campaign's settings.
	Finished
)

func (s State) String() string {
	switch s {
	case NotStarted:
		return "not started"
	case Unfinished:
		return "unfinished"
	case Failed:
		return "failed"
	case Changed:
		return "finished with other settings"
	case Finished:
		return "finished"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// Inspect tells the state of run r's folder in out, and gives its summary
// when it has one. Only a Finished run is kept; any other is run again
// from an empty folder.
func Inspect(r Run, out string) (State, *launch.Summary, error) {
	dir := r.Dir(out)
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return NotStarted, nil, nil
	} else if err != nil {
		return NotStarted, nil, fmt.Errorf("campaign: %w", err)
	}
	data, err := os.ReadFile(filepath.Join(dir, SummaryFile))
	if errors.Is(err, fs.ErrNotExist) {
		return Unfinished, nil, nil
	} else if err != nil {
		return NotStarted, nil, fmt.Errorf("campaign: %w", err)
	}
	var sum launch.Summary
	if err := json.Unmarshal(data, &sum); err != nil {
		return Unfinished, nil, nil // not launch's: a summary is written whole
	}
	if sum.Status != launch.StatusSucceeded {
		return Failed, &sum, nil
	}
	if _, err := os.Stat(filepath.Join(dir, "_jobs.csv")); err != nil {
		return Unfinished, &sum, nil
	}
	want, err := r.Settings()
	if err != nil {
		return NotStarted, nil, err
	}
	if got, err := os.ReadFile(filepath.Join(dir, SettingsFile)); err != nil || !bytes.Equal(got, want) {
		return Changed, &sum, nil
	}
	return Finished, &sum, nil
}

// prepare empties the run's folder and writes its settings: the run starts
// from scratch.
func prepare(r Run, out string) error {
	dir := r.Dir(out)
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("campaign: emptying %s: %w", dir, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("campaign: %w", err)
	}
	settings, err := r.Settings()
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, SettingsFile), settings, 0o644); err != nil {
		return fmt.Errorf("campaign: %w", err)
	}
	return nil
}
