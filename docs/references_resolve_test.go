package docs

// The resolver of the docs' references (references_test.go says what they
// are): what the repository holds, its Go packages' declarations.

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"unicode"
)

// ---- Resolving references ----

// resolver knows the repository: its root folders, Go packages, tests and
// make targets; it parses a package only when a doc cites it.
type resolver struct {
	root      string
	rootDirs  map[string]bool            // folders at the root a path may start with
	packages  map[string][]string        // last element of a package's path -> its folders (from the root)
	tests     map[string]bool            // Test, Benchmark and Fuzz funcs of every _test.go
	goFiles   map[string]bool            // the names of the Go files
	targets   map[string]bool            // make targets
	parsed    map[string]*goPackage      // folder -> declarations
	parseErrs map[string]error           // folder -> why it could not be parsed
	headings  map[string]map[string]bool // Markdown file -> its headings' anchors
}

// notReferenced are root folders a build or a run writes (git ignores
// them): paths into them name outputs, not the repository's files.
var notReferenced = map[string]bool{"out": true, "bin": true, ".build": true, ".git": true}

// newResolver reads the repository at root: its folders, Go files, tests
// and make targets.
func newResolver(t *testing.T, root string) *resolver {
	t.Helper()
	r := &resolver{
		root: root, rootDirs: map[string]bool{}, packages: map[string][]string{},
		tests: map[string]bool{}, goFiles: map[string]bool{}, targets: map[string]bool{},
		parsed: map[string]*goPackage{}, parseErrs: map[string]error{}, headings: map[string]map[string]bool{},
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() && !notReferenced[e.Name()] {
			r.rootDirs[e.Name()] = true
		}
	}
	if err := r.walkGo(); err != nil {
		t.Fatal(err)
	}
	for _, mk := range []string{"Makefile", "examples/upstream.mk"} {
		if err := r.readTargets(filepath.Join(root, mk)); err != nil {
			t.Fatal(err)
		}
	}
	if len(r.packages) < 20 || len(r.tests) < 100 || len(r.targets) < 10 {
		t.Fatalf("found %d packages, %d tests, %d make targets: the walk went wrong", len(r.packages), len(r.tests), len(r.targets))
	}
	return r
}

var testFunc = regexp.MustCompile(`(?m)^func ((?:Test|Benchmark|Fuzz)\w*)\(`)

// walkGo finds the repository's Go packages and its tests.
func (r *resolver) walkGo() error {
	return filepath.WalkDir(r.root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(r.root, path)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || notReferenced[rel] || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		r.goFiles[d.Name()] = true
		dir := filepath.ToSlash(filepath.Dir(rel))
		name := filepath.Base(dir)
		if !slices.Contains(r.packages[name], dir) {
			r.packages[name] = append(r.packages[name], dir)
		}
		if strings.HasSuffix(path, "_test.go") {
			return r.readTests(path)
		}
		return nil
	})
}

// readTests records the Test, Benchmark and Fuzz funcs of a _test.go file.
func (r *resolver) readTests(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	for _, m := range testFunc.FindAllStringSubmatch(string(data), -1) {
		r.tests[m[1]] = true
	}
	return nil
}

var (
	makeRule  = regexp.MustCompile(`(?m)^([A-Za-z0-9_.-][A-Za-z0-9_. -]*?)\s*::?(?:[^=]|$)`)
	phonyRule = regexp.MustCompile(`(?m)^\.PHONY:(.*)$`)
)

// readTargets records the targets of a makefile: its rules' and .PHONY's.
func (r *resolver) readTargets(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	for _, m := range makeRule.FindAllStringSubmatch(string(data), -1) {
		for _, name := range strings.Fields(m[1]) {
			r.targets[name] = true
		}
	}
	for _, m := range phonyRule.FindAllStringSubmatch(string(data), -1) {
		for _, name := range strings.Fields(m[1]) {
			r.targets[name] = true
		}
	}
	return nil
}

// check resolves the citations of a doc (its path from the root, and its
// text) and returns those that do not resolve, and how many it cites.
func (r *resolver) check(doc, text string) (problems []problem, cited int) {
	r.headings[doc] = headingsIn(text)
	refs := citations(text)
	for _, c := range refs {
		err := r.resolve(doc, c)
		if errors.Is(err, errNotAReference) {
			continue
		}
		if err != nil {
			problems = append(problems, problem{doc: doc, line: c.line, ref: c.cited(), err: err})
		}
	}
	return problems, len(refs)
}

