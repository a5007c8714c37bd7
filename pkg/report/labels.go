package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// campaignSettingsFile is the file batkube-campaign writes into each run's
// folder (pkg/campaign's SettingsFile): the run's scheduler, platform,
// workload and repetition.
const campaignSettingsFile = "run.json"

// Origin is what a campaign wrote of a run into its folder: the names of
// the run's setting, the campaign's own, and its repetition.
type Origin struct {
	Scheduler, Platform, Workload string
	Repetition                    int
}

// campaignRun is the part of a campaign's run.json that names the run.
type campaignRun struct {
	Scheduler struct {
		Name string `json:"name"`
	} `json:"scheduler"`
	Platform   json.RawMessage `json:"platform"`
	Workload   json.RawMessage `json:"workload"`
	Repetition int             `json:"repetition"`
}

// readOrigin reads the run's run.json, if a campaign wrote one.
func (r *Run) readOrigin() error {
	path := filepath.Join(r.Dir, campaignSettingsFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	var c campaignRun
	if err := json.Unmarshal(data, &c); err != nil {
		return fmt.Errorf("report: %s: %w", path, err)
	}
	if c.Scheduler.Name == "" {
		return nil // not a campaign's
	}
	platform, err := inputName(c.Platform)
	if err != nil {
		return fmt.Errorf("report: %s: platform: %w", path, err)
	}
	workload, err := inputName(c.Workload)
	if err != nil {
		return fmt.Errorf("report: %s: workload: %w", path, err)
	}
	r.Origin = &Origin{Scheduler: c.Scheduler.Name, Platform: platform, Workload: workload, Repetition: c.Repetition}
	return nil
}

// inputName is the name of a campaign's platform or workload entry, as the
// campaign names it: its name, else its files' base names without
// extension joined by "+". The entry is a path, a list of paths or
// {name, files}.
func inputName(raw json.RawMessage) (string, error) {
	if len(raw) == 0 {
		return "", nil
	}
	var entry struct {
		Name  string   `json:"name"`
		Files []string `json:"files"`
	}
	var one string
	switch {
	case json.Unmarshal(raw, &one) == nil:
		entry.Files = []string{one}
	case json.Unmarshal(raw, &entry.Files) == nil:
	default:
		if err := json.Unmarshal(raw, &entry); err != nil {
			return "", fmt.Errorf("want a path, a list of paths or {name, files}: %w", err)
		}
	}
	if entry.Name != "" {
		return entry.Name, nil
	}
	names := make([]string, len(entry.Files))
	for i, f := range entry.Files {
		base := filepath.Base(f)
		names[i] = strings.TrimSuffix(base, filepath.Ext(base))
	}
	return strings.Join(names, "+"), nil
}

// labelRuns gives every run without a label a short one, unique among the
// runs: a campaign's run is named by its scheduler's name in the campaign,
// with its platform and workload when the runs differ in them, and its
// repetition when that is what tells it apart; another run by its folder's
// name without the "--"-separated parts every such run's name shares.
func labelRuns(runs []*Run) {
	fromCampaign, others := splitByOrigin(runs)
	labels := campaignLabels(fromCampaign)
	for r, l := range folderLabels(others) {
		labels[r] = l
	}
	for _, r := range runs {
		if r.Label == "" {
			r.Label = labels[r]
		}
	}
	makeLabelsUnique(runs)
}

// splitByOrigin sorts the unlabelled runs into those of a campaign and the
// others.
func splitByOrigin(runs []*Run) (fromCampaign, others []*Run) {
	for _, r := range runs {
		switch {
		case r.Label != "":
		case r.Origin != nil:
			fromCampaign = append(fromCampaign, r)
		default:
			others = append(others, r)
		}
	}
	return fromCampaign, others
}

// campaignLabels labels runs of campaigns by their setting's names.
func campaignLabels(runs []*Run) map[*Run]string {
	platforms, workloads := map[string]bool{}, map[string]bool{}
	for _, r := range runs {
		platforms[r.Origin.Platform] = true
		workloads[r.Origin.Workload] = true
	}
	labels := map[*Run]string{}
	count := map[string]int{}
	for _, r := range runs {
		l := r.Origin.Scheduler
		if len(platforms) > 1 {
			l += " · " + r.Origin.Platform
		}
		if len(workloads) > 1 {
			l += " · " + r.Origin.Workload
		}
		labels[r] = l
		count[l]++
	}
	for r, l := range labels {
		if count[l] > 1 {
			labels[r] = l + " #" + strconv.Itoa(r.Origin.Repetition)
		}
	}
	return labels
}

// folderLabels labels runs by their names (their folders' names) without
// the "--"-separated parts they all share (a campaign's folder names,
// scheduler--platform--workload--repetition, lose the parts that do not
// vary). A single run, or runs whose names differ in their number of
// parts, keep their whole names.
func folderLabels(runs []*Run) map[*Run]string {
	labels := map[*Run]string{}
	parts := make([][]string, len(runs))
	for i, r := range runs {
		parts[i] = strings.Split(r.Name, "--")
		labels[r] = r.Name
	}
	if len(runs) < 2 {
		return labels
	}
	for _, p := range parts[1:] {
		if len(p) != len(parts[0]) {
			return labels
		}
	}
	for i, r := range runs {
		var kept []string
		for j, part := range parts[i] {
			if !sharedPart(parts, j) {
				kept = append(kept, part)
			}
		}
		if len(kept) > 0 {
			labels[r] = strings.Join(kept, "--")
		}
	}
	return labels
}

// sharedPart says whether every name has the same j-th part.
func sharedPart(parts [][]string, j int) bool {
	for _, p := range parts[1:] {
		if p[j] != parts[0][j] {
			return false
		}
	}
	return true
}

// makeLabelsUnique suffixes " (2)", " (3)"... to labels already taken.
func makeLabelsUnique(runs []*Run) {
	taken := map[string]bool{}
	for _, r := range runs {
		l := r.Label
		for n := 2; taken[l]; n++ {
			l = fmt.Sprintf("%s (%d)", r.Label, n)
		}
		r.Label = l
		taken[l] = true
	}
}
