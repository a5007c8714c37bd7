package metrics

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ParseLine splits a line of the Prometheus text format, `name{k="v",...}
// value [timestamp]`, into its name, labels and value: the light scan of a
// scrape read at every step (a settle policy), where Parse builds whole
// families (types, histograms) for a run's summary.
func ParseLine(line []byte) (name string, labels map[string]string, value float64, err error) {
	i := bytes.IndexAny(line, "{ ")
	if i <= 0 {
		return "", nil, 0, fmt.Errorf("malformed metrics line %q", line)
	}
	name = string(line[:i])
	rest := line[i:]
	if rest[0] == '{' {
		labels = map[string]string{}
		rest = rest[1:]
		for {
			rest = bytes.TrimLeft(rest, " ,")
			if len(rest) == 0 {
				return "", nil, 0, fmt.Errorf("metrics line %q: unterminated labels", line)
			}
			if rest[0] == '}' {
				rest = rest[1:]
				break
			}
			eq := bytes.IndexByte(rest, '=')
			if eq <= 0 || eq+1 >= len(rest) || rest[eq+1] != '"' {
				return "", nil, 0, fmt.Errorf("metrics line %q: malformed label", line)
			}
			key := string(bytes.TrimSpace(rest[:eq]))
			val, n, err := unquote(rest[eq+1:])
			if err != nil {
				return "", nil, 0, fmt.Errorf("metrics line %q: %w", line, err)
			}
			labels[key] = val
			rest = rest[eq+1+n:]
		}
	}
	fields := strings.Fields(string(rest))
	if len(fields) == 0 {
		return "", nil, 0, fmt.Errorf("metrics line %q: no value", line)
	}
	value, err = strconv.ParseFloat(fields[0], 64)
	if err != nil {
		return "", nil, 0, fmt.Errorf("metrics line %q: value: %w", line, err)
	}
	return name, labels, value, nil
}

// unquote reads a double-quoted label value with the exposition format's
// escapes (\\, \", \n) and returns it and the bytes it took.
func unquote(b []byte) (string, int, error) {
	var out strings.Builder
	for i := 1; i < len(b); i++ {
		switch c := b[i]; c {
		case '"':
			return out.String(), i + 1, nil
		case '\\':
			if i+1 >= len(b) {
				return "", 0, errors.New("unterminated escape in a label value")
			}
			i++
			switch b[i] {
			case 'n':
				out.WriteByte('\n')
			default:
				out.WriteByte(b[i])
			}
		default:
			out.WriteByte(c)
		}
	}
	return "", 0, errors.New("unterminated label value")
}
