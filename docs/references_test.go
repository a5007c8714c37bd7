package docs

// What the docs cite of the code, resolved against the code as it is.
//
// The docs are README.md and docs/*.md. Their references are read from
// their code — inline `spans` and the lines of ``` fenced blocks, split
// into words at spaces, quotes, brackets, parentheses and , = | ; & — and
// from their links. A word is recognised as a reference only by one of the
// shapes below, so that a word that is none is never checked:
//
//   - A repository path: a word with a '/' whose first element is a folder
//     at the repository's root (cmd/, pkg/, examples/, docs/, .ci/...;
//     "./pkg/e2e/" too): the file or folder must exist, from the root;
//     "x/..." names the folder x; a path with '*' or '?' must match a file.
//     Not checked: the folders git ignores, which a build or a run writes
//     (out/, bin/, .build/); absolute paths (/tmp/kept, /metrics); URLs;
//     words whose first element is no root folder (OUT/..., DIR/...,
//     ../shared/..., batkube.io/host, k8s.io/utils/clock, simtime/timerq);
//     placeholders: a path holding < > { } $ or …, or an element whose
//     part before its first dot is in capitals (PLATFORM, WORKLOAD, FILE,
//     DIR, NAME.objects.yaml; not README.md and the like).
//   - A Go file's name: a word x.go without '/' (events.go, swagger.go):
//     some Go file of the repository must have that name.
//   - A test, benchmark or fuzz target: a word TestX, BenchmarkX or FuzzX,
//     X starting with a capital, a digit or '_' (a "/sub" after it and the
//     anchors ^ $ of a -run pattern are dropped; a word with other pattern
//     characters is none): some _test.go file must declare that func.
//   - A package-qualified identifier: a word pkg.Name or pkg.Name.Member,
//     where pkg is the last element of the path of a Go package of the
//     repository (the main module's or an example's module) and Name
//     starts with a capital — so that output files (server.log,
//     report.html) and API groups (events.k8s.io) are never taken for one;
//     unexported top-level names are therefore not recognised, unexported
//     members are. Some package named pkg must declare Name at top level,
//     and Member must be a field or method of the type Name, its own or
//     promoted from an embedded type (or from the type Name is defined
//     from). Only the first member of a longer chain is checked; a member
//     of a variable, or of a type embedding another module's type, is taken
//     on trust. metav1.Status, time.Now: no package of the repository.
//   - A symbol of a named package or file: a span naming a package's
//     folder or one of its Go files, then "'s " and a span Name or
//     Name.Member (`pkg/settle/kubescheduler`'s `Options.WatchStart`,
//     `pkg/apiserver/pods.go`'s `Server.Bind`, `pkg/broker/run.go`'s
//     `run.handle`; after a folder, Name must start with a capital, so
//     that `examples/kueue`'s `compare.yaml` is none): resolved as above
//     in that package only, and, for a file, declared in that file (a
//     member: its method, or its type's field).
//   - A make target: each word after "make" as a command, up to the end
//     of the command (# ; & | ) \ or the end of the span or line), but for
//     flags (and the argument of -C -f -I -o -W), VAR=value and numbers,
//     stopping at the first word that cannot be a target: it must be a
//     target of the Makefile or of examples/upstream.mk.
//   - A link [text](target) or image outside code: a relative target must
//     exist, from the doc's folder, and its #anchor must be a heading of
//     the page (GitHub's anchors); URLs and targets outside the repository
//     are not checked.
//
// Everything else is not a reference and is left alone: flags (--kueue),
// command lines, outputs (_jobs.csv), Kubernetes fields (spec.podSets),
// bare identifiers (SetPodStatus, NodeResourcesFit), paths in plain prose.

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"unicode"
)

// TestDocsReferencesResolve: every path, test, Go symbol, make target and
// link that README.md and docs/*.md cite exists in the code as it is.
func TestDocsReferencesResolve(t *testing.T) {
	r := newResolver(t, "..")
	pages, err := filepath.Glob("*.md")
	if err != nil || len(pages) == 0 {
		t.Fatalf("no pages in docs/ (%v)", err)
	}
	cited := 0
	for _, page := range append(pages, "../README.md") {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.ToSlash(filepath.Join("docs", page))
		problems, n := r.check(name, string(data))
		cited += n
		for _, p := range problems {
			t.Errorf("%s", p)
		}
	}
	if cited < 200 {
		t.Errorf("the docs cite %d references: the reading of the docs went wrong", cited)
	}
}