// errNotAReference: a word shaped like a reference, which is none (a
// placeholder, an output, a qualifier that names no package here).
var errNotAReference = errors.New("not a reference")

func (r *resolver) resolve(doc string, c citation) error {
	switch c.kind {
	case refPath:
		return r.resolvePath(c.text)
	case refLink:
		return r.resolveLink(doc, c.text)
	case refTest:
		if !r.tests[c.text] {
			return fmt.Errorf("no _test.go file declares func %s", c.text)
		}
		return nil
	case refSymbol:
		return r.resolveSymbol(c.text)
	case refScoped:
		return r.resolveScoped(c.scope, c.text)
	case refGoFile:
		if !r.goFiles[c.text] {
			return errors.New("no Go file of the repository has that name")
		}
		return nil
	case refMake:
		if !r.targets[c.text] {
			return fmt.Errorf("no target %s in the Makefile or examples/upstream.mk", c.text)
		}
		return nil
	}
	return fmt.Errorf("unknown kind of reference %d", c.kind)
}

// placeholderStem is an element of a path that stands for what the reader
// chooses: FILE, NAME.objects.yaml (its part before the first dot in
// capitals), but for the files named so by custom.
var (
	placeholderStem = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)
	capitalFiles    = map[string]bool{"README": true, "LICENSE": true, "CHANGELOG": true, "CONTRIBUTING": true, "NOTICE": true, "AUTHORS": true, "OWNERS": true, "SECURITY": true}
)

// isPlaceholder reports whether a path element is a placeholder.
func isPlaceholder(elem string) bool {
	stem, _, _ := strings.Cut(elem, ".")
	return placeholderStem.MatchString(stem) && !capitalFiles[stem]
}

// resolvePath checks a path from the root, if it is one (references_test.go
// says what is not).
func (r *resolver) resolvePath(path string) error {
	if strings.Contains(path, "://") || strings.HasPrefix(path, "/") || strings.ContainsAny(path, "<>{}$…") {
		return errNotAReference
	}
	elems := strings.Split(strings.TrimSuffix(path, "/"), "/")
	if !r.rootDirs[elems[0]] {
		return errNotAReference
	}
	for _, e := range elems {
		if isPlaceholder(e) {
			return errNotAReference
		}
	}
	return r.exists(strings.TrimSuffix(path, "/..."))
}

// exists checks that a path from the root, or a glob, names a file or
// folder.
func (r *resolver) exists(path string) error {
	full := filepath.Join(r.root, filepath.FromSlash(path))
	if strings.ContainsAny(path, "*?") {
		m, err := filepath.Glob(full)
		if err != nil {
			return fmt.Errorf("not a pattern: %w", err)
		}
		if len(m) == 0 {
			return errors.New("no file of the repository matches")
		}
		return nil
	}
	if _, err := os.Stat(full); err != nil {
		return errors.New("no such file or folder in the repository")
	}
	return nil
}

// resolveLink checks a relative link's file and anchor.
func (r *resolver) resolveLink(doc, target string) error {
	if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") || strings.HasPrefix(target, "/") {
		return errNotAReference
	}
	file, anchor, _ := strings.Cut(target, "#")
	path := doc
	if file != "" {
		path = filepath.ToSlash(filepath.Join(filepath.Dir(doc), file))
	}
	if path == ".." || strings.HasPrefix(path, "../") {
		return errNotAReference
	}
	if file != "" {
		if err := r.exists(path); err != nil {
			return err
		}
	}
	if anchor == "" || !strings.HasSuffix(path, ".md") {
		return nil
	}
	headings, err := r.headingsOf(path)
	if err != nil {
		return err
	}
	if !headings[anchor] {
		return fmt.Errorf("%s has no heading whose anchor is #%s", path, anchor)
	}
	return nil
}

var heading = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)

// headingsOf is the anchors of a Markdown file's headings, as GitHub makes
// them.
func (r *resolver) headingsOf(path string) (map[string]bool, error) {
	if h, ok := r.headings[path]; ok {
		return h, nil
	}
	data, err := os.ReadFile(filepath.Join(r.root, filepath.FromSlash(path)))
	if err != nil {
		return nil, fmt.Errorf("reading its headings: %w", err)
	}
	r.headings[path] = headingsIn(string(data))
	return r.headings[path], nil
}

// headingsIn is the anchors of a Markdown text's headings (not those of
// its code blocks).
func headingsIn(text string) map[string]bool {
	anchors := map[string]bool{}
	inFence := false
	for _, line := range strings.Split(text, "\n") {
		if fenceLine.MatchString(line) {
			inFence = !inFence
		}
		if m := heading.FindStringSubmatch(line); m != nil && !inFence {
			anchors[slug(m[1])] = true
		}
	}
	return anchors
}

