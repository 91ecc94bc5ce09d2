package uritemplate

import (
	"maps"
	"testing"

	ref "github.com/yosida95/uritemplate/v3"
)

// Each case is expanded by an independent RFC 6570 implementation (the one
// the official Go SDK uses), and the expansion must match back to the
// same variables: the matcher is the inverse of real expansion, not of our
// own idea of it.
func TestMatchInvertsReferenceExpansion(t *testing.T) {
	cases := []struct {
		tmpl string
		vars map[string]string
	}{
		// Level 1.
		{"test://template/{id}/data", map[string]string{"id": "123"}},
		{"notes://{name}", map[string]string{"name": "shopping list"}},
		{"x://{v}", map[string]string{"v": "50%/off?#"}},
		// Level 2: reserved and fragment.
		{"file:///{+path}", map[string]string{"path": "home/user/notes.txt"}},
		{"file:///{+path}", map[string]string{"path": "a/b,c;d=e"}},
		{"doc://{id}{#section}", map[string]string{"id": "7", "section": "intro/part?1"}},
		// Level 3: several variables and the prefixed operators.
		{"map://{x,y}", map[string]string{"x": "1024", "y": "768"}},
		{"map://{+x,y}", map[string]string{"x": "a/b", "y": "c/d"}},
		{"x://host{/a,b}", map[string]string{"a": "one", "b": "two"}},
		{"x://host{/a,b}", map[string]string{"a": "one"}},
		{"x://host/file{.ext}", map[string]string{"ext": "json"}},
		{"x://host/file{.a,b}", map[string]string{"a": "tar", "b": "gz"}},
		{"x://host/p{;x,y}", map[string]string{"x": "1", "y": ""}},
		{"x://host/p{;x,y}", map[string]string{"y": "2"}},
		{"search://items{?q,limit}", map[string]string{"q": "red shoes", "limit": "10"}},
		{"search://items{?q,limit}", map[string]string{"limit": "10"}},
		{"search://items{?q}{&page}", map[string]string{"q": "x", "page": "3"}},
		{"search://items?fixed=1{&q}", map[string]string{"q": "y"}},
		{"users://{userId}/posts/{postId}{?fields}", map[string]string{"userId": "u1", "postId": "p2", "fields": "a,b"}},
	}
	for _, c := range cases {
		vals := ref.Values{}
		for k, v := range c.vars {
			vals.Set(k, ref.String(v))
		}
		uri, err := ref.MustNew(c.tmpl).Expand(vals)
		if err != nil {
			t.Fatalf("%s: reference expansion: %v", c.tmpl, err)
		}
		tm, err := Parse(c.tmpl)
		if err != nil {
			t.Fatalf("%s: %v", c.tmpl, err)
		}
		got, ok := tm.Match(uri)
		if !ok {
			t.Errorf("%s does not match its own expansion %q", c.tmpl, uri)
			continue
		}
		if !maps.Equal(got, c.vars) {
			t.Errorf("%s matched %q as %q, want %q", c.tmpl, uri, got, c.vars)
		}
	}
}

// RFC 6570 §1.6: non-ASCII characters are UTF-8 encoded, then
// percent-encoded (the reference implementation above encodes code points
// below 256 as one byte, so these are written out). A client that sends
// them unencoded is understood too.
func TestMatchNonASCII(t *testing.T) {
	tm, _ := Parse("x://{v}/end")
	for _, uri := range []string{"x://%E6%97%A5%E6%9C%AC%20h%C3%A9/end", "x://日本 hé/end"} {
		got, ok := tm.Match(uri)
		if !ok || got["v"] != "日本 hé" {
			t.Errorf("%q: got %q, %v", uri, got, ok)
		}
	}
}

func TestMatchRefuses(t *testing.T) {
	cases := []struct{ tmpl, uri string }{
		{"test://template/{id}/data", "test://template/1/2/data"}, // a simple value never spans "/"
		{"test://template/{id}/data", "test://template//data"},    // nor is it empty
		{"test://template/{id}/data", "test://template/123/data/"},
		{"test://template/{id}/data", "other://template/123/data"},
		{"test://template/{id}", "test://template/%zz"}, // a bad escape
		{"file:///{+path}", "file:///a?q"},              // a query is not part of a reserved value
		{"x://{a}.txt", "x://b.csv"},
	}
	for _, c := range cases {
		tm, err := Parse(c.tmpl)
		if err != nil {
			t.Fatalf("%s: %v", c.tmpl, err)
		}
		if got, ok := tm.Match(c.uri); ok {
			t.Errorf("%s matched %q as %q; want no match", c.tmpl, c.uri, got)
		}
	}
}

func TestMatchIgnoresUnnamedQueryParameters(t *testing.T) {
	tm, _ := Parse("search://items{?q}")
	got, ok := tm.Match("search://items?utm=x&q=shoes&other")
	if !ok || !maps.Equal(got, map[string]string{"q": "shoes"}) {
		t.Errorf("got %q, %v", got, ok)
	}
}

func TestParseRefuses(t *testing.T) {
	for tmpl, want := range map[string]string{
		"x://{id":        "unclosed '{' at offset 4",
		"x://id}":        "unmatched '}' at offset 6",
		"x://{}":         "expression {}: empty",
		"x://{var:3}":    `expression {var:3}: variable "var:3" uses a level 4 modifier (prefix or explode), which cannot be matched`,
		"x://{/path*}":   `expression {/path*}: variable "path*" uses a level 4 modifier (prefix or explode), which cannot be matched`,
		"x://{a b}":      `expression {a b}: variable name "a b" is not valid`,
		"x://{=a}":       `expression {=a}: operator '=' is reserved for future extensions`,
		"x://{a,,b}":     `expression {a,,b}: variable name "" is not valid`,
		"x://{a}/{b-c}":  `expression {b-c}: variable name "b-c" is not valid`,
		"x://{%zz}":      `expression {%zz}: variable name "%zz" is not valid`,
		"x://{a.}":       `expression {a.}: variable name "a." is not valid`,
		"x://{@a}":       `expression {@a}: operator '@' is reserved for future extensions`,
		"x://{|a}":       `expression {|a}: operator '|' is reserved for future extensions`,
		"x://{!a}":       `expression {!a}: operator '!' is reserved for future extensions`,
		"x://{,a}":       `expression {,a}: operator ',' is reserved for future extensions`,
		"x://{a}{b}}{c}": "unmatched '}' at offset 10",
	} {
		_, err := Parse(tmpl)
		if err == nil || err.Error() != want {
			t.Errorf("Parse(%q) = %v; want %q", tmpl, err, want)
		}
	}
}

func TestNames(t *testing.T) {
	tm, err := Parse("users://{userId}/posts/{postId}{?fields,userId}")
	if err != nil {
		t.Fatal(err)
	}
	if got := tm.Names(); len(got) != 3 || got[0] != "userId" || got[1] != "postId" || got[2] != "fields" {
		t.Errorf("Names = %q", got)
	}
}
