package transport

import "testing"

// The era is decided by the version a request carries, never by its
// method alone (server/discover aside), and a legacy-only server has one.
func TestDecide(t *testing.T) {
	withVersion := ParseMeta([]byte(`{"_meta":{"` + MetaVersion + `":"2026-07-28","` + MetaCaps + `":{}}}`))
	withBadVersion := ParseMeta([]byte(`{"_meta":{"` + MetaVersion + `":7}}`))
	cases := []struct {
		name    string
		method  string
		meta    Meta
		header  string
		enabled bool
		want    Era
	}{
		{"plain initialize", "initialize", Meta{}, "", true, Legacy},
		{"initialize carrying the 2026 version", "initialize", withVersion, "", true, Modern},
		{"discover", "server/discover", Meta{}, "", true, Modern},
		{"a version key of any type", "tools/list", withBadVersion, "", true, Modern},
		{"the HTTP header", "tools/list", Meta{}, ModernVersion, true, Modern},
		{"another header version", "tools/list", Meta{}, "2025-06-18", true, Legacy},
		{"legacy-only server", "server/discover", withVersion, ModernVersion, false, Legacy},
	}
	for _, c := range cases {
		if got := Decide(c.method, c.meta, c.header, func() bool { return c.enabled }); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	if !withBadVersion.HasVersion || withBadVersion.VersionIsStr || withBadVersion.Caps != nil {
		t.Errorf("meta with a numeric version: %+v", withBadVersion)
	}
}
