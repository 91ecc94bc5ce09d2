package wire

import "testing"

func TestDuplicateKey(t *testing.T) {
	cases := []struct {
		in, path string
		dup      bool
	}{
		{`{"name":"EVIL","name":"Ada"}`, ".name", true},
		{`{"a":1,"b":{"c":1,"c":2}}`, ".b.c", true},
		{`{"a":[1,{"x":1},{"y":1,"y":2}]}`, ".a[2].y", true},
		{`{"a":{"x":1},"b":{"x":1}}`, "", false},
		{`{"a":[{"k":1},{"k":2}]}`, "", false},
		{`{"a":"a","b":"a"}`, "", false},
		{`[{"k":1,"k":1}]`, "[0].k", true},
		{`{"\u0061":1,"a":2}`, ".a", true},
		{`{}`, "", false},
		{`{"a":`, "", false},
		{`7`, "", false},
	}
	for _, c := range cases {
		path, dup := DuplicateKey([]byte(c.in))
		if path != c.path || dup != c.dup {
			t.Errorf("%s: %q %v, want %q %v", c.in, path, dup, c.path, c.dup)
		}
	}
}
