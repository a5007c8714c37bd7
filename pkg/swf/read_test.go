package swf

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestReadHeaderAndRecords(t *testing.T) {
	in := "\uFEFF; Version: 2.2\r\n" +
		";Computer:   Test machine  \r\n" +
		"; MaxProcs: 128\t(4 reserved)\r\n" +
		";\r\n" +
		"; see http://example.org/log for details\r\n" +
		";   continued: free text after a key-like word\r\n" +
		"; Note: first\n" +
		"; Note:\n" +
		"\n" +
		"   \t\n" +
		"  1 0 5 120.0 4 100.5 2048 4 3600 4096 1 3 2 7 1 1 -1 -1\r\n" +
		"2\t10.5\t-1\t-1\t-1\t-1\t-1\t-1\t-1\t-1\t5\t-1\t-1\t-1\t-1\t-1\t-1\t-1\n" +
		"; Note: a comment between records\n" +
		"3 20 0 1e2 1.0 -1 -1 -1 -1 -1 -1 -1 -1 -1 0 -1 2 30.5" // no final newline
	tr, err := Read(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	wantHeader := []HeaderLine{
		{Line: 1, Key: "Version", Value: "2.2"},
		{Line: 2, Key: "Computer", Value: "Test machine"},
		{Line: 3, Key: "MaxProcs", Value: "128\t(4 reserved)"},
		{Line: 4, Value: ""},
		{Line: 5, Value: "see http://example.org/log for details"},
		{Line: 6, Key: "continued", Value: "free text after a key-like word"},
		{Line: 7, Key: "Note", Value: "first"},
		{Line: 8, Key: "Note", Value: ""},
		{Line: 13, Key: "Note", Value: "a comment between records"},
	}
	if !reflect.DeepEqual(tr.Header, wantHeader) {
		t.Errorf("header:\n got %+v\nwant %+v", tr.Header, wantHeader)
	}
	wantRecords := []Record{
		{Line: 11, JobNumber: 1, SubmitTime: 0, WaitTime: 5, RunTime: 120, AllocatedProcessors: 4, AverageCPUTime: 100.5,
			UsedMemory: 2048, RequestedProcessors: 4, RequestedTime: 3600, RequestedMemory: 4096, Status: 1, UserID: 3,
			GroupID: 2, Executable: 7, Queue: 1, Partition: 1, PrecedingJob: -1, ThinkTime: -1},
		{Line: 12, JobNumber: 2, SubmitTime: 10.5, WaitTime: -1, RunTime: -1, AllocatedProcessors: -1, AverageCPUTime: -1,
			UsedMemory: -1, RequestedProcessors: -1, RequestedTime: -1, RequestedMemory: -1, Status: 5, UserID: -1,
			GroupID: -1, Executable: -1, Queue: -1, Partition: -1, PrecedingJob: -1, ThinkTime: -1},
		{Line: 14, JobNumber: 3, SubmitTime: 20, WaitTime: 0, RunTime: 100, AllocatedProcessors: 1, AverageCPUTime: -1,
			UsedMemory: -1, RequestedProcessors: -1, RequestedTime: -1, RequestedMemory: -1, Status: -1, UserID: -1,
			GroupID: -1, Executable: -1, Queue: 0, Partition: -1, PrecedingJob: 2, ThinkTime: 30.5},
	}
	if !reflect.DeepEqual(tr.Records, wantRecords) {
		t.Errorf("records:\n got %+v\nwant %+v", tr.Records, wantRecords)
	}
	if v, ok := tr.HeaderValue("computer"); !ok || v != "Test machine" {
		t.Errorf("HeaderValue(computer) = %q, %v", v, ok)
	}
	if n, ok := tr.HeaderInt(KeyMaxProcs); !ok || n != 128 {
		t.Errorf("HeaderInt(MaxProcs) = %d, %v; want 128", n, ok)
	}
	if _, ok := tr.HeaderInt("Computer"); ok {
		t.Error("HeaderInt(Computer) found a number")
	}
	if _, ok := tr.HeaderValue("MaxNodes"); ok {
		t.Error("HeaderValue(MaxNodes) found a value")
	}
}

func TestReadEmpty(t *testing.T) {
	for _, in := range []string{"", "\n\n", "; Version: 2.2\n"} {
		tr, err := Read(strings.NewReader(in))
		if err != nil || tr == nil || len(tr.Records) != 0 {
			t.Errorf("Read(%q) = %+v, %v; want an empty trace", in, tr, err)
		}
	}
}

func TestReadErrors(t *testing.T) {
	const good = "1 0 0 10 1 -1 -1 1 -1 -1 1 -1 -1 -1 -1 -1 -1 -1"
	replace := func(field int, value string) string {
		f := strings.Fields(good)
		f[field-1] = value
		return strings.Join(f, " ")
	}
	tests := []struct {
		name      string
		in        string
		wantLine  int
		wantField int
		wantMsg   string
	}{
		{"too few fields", "; Version: 2\n" + good + "\n1 2 3\n", 3, 0, "3 fields, want 18"},
		{"too many fields", good + " 7\n", 1, 0, "19 fields, want 18"},
		{"word", replace(4, "ten"), 1, 4, `field 4 (run time): "ten" is not a number`},
		{"fraction in integer field", replace(5, "2.5"), 1, 5, `field 5 (number of allocated processors): "2.5" is not a whole number`},
		{"hexadecimal", replace(1, "0x10"), 1, 1, `"0x10" is not a number`},
		{"infinity", replace(2, "Inf"), 1, 2, `"Inf" is not a number`},
		{"nan", replace(9, "NaN"), 1, 9, `field 9 (requested time): "NaN" is not a number`},
		{"overflow", replace(3, "1e999"), 1, 3, `"1e999" is out of range`},
		{"huge integer", replace(11, "1e300"), 1, 11, `field 11 (status): "1e300" is not a whole number`},
		{"bare sign", replace(18, "-"), 1, 18, `field 18 (think time from preceding job): "-" is not a number`},
		{"bad exponent", replace(6, "1e"), 1, 6, `"1e" is not a number`},
		{"comma", "\n\n" + strings.ReplaceAll(good, " ", ","), 3, 0, "1 fields, want 18"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := Read(strings.NewReader(tt.in))
			if err == nil {
				t.Fatalf("Read succeeded with %d records", len(tr.Records))
			}
			if tr != nil {
				t.Error("Read returned a trace with its error")
			}
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("error %v is not a *SyntaxError", err)
			}
			if se.Line != tt.wantLine || se.Field != tt.wantField {
				t.Errorf("error at line %d field %d, want line %d field %d (%v)", se.Line, se.Field, tt.wantLine, tt.wantField, err)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("error %q does not contain %q", err, tt.wantMsg)
			}
		})
	}
}

