// Package unstructjson encodes unstructured content (what JSON decodes
// into: maps of strings, slices, strings, numbers, booleans and nulls) as
// encoding/json's Encoder does, byte for byte (keys sorted, HTML
// characters escaped, a newline at the end), without reflection.
//
// A custom object is such a map, and the server encodes one at each of
// its writes and at each admission webhook call; encoding/json spends most
// of that time discovering the types by reflection and sorting each map's
// keys through a slice of reflect values. It knows nothing of the objects:
// package apiserver calls it for unstructured objects, and package batsim
// writes its messages' strings and numbers with AppendString and
// AppendFloat.
package unstructjson

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// ErrUnsupported is returned for a value it does not encode (another
// type, a NaN or an infinity): the caller encodes with encoding/json,
// which encodes it or says why not.
var ErrUnsupported = errors.New("unstructjson: unsupported value")

// Append appends the encoding of v and a newline to dst.
func Append(dst []byte, v any) ([]byte, error) {
	dst, err := appendValue(dst, v)
	if err != nil {
		return nil, err
	}
	return append(dst, '\n'), nil
}

func appendValue(dst []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case string:
		return AppendString(dst, v, true), nil
	case bool:
		return strconv.AppendBool(dst, v), nil
	case int64:
		return strconv.AppendInt(dst, v, 10), nil
	case int:
		return strconv.AppendInt(dst, int64(v), 10), nil
	case int32:
		return strconv.AppendInt(dst, int64(v), 10), nil
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%w: %v", ErrUnsupported, v)
		}
		return AppendFloat(dst, v), nil
	case map[string]any:
		return appendMap(dst, v)
	case []any:
		if v == nil {
			return append(dst, "null"...), nil
		}
		dst = append(dst, '[')
		for i, e := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendValue(dst, e); err != nil {
				return nil, err
			}
		}
		return append(dst, ']'), nil
	}
	return nil, fmt.Errorf("%w: %T", ErrUnsupported, v)
}

func appendMap(dst []byte, m map[string]any) ([]byte, error) {
	if m == nil {
		return append(dst, "null"...), nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	dst = append(dst, '{')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(AppendString(dst, k, true), ':')
		var err error
		if dst, err = appendValue(dst, m[k]); err != nil {
			return nil, err
		}
	}
	return append(dst, '}'), nil
}

// AppendFloat appends f, a finite float64, as encoding/json writes it: the
// shortest form that reads back as f, in exponent form below 1e-6 and
// from 1e21 on, a negative exponent's leading zero dropped (e-7, not
// e-07).
func AppendFloat(dst []byte, f float64) []byte {
	format := byte('f')
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if n := len(dst); format == 'e' && n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
		dst[n-2] = dst[n-1]
		dst = dst[:n-1]
	}
	return dst
}

const hexDigits = "0123456789abcdef"

// AppendString appends s quoted as encoding/json writes it: quote and
// backslash escaped, \b \f \n \r \t by name, other control characters
// (and < > &, with escapeHTML, as its Encoder's SetEscapeHTML) as \u00XX,
// U+2028 and U+2029 as \u2028 and \u2029, and each byte of invalid UTF-8
// as \ufffd.
func AppendString(dst []byte, s string, escapeHTML bool) []byte {
	dst = append(dst, '"')
	plain := 0 // s[plain:i] is still to be copied as it is
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && (!escapeHTML || c != '<' && c != '>' && c != '&') {
				i++
				continue
			}
			dst = append(dst, s[plain:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			plain = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(append(dst, s[plain:i]...), `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(append(dst, s[plain:i]...), '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		plain = i
	}
	return append(append(dst, s[plain:]...), '"')
}
