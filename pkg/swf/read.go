package swf

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/batkube/batkube/pkg/decimal"
)

// NumFields is the number of fields of an SWF job line.
const NumFields = 18

// Status values of field 11.
const (
	StatusUnknown             = -1 // models, or not recorded
	StatusFailed              = 0
	StatusCompleted           = 1
	StatusPartialContinued    = 2 // a partial execution; the job goes on
	StatusPartialLastComplete = 3 // the last partial execution; the job completed
	StatusPartialLastFailed   = 4 // the last partial execution; the job failed
	StatusCancelled           = 5
)

// Header comment keys this package reads.
const (
	KeyMaxProcs = "MaxProcs"
	KeyMaxNodes = "MaxNodes"
)

// Trace is an SWF file as written: its comments and its job records.
type Trace struct {
	// Header holds every comment line, in the order of the file.
	Header []HeaderLine
	// Records holds the job lines, in the order of the file.
	Records []Record
}

// HeaderLine is one comment line (";" ...).
type HeaderLine struct {
	// Line is the line number in the file (from 1).
	Line int
	// Key is the key of a "; Key: value" comment, or empty for a free
	// comment.
	Key string
	// Value is the text after "Key:", or the whole comment of a free one
	// (without the ';'), trimmed of surrounding spaces.
	Value string
}

// Record is one job line, its 18 fields typed; unknown fields hold -1 as in
// the file.
type Record struct {
	// Line is the line number in the file (from 1).
	Line int

	JobNumber           int     // 1: from 1
	SubmitTime          float64 // 2: seconds since the start of the log
	WaitTime            float64 // 3: seconds from submission to start
	RunTime             float64 // 4: seconds from start to end
	AllocatedProcessors int     // 5
	AverageCPUTime      float64 // 6: seconds, average over the processors
	UsedMemory          float64 // 7: kilobytes per processor (average)
	RequestedProcessors int     // 8
	RequestedTime       float64 // 9: seconds (usually the runtime estimate)
	RequestedMemory     float64 // 10: kilobytes per processor
	Status              int     // 11: see the Status constants
	UserID              int     // 12
	GroupID             int     // 13
	Executable          int     // 14: application number
	Queue               int     // 15: 0 is interactive by convention
	Partition           int     // 16
	PrecedingJob        int     // 17: job number, or -1
	ThinkTime           float64 // 18: seconds after the preceding job ended
}

// fieldNames are the definition's names of the fields, from field 1.
var fieldNames = [NumFields]string{
	"job number", "submit time", "wait time", "run time",
	"number of allocated processors", "average CPU time used", "used memory",
	"requested number of processors", "requested time", "requested memory",
	"status", "user ID", "group ID", "executable number", "queue number",
	"partition number", "preceding job number", "think time from preceding job",
}

// FieldName returns the name of field i (1 to 18), or "" when there is none.
func FieldName(i int) string {
	if i < 1 || i > NumFields {
		return ""
	}
	return fieldNames[i-1]
}

// integerFields marks the fields that must hold whole numbers (from field 1).
var integerFields = [NumFields]bool{
	0: true, 4: true, 7: true, 10: true, 11: true, 12: true, 13: true, 14: true, 15: true, 16: true,
}

// SyntaxError is a malformed line.
type SyntaxError struct {
	// Line is the line number in the file (from 1).
	Line int
	// Field is the field at fault (1 to 18), or 0 for the whole line.
	Field int
	// Msg says what is wrong.
	Msg string
}

func (e *SyntaxError) Error() string {
	if e.Field == 0 {
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	return fmt.Sprintf("line %d, field %d (%s): %s", e.Line, e.Field, FieldName(e.Field), e.Msg)
}

// maxExactInteger bounds the integers a float64 holds exactly.
const maxExactInteger = 1 << 53

// Read reads an SWF trace. It stops at the first malformed line with a
// *SyntaxError naming the line and the field.
func Read(r io.Reader) (*Trace, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	t := &Trace{}
	for lineNo := 1; ; lineNo++ {
		line, err := br.ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("line %d: %w", lineNo, err)
		}
		if len(line) > 0 {
			if lineNo == 1 {
				line = strings.TrimPrefix(line, "\uFEFF")
			}
			if perr := t.addLine(lineNo, line); perr != nil {
				return nil, perr
			}
		}
		if err != nil {
			return t, nil
		}
	}
}