// TestResolverFindsStaleReferences: a page citing what does not exist gets
// one problem per stale reference, at its line, and none for the words
// that are no references or that resolve.
func TestResolverFindsStaleReferences(t *testing.T) {
	const page = "# A page\n" +
		"See `pkg/broker/settle.go` and `pkg/broker/no-such-file.go`,\n" + // 2
		"`simclock.Pause`, `simclock.NoSuchThing`, `store.Watcher.NoSuchMember`,\n" + // 3
		"`broker.Options.AwaitKueue`, `TestResolverFindsStaleReferences`, `TestNoSuchTest`,\n" + // 4
		"`make test`, `make no-such-target`, [docs](layout.md#tests), [gone](gone.md),\n" + // 5
		"[a section](#no-such-section), `pkg/settle/kubescheduler`'s `Options.NoSuchOption`.\n" + // 6
		"`pkg/apiserver/pods.go`'s `Server.Bind`, `pkg/apiserver/write.go`'s `Server.Bind`, `events.go`, `no_such.go`.\n" + // 7
		"Not references: `--kueue`, `spec.podSets`, `_jobs.csv`, `server.log`, `out/run/x.csv`,\n" + // 8
		"`examples/workloads/FILE.json`, `OUT/NAME.objects.yaml`, `/tmp/kept`, `k8s.io/utils/clock`,\n" + // 9
		"`examples/schedulers/<name>/`, [Batsim](https://batsim.readthedocs.io), `metav1.Status`, `SetPodStatus`.\n" + // 10
		"```sh\n" +
		"bin/batkube-run -p examples/platforms/platform_4.xml -w examples/workloads/no-such.json\n" + // 12
		"make run PLATFORM=x   # and make no-such-target in a comment\n" + // 13
		"```\n"
	r := newResolver(t, "..")
	var got []string
	problems, _ := r.check("docs/fixture.md", page)
	for _, p := range problems {
		got = append(got, fmt.Sprintf("%d %s", p.line, p.ref))
	}
	want := []string{
		"2 pkg/broker/no-such-file.go",
		"3 simclock.NoSuchThing",
		"3 store.Watcher.NoSuchMember",
		"4 TestNoSuchTest",
		"5 make no-such-target",
		"5 gone.md",
		"6 #no-such-section",
		"6 pkg/settle/kubescheduler's Options.NoSuchOption",
		"7 pkg/apiserver/write.go's Server.Bind",
		"7 no_such.go",
		"12 examples/workloads/no-such.json",
	}
	if !slices.Equal(got, want) {
		t.Errorf("problems found:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// refKind is what a citation names.
type refKind int

const (
	refPath   refKind = iota // a file or folder, from the repository's root
	refLink                  // a link's target, from the doc's folder
	refTest                  // a Test, Benchmark or Fuzz func
	refSymbol                // pkg.Name[.Member]
	refScoped                // Name[.Member] in the package folder or Go file scope
	refMake                  // a make target
	refGoFile                // a Go file's name, in some folder
)

// citation is one reference a doc makes.
type citation struct {
	offset int // in the doc: citations are reported in order
	line   int // 1-based
	kind   refKind
	text   string // as resolved: the path, the symbol, the target
	scope  string // refScoped: the package's folder, or a file of it
}

// problem is a citation that does not resolve.
type problem struct {
	doc  string
	line int
	ref  string // the citation as the doc writes it
	err  error
}

func (p problem) String() string { return fmt.Sprintf("%s:%d: %s: %v", p.doc, p.line, p.ref, p.err) }

// cited is how a message names a citation.
func (c citation) cited() string {
	switch c.kind {
	case refMake:
		return "make " + c.text
	case refScoped:
		return c.scope + "'s " + c.text
	}
	return c.text
}

// ---- Reading a doc: its code and its links ----

// codeSpan is an inline code span or a line of a fenced code block.
type codeSpan struct {
	line       int // 1-based
	start, end int // the span's text in the doc (without its backquotes)
	text       string
	fenced     bool
}

var fenceLine = regexp.MustCompile("^ {0,3}(```|~~~)")

// scanMarkdown returns a doc's code spans, in order, and its prose: the doc
// with its code blanked out (newlines kept, so that offsets and lines hold).
func scanMarkdown(doc string) (spans []codeSpan, prose string) {
	blank := []byte(doc)
	offset, inFence := 0, false
	for i, line := range strings.SplitAfter(doc, "\n") {
		fence := fenceLine.MatchString(line)
		if fence {
			inFence = !inFence
		} else if inFence {
			spans = append(spans, codeSpan{line: i + 1, start: offset, end: offset + len(line), text: strings.TrimRight(line, "\n"), fenced: true})
		}
		if fence || inFence {
			blankOut(blank, offset, offset+len(line))
		}
		offset += len(line)
	}
	inline := inlineSpans(string(blank))
	for _, s := range inline {
		blankOut(blank, s.start-1, s.end+1)
	}
	spans = append(spans, inline...)
	sort.Slice(spans, func(i, j int) bool { return spans[i].start < spans[j].start })
	return spans, string(blank)
}

// blankOut replaces text[from:to] with spaces, newlines kept.
func blankOut(text []byte, from, to int) {
	for i := max(from, 0); i < min(to, len(text)); i++ {
		if text[i] != '\n' {
			text[i] = ' '
		}
	}
}

// inlineSpans finds `code` spans: a run of backquotes up to the next run
// of as many, within a paragraph (no blank line between).
func inlineSpans(text string) []codeSpan {
	var spans []codeSpan
	for i := 0; i < len(text); {
		if text[i] != '`' {
			i++
			continue
		}
		n := backquoteRun(text, i)
		end, ok := closingRun(text, i+n, n)
		if !ok {
			i += n
			continue
		}
		body := text[i+n : end]
		spans = append(spans, codeSpan{line: lineOf(text, i), start: i + n, end: end, text: strings.ReplaceAll(body, "\n", " ")})
		i = end + n
	}
	return spans
}

// backquoteRun is the length of the run of backquotes at text[i].
func backquoteRun(text string, i int) int {
	n := 0
	for i+n < len(text) && text[i+n] == '`' {
		n++
	}
	return n
}

// closingRun finds the run of exactly n backquotes that closes a span
// opened before from, within its paragraph.
func closingRun(text string, from, n int) (int, bool) {
	paragraphEnd := strings.Index(text[from:], "\n\n")
	if paragraphEnd < 0 {
		paragraphEnd = len(text) - from
	}
	for i := from; i < from+paragraphEnd; {
		if text[i] != '`' {
			i++
			continue
		}
		m := backquoteRun(text, i)
		if m == n {
			return i, true
		}
		i += m
	}
	return 0, false
}

// lineOf is the 1-based line of offset i.
func lineOf(text string, i int) int { return strings.Count(text[:i], "\n") + 1 }

// mdLink is a Markdown link or image: its target, the anchor included.
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// ---- Recognising references ----

var (
	testName   = regexp.MustCompile(`^(?:Test|Benchmark|Fuzz)[A-Z0-9_][A-Za-z0-9_]*$`)
	qualified  = regexp.MustCompile(`^([a-z][a-z0-9]*)\.([A-Z][A-Za-z0-9_]*)((?:\.[A-Za-z_][A-Za-z0-9_]*)*)$`)
	memberPath = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)?$`)
	// makeCall is "make" as a command and its arguments, up to the end of
	// the command (';', '&', '|', ')', '\\').
	makeCall     = regexp.MustCompile(`(?:^|[\s;&|(])make((?:[ \t]+[^\s;&|)\\]+)*)`)
	shellComment = regexp.MustCompile(`(?:^|\s)#.*$`)
	makeTarget   = regexp.MustCompile(`^[a-z][a-z0-9_.-]*$`)
	goFileName   = regexp.MustCompile(`^[A-Za-z0-9_.-]+\.go$`)
)

// citations reads every reference a doc makes (see the top of this file).
// Symbols are recognised here only by their shape; the resolver decides
// whether pkg names a package of the repository.
func citations(doc string) []citation {
	spans, prose := scanMarkdown(doc)
	var out []citation
	for i, s := range spans {
		for _, w := range words(s.text) {
			out = append(out, wordCitations(s, w)...)
		}
		out = append(out, makeCitations(s)...)
		if i+1 < len(spans) && !s.fenced && !spans[i+1].fenced {
			out = append(out, namedPackageSymbol(doc, s, spans[i+1])...)
		}
	}
	for _, m := range mdLink.FindAllStringSubmatchIndex(prose, -1) {
		out = append(out, citation{offset: m[2], line: lineOf(prose, m[2]), kind: refLink, text: prose[m[2]:m[3]]})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].offset < out[j].offset })
	return out
}

