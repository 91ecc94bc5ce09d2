package tests

// Issue 23, item 11: a TMPDIR that fills up while warm processes wait.
// Every call then gets the answer a cold call gets in a full TMPDIR (the
// call-directory error), every time — also when a page is free, less
// than the room the daemon reserves for a call's output (docs/operations.md) — never "Error executing echo: "
// from a hand-over that passed its free-space check and whose tool then
// could not write; once space is back calls work; TMPDIR is empty at exit.

import (
	"fmt"
	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/proctest"
)

func TestWarmFullTMPDIRAnswersLikeCold(t *testing.T) {
	unshare, err := exec.LookPath("unshare")
	if err != nil || os.Geteuid() != 0 {
		t.Skip("needs root and unshare(1) to mount a private tmpfs")
	}
	const mountCmd = `mount -t tmpfs -o size=4m,mode=755 warm-full-tmpdir "$WF_TMP"`
	dir := harness.WriteFiles(t, map[string]string{
		"server.sh":  `tool_echo() { printf '%s' "$1"; }`,
		"tools.json": harness.ToolsJSON("echo"),
	})
	mnt := t.TempDir()
	mark := fmt.Sprintf("%s-%d", t.Name(), os.Getpid())
	cmd := exec.Command(unshare, "-m", "--propagation", "private", "bash", "-c", mountCmd+` && exec "$0" "$@"`, harness.Binary, filepath.Join(dir, "server.sh"))
	cmd.Env = append(os.Environ(), "WF_TMP="+mnt, "TMPDIR="+mnt, harness.MarkKey+"="+mark)
	s := harness.StartCmd(t, cmd)
	pid := s.Cmd.Process.Pid
	s.RoundTrip(harness.InitLine)
	d := s
	d.Mark = mark
	tmp := fmt.Sprintf("/proc/%d/root%s", pid, mnt)
	var st syscall.Statfs_t
	if err := syscall.Statfs(tmp, &st); err != nil || st.Type != 0x01021994 { // TMPFS_MAGIC
		t.Fatalf("the daemon's TMPDIR %s is not its private tmpfs (type %#x): %v", tmp, st.Type, err)
	}
	arg := `{"a":"` + strings.Repeat("x", 2000) + `"}`
	if got := s.RoundTrip(rlCall(`"before"`, "echo", arg)); !strings.Contains(got, `"isError":false`) {
		t.Fatalf("a call with room in TMPDIR: %.200s", got)
	}
	// Filled while the pool's processes wait for calls.
	waitWarm(t, d)
	fill := filepath.Join(tmp, "fill")
	f, err := os.Create(fill)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			break
		}
	}
	// Full but for one page: the background removal of an earlier root,
	// or another process, gives a little back. The free-space check
	// passes, the arguments fit, and the output would not.
	if fi, err := f.Stat(); err != nil || f.Truncate(fi.Size()-4096) != nil {
		t.Fatalf("freeing a page: %v", err)
	}
	f.Close()
	want := `{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"Cannot run echo: its call directory could not be created."}],"isError":true}}`
	for i := 0; i < 20; i++ {
		if got := s.RoundTrip(rlCall(fmt.Sprint(i), "echo", arg)); got != fmt.Sprintf(want, i) {
			t.Errorf("call %d in a full TMPDIR: %.300s", i, got)
		}
	}
	if err := os.Remove(fill); err != nil {
		t.Fatal(err)
	}
	if got := s.RoundTrip(rlCall(`"after"`, "echo", arg)); !strings.Contains(got, `"isError":false`) || !strings.Contains(got, strings.Repeat("x", 2000)) {
		t.Fatalf("a call once TMPDIR has room again: %.200s", got)
	}
	// Nothing of any call is left: TMPDIR holds the daemon's runtime
	// directory only (removed at exit, like the private tmpfs itself).
	proctest.WaitUntil(t, harness.Deadline(t), "TMPDIR to hold the runtime directory only", func() (bool, string) {
		ents, _ := os.ReadDir(tmp)
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		return len(names) == 1 && strings.HasPrefix(names[0], "mcp-bashd."), fmt.Sprint(names)
	})
	if ee := s.CloseAndWait(); ee != nil {
		t.Fatalf("exit after EOF: %v", ee)
	}
}
