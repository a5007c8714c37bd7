package apiserver

import (
	"bytes"
	"slices"
)

// An apply's configuration is YAML (application/apply-patch+yaml), and the
// real server reads it as YAML even when it is JSON, as controller-runtime
// and client-go send it: a YAML parser then builds a document of tokens and
// nodes that the JSON decoder could have read directly (Kueue's status
// applies: 2 % of the server's CPU, 6 % of its allocations). JSON is YAML,
// and for most JSON documents the two read the same values; plainJSON
// tells those apart, conservatively, so that they are decoded as JSON and
// every other document as YAML.

// plainJSON reports whether doc, if it is valid JSON, means as YAML what it
// means as JSON: an object of printable ASCII, spaces and line breaks
// (YAML refuses some characters JSON takes, tabs where it indents, and
// reads escapes on its own terms), whose strings have no
// escapes, whose numbers are integers of at most 18 digits (YAML rewrites
// 1.0 as the integer 1, and an integer too large for int64 as a float), and
// whose objects repeat no key and have no key "<<" (YAML refuses repeated
// keys; "<<" merges), each with at most maxPlainKeys keys (the repeats are
// looked for among the object's keys one by one: an object with more is
// read as YAML rather than compared key by key). It does not check that
// doc is JSON: the caller's decoder does.
func plainJSON(doc []byte) bool {
	doc = bytes.TrimLeft(doc, " \r\n")
	if len(doc) == 0 || doc[0] != '{' {
		return false
	}
	// A frame is an object (its keys are keys[first:], and whether a key
	// comes next) or an array (object false). The keys of every open
	// object share one slice of doc's bytes: a body has few, small objects.
	type frame struct {
		object, wantKey bool
		first           int
	}
	var stack []frame
	var keys [][]byte
	for i := 0; i < len(doc); i++ {
		c := doc[i]
		if (c < 0x20 && c != '\n' && c != '\r') || c > 0x7e || c == '\\' {
			return false
		}
		switch {
		case c == '{':
			stack = append(stack, frame{object: true, wantKey: true, first: len(keys)})
		case c == '[':
			stack = append(stack, frame{})
		case c == '}' || c == ']':
			n := len(stack)
			if n == 0 {
				return false
			}
			if stack[n-1].object {
				keys = keys[:stack[n-1].first]
			}
			stack = stack[:n-1]
		case c == ',':
			if n := len(stack); n > 0 && stack[n-1].object {
				stack[n-1].wantKey = true
			}
		case c == '"':
			end := bytes.IndexByte(doc[i+1:], '"')
			if end < 0 {
				return false
			}
			s := doc[i+1 : i+1+end]
			for _, b := range s {
				if b < 0x20 || b > 0x7e || b == '\\' {
					return false
				}
			}
			if n := len(stack); n > 0 && stack[n-1].wantKey {
				own := keys[stack[n-1].first:]
				if string(s) == "<<" || len(own) == maxPlainKeys || slices.ContainsFunc(own, func(k []byte) bool { return bytes.Equal(k, s) }) {
					return false
				}
				keys = append(keys, s)
				stack[n-1].wantKey = false
			}
			i += end + 1
		case c == '-' || (c >= '0' && c <= '9'):
			end, ok := plainInteger(doc, i)
			if !ok {
				return false
			}
			i = end - 1
		}
	}
	return len(stack) == 0
}

// maxPlainKeys bounds the keys of an object plainJSON looks at (Kueue's
// status applies have at most a dozen): the cost of its check for repeated
// keys grows with their square.
const maxPlainKeys = 64

// plainInteger reads the number at doc[start:]: it returns where it ends,
// and whether it is an integer of at most 18 digits.
func plainInteger(doc []byte, start int) (end int, ok bool) {
	digits := 0
	end = start
	if doc[end] == '-' {
		end++
	}
	for ; end < len(doc); end++ {
		switch b := doc[end]; {
		case b >= '0' && b <= '9':
			digits++
		case b == '.' || b == 'e' || b == 'E' || b == '+' || b == '-':
			return end, false
		default:
			return end, digits > 0 && digits <= 18
		}
	}
	return end, digits > 0 && digits <= 18
}
