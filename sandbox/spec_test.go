package sandbox

import (
	"strings"
	"testing"
	"time"
)

func TestParseSettings(t *testing.T) {
	s, err := ParseSettings([]byte(`{"timeout":"5s","limits":{"memory":"256MiB","cpu":"1m30s","processes":64,"fileSize":1000,"openFiles":256},
		"filesystem":{"read":["/usr","/etc"],"write":["$MCP_CALL_TMPDIR","/srv/data"]},"network":false}`))
	if err != nil {
		t.Fatal(err)
	}
	if s.Memory != 256<<20 || s.CPU != 90*time.Second || s.Processes != 64 || s.FileSize != 1000 || s.OpenFiles != 256 ||
		!s.RestrictRead || !s.RestrictWrite || len(s.Read) != 2 || s.Write[0] != CallTmpVar || !s.NoNetwork {
		t.Fatalf("%+v", s)
	}
	if s, err := ParseSettings([]byte(`{"timeout":"5s"}`)); s != nil || err != nil {
		t.Fatalf("no sandbox keys: %+v %v", s, err)
	}
	if s, err := ParseSettings([]byte(`{"limits":{}}`)); err != nil || s.Empty() {
		t.Fatalf("empty limits ask for containment: %+v %v", s, err)
	}
	if s, _ := ParseSettings([]byte(`{"filesystem":{"write":[]}}`)); !s.RestrictWrite || len(s.Write) != 0 || s.RestrictRead {
		t.Fatalf("empty write list restricts writes only: %+v", s)
	}
	if s, _ := ParseSettings([]byte(`{"network":true}`)); s.NoNetwork {
		t.Fatal("network true")
	}
}

func TestParseSettingsErrors(t *testing.T) {
	for in, want := range map[string]string{
		`{"limits":{"memory":"12XB"}}`:                   `limits: memory: "12XB" is not a size`,
		`{"limits":{"memory":0}}`:                        `limits: memory: 0 is out of range`,
		`{"limits":{"memory":true}}`:                     `limits: memory: true is not a size`,
		`{"limits":{"cpus":2}}`:                          `limits: unknown key "cpus"`,
		`{"limits":{"cpu":"soon"}}`:                      `limits: cpu: "soon" is not a positive duration`,
		`{"limits":{"cpu":-1}}`:                          `limits: cpu: -1 is out of range`,
		`{"limits":{"processes":1.5}}`:                   `limits: processes: 1.5 is not a whole number`,
		`{"limits":{"openFiles":"many"}}`:                `limits: openFiles: "many" is not a whole number`,
		`{"limits":[]}`:                                  `limits: [] is not an object`,
		`{"filesystem":{"exec":[]}}`:                     `filesystem: unknown key "exec"`,
		`{"filesystem":{"read":"/usr"}}`:                 `filesystem: read: "/usr" is not an array of paths`,
		`{"filesystem":{"write":["tmp"]}}`:               `filesystem: write: "tmp" is not an absolute path`,
		`{"filesystem":{"write":["$HOME/x"]}}`:           `only $MCP_CALL_TMPDIR is expanded`,
		`{"filesystem":{"write":["$MCP_CALL_TMPDIRx"]}}`: `only $MCP_CALL_TMPDIR is expanded`,
		`{"network":"no"}`:                               `network: "no" is not true or false`,
	} {
		s, err := ParseSettings([]byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %+v, %v; want an error with %q", in, s, err, want)
		}
	}
}

func TestSizes(t *testing.T) {
	for in, want := range map[string]int64{"4096": 4096, "1K": 1024, "1KiB": 1024, "1kB": 1000, "256MiB": 256 << 20,
		"1.5G": 3 << 29, "2GB": 2e9, "1 TiB": 1 << 40, "100B": 100} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for in, want := range map[int64]string{100: "100 bytes", 1024: "1 KiB", 256 << 20: "256 MiB", 3 << 29: "1.5 GiB", 1000: "1000 bytes"} {
		if got := FormatSize(in); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", in, got, want)
		}
	}
	if d, err := ParseCPU("1500ms"); err != nil || d != 2*time.Second {
		t.Errorf("CPU time rounds up to whole seconds: %v %v", d, err)
	}
}

// A tool's entry overrides the daemon's defaults key by key.
func TestMerge(t *testing.T) {
	empty := ""
	def, err := FromFlags("1GiB", "10s", "", 100, 0, nil, &empty, true)
	if err != nil {
		t.Fatal(err)
	}
	tool, _ := ParseSettings([]byte(`{"limits":{"memory":"64MiB"},"network":true}`))
	m := Merge(def, tool)
	if m.Memory != 64<<20 || m.CPU != 10*time.Second || m.Processes != 100 || m.NoNetwork || !m.RestrictWrite || len(m.Write) != 0 {
		t.Fatalf("%+v", m)
	}
	if Merge(nil, tool) != tool || Merge(def, nil) != def || !Merge(nil, nil).Empty() {
		t.Fatal("merge with nothing")
	}
	if _, err := FromFlags("lots", "", "", -1, 0, nil, nil, false); err == nil ||
		!strings.Contains(err.Error(), "--limit-memory") || !strings.Contains(err.Error(), "--limit-processes") {
		t.Fatalf("bad flags: %v", err)
	}
	if s, err := FromFlags("", "", "", 0, 0, nil, nil, false); s != nil || err != nil {
		t.Fatalf("no flags: %+v %v", s, err)
	}
}

func TestExpandPath(t *testing.T) {
	if got := ExpandPath("$MCP_CALL_TMPDIR/out", "/t/call/tmp"); got != "/t/call/tmp/out" {
		t.Fatal(got)
	}
	if got := ExpandPath("/srv//data/", "/t"); got != "/srv/data" {
		t.Fatal(got)
	}
}