// words splits code into the words a reference can be.
func words(code string) []string {
	return strings.FieldsFunc(code, func(r rune) bool {
		return unicode.IsSpace(r) || strings.ContainsRune(`'"[](),=|;&`+"`", r)
	})
}

// wordCitations is what one word of code may cite: a path, a test, a
// qualified identifier (or nothing).
func wordCitations(s codeSpan, w string) []citation {
	if !strings.HasSuffix(w, "/...") {
		w = strings.TrimRight(w, ".:")
	}
	if t := strings.Trim(w, "^$"); testName.MatchString(strings.SplitN(t, "/", 2)[0]) {
		return []citation{{offset: s.start, line: s.line, kind: refTest, text: strings.SplitN(t, "/", 2)[0]}}
	}
	if qualified.MatchString(w) {
		return []citation{{offset: s.start, line: s.line, kind: refSymbol, text: w}}
	}
	if strings.Contains(w, "/") {
		return []citation{{offset: s.start, line: s.line, kind: refPath, text: strings.TrimPrefix(w, "./")}}
	}
	if goFileName.MatchString(w) {
		return []citation{{offset: s.start, line: s.line, kind: refGoFile, text: w}}
	}
	return nil
}

// makeCitations is the make targets a span names.
func makeCitations(s codeSpan) []citation {
	code := shellComment.ReplaceAllString(s.text, "")
	var out []citation
	for _, m := range makeCall.FindAllStringSubmatch(code, -1) {
		for _, target := range makeTargets(strings.Fields(m[1])) {
			out = append(out, citation{offset: s.start, line: s.line, kind: refMake, text: target})
		}
	}
	return out
}

