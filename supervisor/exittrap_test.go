package supervisor

import (
	"os"
	"path/filepath"
	"testing"
)

// A snapshot knows whether the script left an EXIT handler, so a server
// without one starts no process for it at shutdown; posix mode's report
// of no handler (`trap -- - EXIT`) and an ignored EXIT are none.
func TestSnapshotKnowsItsExitTrap(t *testing.T) {
	for _, c := range []struct {
		name, script string
		want         bool
	}{
		{"none", "tool_a() { :; }\n", false},
		{"a handler", "trap 'echo bye >>\"$OUT\"' EXIT\n", true},
		{"a handler over two lines", "trap 'echo bye\necho again >>\"$OUT\"' EXIT\n", true},
		{"set then removed", "trap 'echo bye' EXIT\ntrap - EXIT\n", false},
		{"ignored", "trap '' EXIT\n", false},
		{"posix mode, none", "set -o posix\n", false},
		{"posix mode, a handler", "set -o posix\ntrap 'echo bye >>\"$OUT\"' EXIT\n", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			t.Setenv("OUT", out)
			s, sn := newTestSupervisor(t, c.script)
			if sn.ExitTrap != c.want {
				t.Fatalf("ExitTrap = %v, want %v", sn.ExitTrap, c.want)
			}
			s.RunExitTrap(sn)
			b, _ := os.ReadFile(out)
			if ran := len(b) > 0; ran != c.want {
				t.Fatalf("the handler ran: %v (%q), want %v", ran, b, c.want)
			}
		})
	}
}