// slug is GitHub's anchor of a heading: lower case, spaces as '-', other
// punctuation but '-' and '_' dropped.
func slug(title string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == ' ':
			return '-'
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			return unicode.ToLower(r)
		}
		return -1
	}, title)
}

// resolveSymbol checks pkg.Name[.Member...] in the packages named pkg.
func (r *resolver) resolveSymbol(sym string) error {
	pkg, rest, _ := strings.Cut(sym, ".")
	dirs := r.packages[pkg]
	if len(dirs) == 0 {
		return errNotAReference // metav1.Status, time.Now: not this repository's
	}
	var errs []error
	for _, dir := range dirs {
		err := r.resolveIn(dir, rest)
		if err == nil {
			return nil
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// resolveScoped checks Name[.Member] in a package's folder, or in a Go
// file, if the scope is one of the repository's.
func (r *resolver) resolveScoped(scope, sym string) error {
	dir, file := strings.TrimPrefix(scope, "./"), ""
	if strings.HasSuffix(dir, ".go") {
		if r.exists(dir) != nil {
			return errNotAReference // the file's path is reported as such
		}
		dir, file = filepath.ToSlash(filepath.Dir(dir)), filepath.Base(dir)
	}
	if !slices.Contains(r.packages[filepath.Base(dir)], dir) {
		return errNotAReference
	}
	if err := r.resolveIn(dir, sym); err != nil || file == "" {
		return err
	}
	return r.declaredIn(dir, file, sym)
}

// resolveIn checks Name[.Member[...]] in the package of a folder (only
// the first member of a chain).
func (r *resolver) resolveIn(dir, sym string) error {
	p, err := r.load(dir)
	if err != nil {
		return err
	}
	elems := strings.Split(sym, ".")
	kind, ok := p.top[elems[0]]
	switch {
	case !ok:
		return fmt.Errorf("package %s declares no %s", dir, elems[0])
	case len(elems) == 1 || kind == declVar:
		return nil
	case kind != declType:
		return fmt.Errorf("%s.%s is no type: it has no member %s", dir, elems[0], elems[1])
	}
	if !r.hasMember(dir, elems[0], elems[1], map[string]bool{}) {
		return fmt.Errorf("type %s of package %s has no field or method %s", elems[0], dir, elems[1])
	}
	return nil
}

// declaredIn checks that Name[.Member] is declared in a file of the
// package in dir (a member: its method, or its type's field, there).
func (r *resolver) declaredIn(dir, file, sym string) error {
	p, err := r.load(dir)
	if err != nil {
		return err
	}
	elems := strings.Split(sym, ".")
	key := elems[0]
	if len(elems) > 1 && p.top[key] == declType {
		key += "." + elems[1] // a variable's member is the variable's
	}
	if p.files[key][file] {
		return nil
	}
	var where []string
	for f := range p.files[key] {
		where = append(where, f)
	}
	if len(where) == 0 {
		return fmt.Errorf("%s is declared in no file of %s (a promoted member): cite the type that declares it", key, dir)
	}
	sort.Strings(where)
	return fmt.Errorf("%s is declared in %s of %s, not in %s", key, strings.Join(where, ", "), dir, file)
}

// hasMember reports whether type typ of the package in dir has a field or
// method name, its own or through a type it embeds or is defined from.
func (r *resolver) hasMember(dir, typ, name string, seen map[string]bool) bool {
	key := dir + "." + typ
	if seen[key] {
		return false
	}
	seen[key] = true
	p, err := r.load(dir)
	if err != nil {
		return false
	}
	if p.members[typ][name] {
		return true
	}
	for _, e := range p.embeds[typ] {
		if r.hasEmbeddedMember(dir, e, name, seen) {
			return true
		}
	}
	return false
}

// hasEmbeddedMember looks for a member in an embedded type: a type of
// another module (no package of the repository by its qualifier's name
// declares it) is taken to have it, its members are not read.
func (r *resolver) hasEmbeddedMember(dir string, e typeRef, name string, seen map[string]bool) bool {
	if e.pkg == "" {
		return r.hasMember(dir, e.name, name, seen)
	}
	known := false
	for _, d := range r.packages[e.pkg] {
		if p, err := r.load(d); err != nil || p.top[e.name] != declType {
			continue
		}
		known = true
		if r.hasMember(d, e.name, name, seen) {
			return true
		}
	}
	return !known
}

// ---- A package's declarations ----

type declKind int

const (
	declType declKind = iota + 1 // not the zero value: a missing name is no type
	declFunc
	declVar
	declConst
)

// typeRef is a named type: pkg is its package's name, "" for this one.
type typeRef struct{ pkg, name string }

// goPackage is what a package's files declare (its _test.go files too).
type goPackage struct {
	top     map[string]declKind
	members map[string]map[string]bool // type -> fields and methods
	embeds  map[string][]typeRef       // type -> embedded types, and the type it is defined from
	files   map[string]map[string]bool // Name, or Type.Member -> the files declaring it
}

// load parses the package of a folder once.
func (r *resolver) load(dir string) (*goPackage, error) {
	if p, ok := r.parsed[dir]; ok {
		return p, r.parseErrs[dir]
	}
	p, err := parsePackage(filepath.Join(r.root, filepath.FromSlash(dir)))
	r.parsed[dir], r.parseErrs[dir] = p, err
	return p, err
}

func parsePackage(dir string) (*goPackage, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	p := &goPackage{top: map[string]declKind{}, members: map[string]map[string]bool{}, embeds: map[string][]typeRef{}, files: map[string]map[string]bool{}}
	fset := token.NewFileSet()
	for _, path := range files {
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Errorf("parsing %s: %w", path, err)
		}
		for _, d := range f.Decls {
			p.addDecl(filepath.Base(path), d)
		}
	}
	return p, nil
}

// addDecl records a declaration of a file.
func (p *goPackage) addDecl(file string, d ast.Decl) {
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Recv == nil || len(d.Recv.List) == 0 {
			p.addTop(file, d.Name.Name, declFunc)
			return
		}
		if recv := typeName(d.Recv.List[0].Type); recv.name != "" {
			p.addMember(file, recv.name, d.Name.Name)
		}
	case *ast.GenDecl:
		for _, s := range d.Specs {
			p.addSpec(file, d.Tok, s)
		}
	}
}

func (p *goPackage) addSpec(file string, tok token.Token, s ast.Spec) {
	switch s := s.(type) {
	case *ast.TypeSpec:
		p.addTop(file, s.Name.Name, declType)
		p.addTypeMembers(file, s.Name.Name, s.Type)
	case *ast.ValueSpec:
		kind := declVar
		if tok == token.CONST {
			kind = declConst
		}
		for _, n := range s.Names {
			p.addTop(file, n.Name, kind)
		}
	}
}

func (p *goPackage) addTop(file, name string, kind declKind) {
	p.top[name] = kind
	p.addFile(name, file)
}

// addTypeMembers records the fields and interface methods of a type, and
// the types it embeds or is defined from.
func (p *goPackage) addTypeMembers(file, name string, typ ast.Expr) {
	var fields *ast.FieldList
	switch t := typ.(type) {
	case *ast.StructType:
		fields = t.Fields
	case *ast.InterfaceType:
		fields = t.Methods
	default:
		if ref := typeName(typ); ref.name != "" {
			p.embeds[name] = append(p.embeds[name], ref)
		}
		return
	}
	for _, f := range fields.List {
		if len(f.Names) == 0 {
			if ref := typeName(f.Type); ref.name != "" {
				p.embeds[name] = append(p.embeds[name], ref)
				p.addMember(file, name, ref.name)
			}
			continue
		}
		for _, n := range f.Names {
			p.addMember(file, name, n.Name)
		}
	}
}

func (p *goPackage) addMember(file, typ, member string) {
	if p.members[typ] == nil {
		p.members[typ] = map[string]bool{}
	}
	p.members[typ][member] = true
	p.addFile(typ+"."+member, file)
}

func (p *goPackage) addFile(key, file string) {
	if p.files[key] == nil {
		p.files[key] = map[string]bool{}
	}
	p.files[key][file] = true
}

// typeName is the named type of an expression: T, *T, pkg.T, T[X].
func typeName(e ast.Expr) typeRef {
	switch t := e.(type) {
	case *ast.Ident:
		return typeRef{name: t.Name}
	case *ast.StarExpr:
		return typeName(t.X)
	case *ast.IndexExpr:
		return typeName(t.X)
	case *ast.IndexListExpr:
		return typeName(t.X)
	case *ast.SelectorExpr:
		if pkg, ok := t.X.(*ast.Ident); ok {
			return typeRef{pkg: pkg.Name, name: t.Sel.Name}
		}
	}
	return typeRef{}
}
