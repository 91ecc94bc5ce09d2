package mcp

import (
	"strings"
	"testing"
)

// Ids compare as JSON values: the same integer however written, strings
// apart from numbers.
func TestIDKey(t *testing.T) {
	same := [][]string{
		{"1", "1.0", "10e-1", "0.1e1", "1E0", "100e-2"},
		{"0", "-0", "0e9", "0.000"},
		{"-12", "-1.2e1", "-120e-1"},
		{"1e400", "10e399", "1" + strings.Repeat("0", 400)},
	}
	keys := map[string]string{}
	for _, group := range same {
		want, ok := idKey([]byte(group[0]))
		if !ok {
			t.Fatalf("%s: no key", group[0])
		}
		for _, id := range group[1:] {
			if got, ok := idKey([]byte(id)); !ok || got != want {
				t.Errorf("%s: key %q, want %q (same value as %s)", id, got, want, group[0])
			}
		}
		if prev, dup := keys[want]; dup {
			t.Errorf("%s and %s share key %q", prev, group[0], want)
		}
		keys[want] = group[0]
	}
	if a, _ := idKey([]byte(`"1"`)); a == keys["1"] {
		t.Errorf(`"1" and 1 share a key`)
	}
	if _, ok := idKey([]byte("1.5")); ok {
		t.Errorf("1.5 has a key")
	}
}