// makeFlagsWithArgument are make's flags whose argument is the next word.
var makeFlagsWithArgument = map[string]bool{"-C": true, "-f": true, "-I": true, "-o": true, "-W": true}

// makeTargets is the targets among make's arguments: not its flags (nor
// their arguments), not VAR=value (nor a number, -j's); it stops at a
// word that is none of these and no target's name.
func makeTargets(args []string) []string {
	var targets []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case makeFlagsWithArgument[a]:
			i++
		case strings.HasPrefix(a, "-") || strings.Contains(a, "=") || strings.Trim(a, "0123456789") == "":
		case makeTarget.MatchString(a):
			targets = append(targets, a)
		default:
			return targets
		}
	}
	return targets
}

// namedPackageSymbol: `pkg/x`'s `Name.Member` cites Name.Member of the
// package pkg/x, `pkg/x/f.go`'s `Name.Member` one declared in its file f.go.
// After a folder, Name must start with a capital (`examples/kueue`'s
// `compare.yaml` is a file); after a Go file, it is a symbol whatever its
// case. Whether pkg/x is a package's folder is the resolver's to say.
func namedPackageSymbol(doc string, s, next codeSpan) []citation {
	between := doc[s.end+1 : next.start-1]
	if (between != "'s " && between != "’s ") || !strings.Contains(s.text, "/") || !memberPath.MatchString(next.text) {
		return nil
	}
	if !strings.HasSuffix(s.text, ".go") && !unicode.IsUpper(rune(next.text[0])) {
		return nil
	}
	return []citation{{offset: next.start, line: next.line, kind: refScoped, text: next.text, scope: strings.Trim(s.text, "/")}}
}
