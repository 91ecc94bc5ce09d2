package supervisor

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// A tool's bash error points at the script's own file and line, as it did
// under the SDK, not into the snapshot every call sources.
func TestMapLocations(t *testing.T) {
	s, sn := newTestSupervisor(t, `
# a comment, a blank line and a multi-command line shift printed lines
tool_unset() {
    local a=1; local b=2

    # the next line fails
    echo "$a $b $NOPE_UNSET"
}
tool_odd() { if true
  then echo "$ALSO_UNSET"; fi; }
set -u
`)
	script := filepath.Join(filepath.Dir(s.cfg.Script), filepath.Base(s.cfg.Script))
	o := s.Call(context.Background(), Request{ID: "1", Tool: "unset", Args: []byte(`{}`), Snapshot: sn})
	raw := string(o.Output)
	if !strings.Contains(raw, sn.Path+": line ") {
		t.Fatalf("the error does not name the snapshot (nothing to map): %q", raw)
	}
	got := string(sn.MapLocations(o.Output))
	if want := script + ": line 7: NOPE_UNSET: unbound variable"; !strings.Contains(got, want) {
		t.Errorf("mapped %q\nto   %q\nwant %q", raw, got, want)
	}
	o = s.Call(context.Background(), Request{ID: "2", Tool: "odd", Args: []byte(`{}`), Snapshot: sn})
	got = string(sn.MapLocations(o.Output))
	if want := script + ": in tool_odd (defined at line 9): ALSO_UNSET: unbound variable"; !strings.Contains(got, want) {
		t.Errorf("an unmatched printed line: %q, want %q", got, want)
	}
	if other := []byte("no location here"); string(sn.MapLocations(other)) != "no location here" {
		t.Errorf("output without the snapshot's name changed")
	}
}