func TestReadFileGzipAndErrors(t *testing.T) {
	dir := t.TempDir()
	const trace = "; MaxProcs: 4\n1 0 0 10 1 -1 -1 1 -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n"
	plain := filepath.Join(dir, "t.swf")
	if err := os.WriteFile(plain, []byte(trace), 0o644); err != nil {
		t.Fatal(err)
	}
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	zw.Write([]byte(trace))
	zw.Close()
	// A compressed trace is recognized by its content, whatever its name.
	gz := filepath.Join(dir, "t.txt")
	if err := os.WriteFile(gz, zipped.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := ReadFile(plain)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ReadFile(gz)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) || len(a.Records) != 1 {
		t.Errorf("plain %+v and gzip %+v traces differ", a, b)
	}

	bad := filepath.Join(dir, "bad.swf")
	os.WriteFile(bad, []byte("; x\n1 2 3\n"), 0o644)
	_, err = ReadFile(bad)
	if err == nil || !strings.Contains(err.Error(), bad+": line 2: 3 fields") {
		t.Errorf("error %v does not name the file and the line", err)
	}
	truncated := filepath.Join(dir, "truncated.swf.gz")
	os.WriteFile(truncated, zipped.Bytes()[:zipped.Len()-6], 0o644)
	if _, err := ReadFile(truncated); err == nil || !strings.Contains(err.Error(), truncated) {
		t.Errorf("truncated gzip: error %v, want one naming the file", err)
	}
	if _, err := ReadFile(filepath.Join(dir, "none.swf")); err == nil || !strings.Contains(err.Error(), "none.swf") {
		t.Errorf("missing file: error %v, want one naming the file", err)
	}
}

func TestFieldName(t *testing.T) {
	if FieldName(1) != "job number" || FieldName(18) != "think time from preceding job" || FieldName(0) != "" || FieldName(19) != "" {
		t.Error("FieldName does not name fields 1 to 18 only")
	}
}

func FuzzRead(f *testing.F) {
	f.Add("; Version: 2.2\n; MaxProcs: 8\n1 0 0 10 1 -1 -1 1 -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n")
	f.Add("1 0 0 10 1 -1 -1 1 -1 -1 1 -1 -1 -1 -1 -1 -1 -1\r\n2 1.5 0 1e3 2.0 -1 -1 1 -1 -1 5 -1 -1 -1 -1 -1 -1 -1")
	f.Add("\uFEFF;\n\n\t1 2 3\n")
	f.Add("; Key:value\n;:\n; a: b: c\n1 0 0 10 1 -1 -1 1 -1 -1 1 -1 -1 -1 -1 -1 -1 1e999\n")
	f.Add("\x1f\x8b\x08\x00")
	f.Fuzz(func(t *testing.T, in string) {
		tr, err := Read(strings.NewReader(in))
		if (err == nil) == (tr == nil) {
			t.Fatalf("Read returned trace %v and error %v: want exactly one", tr, err)
		}
		if err != nil {
			return
		}
		for _, r := range tr.Records {
			if r.Line < 1 {
				t.Fatalf("record at line %d", r.Line)
			}
		}
		// Whatever was read converts or fails cleanly.
		Convert(tr, Options{CoresPerHost: 3})
	})
}
