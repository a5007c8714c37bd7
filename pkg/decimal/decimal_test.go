package decimal

import (
	"math/rand/v2"
	"regexp"
	"testing"
)

func TestPrefixAndValid(t *testing.T) {
	for _, tc := range []struct {
		s      string
		prefix int
	}{
		{"", 0}, {"+", 0}, {".", 0}, {"-.", 0}, {"e5", 0}, {".e5", 0}, {"Gf1", 0}, {"0x10", 1}, {"inf", 0}, {"NaN", 0},
		{"1", 1}, {"-1", 2}, {"+1.5", 4}, {".5", 2}, {"5.", 2}, {"1.5.3", 3}, {" 1", 0},
		{"1e5", 3}, {"1E-5", 4}, {"1e", 1}, {"1e+", 1}, {"1e+f", 1}, {"2.5e+3Gf", 6}, {"1Gf", 1}, {"100Mf,50Mf", 3},
	} {
		if got := Prefix(tc.s); got != tc.prefix {
			t.Errorf("Prefix(%q) = %d, want %d", tc.s, got, tc.prefix)
		}
		if got, want := Valid(tc.s), tc.prefix > 0 && tc.prefix == len(tc.s); got != want {
			t.Errorf("Valid(%q) = %t, want %t", tc.s, got, want)
		}
	}
}

// TestAgainstARegexp checks Prefix and Valid on random strings of the
// characters of numbers against the grammar written as a regular
// expression (leftmost-longest).
func TestAgainstARegexp(t *testing.T) {
	number := `[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?`
	prefix, whole := regexp.MustCompilePOSIX(`^`+number), regexp.MustCompile(`^`+number+`$`)
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "0123456789+-.eEf "
	for range 100000 {
		b := make([]byte, rng.IntN(8))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		s := string(b)
		if got, want := Prefix(s), len(prefix.FindString(s)); got != want {
			t.Fatalf("Prefix(%q) = %d, want %d", s, got, want)
		}
		if got, want := Valid(s), whole.MatchString(s); got != want {
			t.Fatalf("Valid(%q) = %t, want %t", s, got, want)
		}
	}
}