func (t *Trace) addLine(lineNo int, line string) error {
	text := strings.TrimSpace(line)
	switch {
	case text == "":
		return nil
	case text[0] == ';':
		t.Header = append(t.Header, parseComment(lineNo, text[1:]))
		return nil
	}
	fields := strings.Fields(text)
	if len(fields) != NumFields {
		return &SyntaxError{Line: lineNo, Msg: fmt.Sprintf("%d fields, want %d (a job line holds %d whitespace-separated numbers; a comment starts with ';')", len(fields), NumFields, NumFields)}
	}
	var v [NumFields]float64
	for i, f := range fields {
		x, err := parseNumber(f, integerFields[i])
		if err != nil {
			return &SyntaxError{Line: lineNo, Field: i + 1, Msg: err.Error()}
		}
		v[i] = x
	}
	t.Records = append(t.Records, Record{
		Line:                lineNo,
		JobNumber:           int(v[0]),
		SubmitTime:          v[1],
		WaitTime:            v[2],
		RunTime:             v[3],
		AllocatedProcessors: int(v[4]),
		AverageCPUTime:      v[5],
		UsedMemory:          v[6],
		RequestedProcessors: int(v[7]),
		RequestedTime:       v[8],
		RequestedMemory:     v[9],
		Status:              int(v[10]),
		UserID:              int(v[11]),
		GroupID:             int(v[12]),
		Executable:          int(v[13]),
		Queue:               int(v[14]),
		Partition:           int(v[15]),
		PrecedingJob:        int(v[16]),
		ThinkTime:           v[17],
	})
	return nil
}

// parseComment splits a comment (the text after ';') into key and value
// when it reads "Key: value", the key one word of letters, digits and '_'
// starting with a letter and the colon followed by a space or the end.
func parseComment(lineNo int, text string) HeaderLine {
	text = strings.TrimSpace(text)
	if i := strings.IndexByte(text, ':'); i > 0 && isKey(text[:i]) {
		if rest := text[i+1:]; rest == "" || rest[0] == ' ' || rest[0] == '\t' {
			return HeaderLine{Line: lineNo, Key: text[:i], Value: strings.TrimSpace(rest)}
		}
	}
	return HeaderLine{Line: lineNo, Value: text}
}

func isKey(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !(letter || i > 0 && (c >= '0' && c <= '9' || c == '_')) {
			return false
		}
	}
	return s != ""
}

// parseNumber reads a decimal number (sign, digits, optional fraction and
// exponent; no hexadecimal, infinity or NaN), whole when integer is set.
func parseNumber(s string, integer bool) (float64, error) {
	if !decimal.Valid(s) {
		return 0, fmt.Errorf("%s is not a number", quote(s))
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(x, 0) {
		return 0, fmt.Errorf("%s is out of range", quote(s))
	}
	if integer && (x != math.Trunc(x) || math.Abs(x) > maxExactInteger) {
		return 0, fmt.Errorf("%s is not a whole number", quote(s))
	}
	return x, nil
}

// quote quotes s for a message, cut to a readable length.
func quote(s string) string {
	const max = 40
	if len(s) > max {
		return strconv.Quote(s[:max]) + "..."
	}
	return strconv.Quote(s)
}

// HeaderValue returns the value of the first header comment with this key
// (compared case-insensitively).
func (t *Trace) HeaderValue(key string) (string, bool) {
	for _, h := range t.Header {
		if h.Key != "" && strings.EqualFold(h.Key, key) {
			return h.Value, true
		}
	}
	return "", false
}

// HeaderInt returns the integer that starts the value of the first header
// comment with this key ("MaxProcs: 128" gives 128), when it has one.
func (t *Trace) HeaderInt(key string) (int, bool) {
	v, ok := t.HeaderValue(key)
	if !ok {
		return 0, false
	}
	words := strings.Fields(v)
	if len(words) == 0 {
		return 0, false
	}
	x, err := parseNumber(words[0], true)
	if err != nil {
		return 0, false
	}
	return int(x), true
}

// gzipMagic starts every gzip stream.
var gzipMagic = []byte{0x1f, 0x8b}

// Decompress returns r itself, or a reader of its decompressed content when
// it is gzip-compressed (as the archive distributes its logs, .swf.gz),
// which it detects by the gzip magic bytes rather than by a file name.
func Decompress(r io.Reader) (io.Reader, error) {
	br := bufio.NewReader(r)
	head, err := br.Peek(len(gzipMagic))
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if string(head) != string(gzipMagic) {
		return br, nil
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	return zr, nil
}

// ReadFile reads an SWF trace from a file, plain or gzip-compressed. Its
// errors name the file.
func ReadFile(path string) (*Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	t, err := ReadFrom(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// ReadFrom reads an SWF trace, plain or gzip-compressed, from r.
func ReadFrom(r io.Reader) (*Trace, error) {
	dr, err := Decompress(r)
	if err != nil {
		return nil, err
	}
	return Read(dr)
}
