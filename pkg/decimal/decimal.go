// Package decimal owns the syntax of decimal numbers in text, as C's strtod
// reads them but for its hexadecimal, infinity and NaN forms: an optional
// sign, digits with an optional fraction (at least one digit: ".5" and
// "5." are numbers), and an optional exponent. Prefix measures the number a
// string starts with (the engine's SimGrid quantities, "1.5Gf"); Valid
// tells a string that is one number (an SWF trace's fields).
package decimal

// Prefix returns the length of the longest prefix of s that is a decimal
// number, 0 if s starts with none. An exponent marker not followed by
// digits is left out of it, as strtod leaves it ("1e" reads as 1).
func Prefix(s string) int {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := 0
	for i < len(s) && isDigit(s[i]) {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && isDigit(s[i]) {
			i++
			digits++
		}
	}
	if digits == 0 {
		return 0
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if j < len(s) && isDigit(s[j]) {
			for j < len(s) && isDigit(s[j]) {
				j++
			}
			i = j
		}
	}
	return i
}

// Valid reports whether s is one decimal number, whole:
// [+-]digits[.digits][(e|E)[+-]digits].
func Valid(s string) bool {
	n := Prefix(s)
	return n > 0 && n == len(s)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
