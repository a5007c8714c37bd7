package apiserver

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// viaYAML is how an apply's configuration was read before plainJSON, as
// the real server reads it: YAML.
func viaYAML(doc []byte) (map[string]any, error) {
	j, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	return out, decodeJSON(j, &out)
}

// sameAsYAML fails when decodeApplied reads doc otherwise than YAML does.
func sameAsYAML(t *testing.T, doc string) {
	t.Helper()
	want, wantErr := viaYAML([]byte(doc))
	got, err := decodeApplied([]byte(doc))
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("%q: error %v, as YAML %v", doc, err, wantErr)
	}
	if err == nil && !reflect.DeepEqual(got.Object, want) {
		t.Fatalf("%q: %#v, as YAML %#v", doc, got.Object, want)
	}
}

// What YAML and JSON read differently is read as YAML: numbers with a
// fraction or an exponent or too many digits, escapes, repeated keys, the
// merge key, characters YAML refuses, tabs; so is an object of more keys
// than plainJSON compares; what they read alike is read as JSON, with the
// same values.
func TestAppliedConfigurationReadsAsYAML(t *testing.T) {
	plain := []string{
		`{"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"Workload","metadata":{"name":"w","generation":1},"status":{"conditions":[{"type":"Admitted","status":"True","observedGeneration":1}],"flag":true,"none":null,"list":[],"obj":{}}}`,
		"{\n  \"a\": -12,\r\n  \"b\": [1, 2, {\"c\": \"d e\"}], \"e\": 0, \"f\": -0\n}",
		`{"max":123456789012345678}`,
	}
	for _, doc := range plain {
		if !plainJSON([]byte(doc)) {
			t.Errorf("%q: not read as JSON", doc)
		}
		sameAsYAML(t, doc)
	}
	var many []string
	for i := range maxPlainKeys + 1 {
		many = append(many, fmt.Sprintf(`"k%d":%d`, i, i))
	}
	if !plainJSON([]byte("{" + strings.Join(many[:maxPlainKeys], ",") + "}")) {
		t.Errorf("an object of %d keys: not read as JSON", maxPlainKeys)
	}
	apart := []string{"{" + strings.Join(many, ",") + "}",
		`{"a":1.0}`, `{"a":1e3}`, `{"a":1E3}`, `{"a":-1.5e-3}`, `{"a":1234567890123456789}`,
		`{"a":"\u00e9"}`, `{"a":"x\/y"}`, `{"a":"\ud83d\ude00"}`, `{"a":"tab\there"}`,
		`{"a":1,"a":2}`, `{"o":{"k":1},"p":{"k":2},"o":3}`, `{"<<":{"a":1}}`,
		"{\"a\":\"caf\xc3\xa9\"}", "{\"a\":\"\x7f\"}", "{\t\"a\":1}", "\t{\"a\":1}",
		`["a"]`, `"a"`, `a: 1`, `{"a":1} trailing`, `{"a":1`, ``,
	}
	for _, doc := range apart {
		if plainJSON([]byte(doc)) && decodeJSON([]byte(doc), &map[string]any{}) == nil {
			t.Errorf("%q: read as JSON", doc)
		}
		sameAsYAML(t, doc)
	}
	r := rand.New(rand.NewPCG(5, 6))
	for range 3000 {
		sameAsYAML(t, randomDocument(r))
	}
}

// randomDocument is a JSON object of random keys and values, some of them
// what YAML reads otherwise.
func randomDocument(r *rand.Rand) string {
	var b strings.Builder
	var value func(depth int)
	atoms := []string{`1`, `-7`, `0`, `1.5`, `2e3`, `true`, `false`, `null`, `"x"`, `"a b"`, `"\u00e9"`, `"<<"`, `"tab\t"`, `123456789012345678901`, `"yes"`, `"~"`, `"1.0"`, `"#c"`}
	object := func(depth int) {
		b.WriteByte('{')
		for i := range r.IntN(4) {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "%q:", []string{"a", "b", "c", "<<", "k"}[r.IntN(5)])
			value(depth - 1)
		}
		b.WriteByte('}')
	}
	value = func(depth int) {
		switch n := r.IntN(6); {
		case depth <= 0 || n < 3:
			b.WriteString(atoms[r.IntN(len(atoms))])
		case n == 3:
			b.WriteByte('[')
			for i := range r.IntN(3) {
				if i > 0 {
					b.WriteString(", ")
				}
				value(depth - 1)
			}
			b.WriteByte(']')
		default:
			object(depth)
		}
	}
	object(4)
	return b.String()
}

func FuzzAppliedConfigurationReadsAsYAML(f *testing.F) {
	f.Add(`{"a":[1,{"b":"c"}],"d":null}`)
	f.Add(`{"a":1,"a":2}`)
	f.Fuzz(func(t *testing.T, doc string) {
		sameAsYAML(t, doc)
	})
}
