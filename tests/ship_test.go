package tests

// Ship it (issue 6): what a user meets first, proven on this machine.
//
//   - The static binary: the Dockerfiles' own `go build` line yields an ELF
//     without an interpreter or a dynamic section, and it runs.
//   - Alpine's userland: the daemon and the examples run end to end with a
//     PATH holding only bash and busybox's applets (no coreutils).
//   - Operations: /metrics counts known calls exactly; /healthz says ok.
//   - Host manifests: each examples/manifests/*.json is started exactly as a
//     host would (variables substituted, the built binary first on PATH, a
//     host's small environment) and answers a real MCP session.
//
// No Docker engine runs here, so the images themselves are not built; PID 1
// behaviour is covered by reliability_pid1_test.go.

import (
	"bytes"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
	"github.com/mcp-bashd/mcp-bashd/tests/internal/proctest"
)

var shSeq atomic.Int64

// shMark is a marker value unique to this test process and call.
func shMark(t *testing.T) string {
	return fmt.Sprintf("sh-%s-%d-%d", strings.ReplaceAll(t.Name(), "/", "."), os.Getpid(), shSeq.Add(1))
}

// shRoot is the repository root, absolute.
func shRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(harness.RepoPath(""))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// shCallText runs one tools/call and returns its text, failing on a
// protocol error or an unexpected isError.
func shCallText(t *testing.T, s *harness.Daemon, id int, tool, args string, wantErr bool) string {
	t.Helper()
	line := s.RoundTrip(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, tool, args))
	r := harness.Parse(t, line)
	if string(r.ID) != strconv.Itoa(id) || r.Result == nil || len(r.Result.Content) == 0 {
		t.Fatalf("tools/call %s: unexpected response %s", tool, line)
	}
	if r.Result.IsError != wantErr {
		t.Fatalf("tools/call %s: isError=%v, want %v: %s", tool, r.Result.IsError, wantErr, line)
	}
	return r.Result.Content[0].Text
}

// shEmptyDir fails unless dir holds nothing.
func shEmptyDir(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if len(names) > 0 {
		t.Errorf("%s not empty after the daemon exited: %v", dir, names)
	}
}

// shDrained fails if the daemon wrote anything after its last expected
// line; call it after the daemon exited.
func shDrained(t *testing.T, s *harness.Daemon) {
	t.Helper()
	for line := range s.Lines {
		t.Errorf("unexpected line after the last response: %s", line)
	}
}

// ---------------------------------------------------------------------------
// The static binary.

// shDynamic lists what makes an ELF file depend on a dynamic loader: a
// PT_INTERP program header, a PT_DYNAMIC one, DT_NEEDED entries.
func shDynamic(path string) ([]string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var why []string
	for _, p := range f.Progs {
		switch p.Type {
		case elf.PT_INTERP:
			interp, _ := io.ReadAll(p.Open())
			why = append(why, fmt.Sprintf("PT_INTERP %q", bytes.TrimRight(interp, "\x00")))
		case elf.PT_DYNAMIC:
			why = append(why, "PT_DYNAMIC program header")
		}
	}
	if s := f.Section(".interp"); s != nil {
		why = append(why, ".interp section")
	}
	if s := f.Section(".dynamic"); s != nil {
		why = append(why, ".dynamic section")
		if libs, err := f.ImportedLibraries(); err == nil && len(libs) > 0 {
			why = append(why, fmt.Sprintf("DT_NEEDED %v", libs))
		}
	}
	return why, nil
}

// shDockerfile is what the tests read from a Dockerfile.
type shDockerfile struct {
	build      string // the build stage's go build command line
	out        string // the path it writes (-o)
	entrypoint string
	user       string
	copyFrom   string // COPY --from=build SRC DST, as "SRC DST"
}

func shReadDockerfile(t *testing.T, path string) shDockerfile {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Join continuation lines first.
	text := strings.ReplaceAll(string(b), "\\\n", " ")
	var d shDockerfile
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "RUN ") && strings.Contains(line, " go build "):
			if d.build != "" {
				t.Fatalf("%s: two go build lines", path)
			}
			d.build = strings.TrimPrefix(line, "RUN ")
			f := strings.Fields(d.build)
			for i := range f[:len(f)-1] {
				if f[i] == "-o" {
					d.out = f[i+1]
				}
			}
		case strings.HasPrefix(line, "ENTRYPOINT "):
			d.entrypoint = strings.TrimSpace(strings.TrimPrefix(line, "ENTRYPOINT "))
		case strings.HasPrefix(line, "USER "):
			d.user = strings.TrimSpace(strings.TrimPrefix(line, "USER "))
		case strings.HasPrefix(line, "COPY --from=build "):
			d.copyFrom = strings.Join(strings.Fields(strings.TrimPrefix(line, "COPY --from=build ")), " ")
		}
	}
	if d.build == "" || d.out == "" {
		t.Fatalf("%s: no `RUN ... go build ... -o OUT` line", path)
	}
	return d
}

// The Dockerfiles' own build line (CGO_ENABLED=0, -trimpath, the version
// ldflag) gives a static ELF: no interpreter, no dynamic section, no
// DT_NEEDED. It prints the version it was stamped with, and serves a real
// call with an empty environment (nothing from a host, no PATH).
func TestStaticBinary(t *testing.T) {
	root := shRoot(t)
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal(err)
	}
	// The control: the checker can fail. The distribution's bash is a
	// dynamically linked executable.
	if why, err := shDynamic(bash); err != nil || len(why) == 0 {
		t.Fatalf("checker finds nothing dynamic in %s (err %v): it could never fail", bash, err)
	}
	for _, name := range []string{"Dockerfile.alpine", "Dockerfile.debian"} {
		t.Run(name, func(t *testing.T) {
			d := shReadDockerfile(t, filepath.Join(root, name))
			if !regexp.MustCompile(`(^|\s)CGO_ENABLED=0\s`).MatchString(d.build) {
				t.Errorf("build line does not set CGO_ENABLED=0: %s", d.build)
			}
			if d.entrypoint != `["mcp-bashd"]` {
				t.Errorf("ENTRYPOINT %s, want [\"mcp-bashd\"]", d.entrypoint)
			}
			if d.user == "" || d.user == "root" || d.user == "0" || strings.HasPrefix(d.user, "0:") {
				t.Errorf("runtime user %q is root", d.user)
			}
			if d.copyFrom != d.out+" /usr/local/bin/mcp-bashd" {
				t.Errorf("COPY --from=build %q does not install the binary the build writes (%s)", d.copyFrom, d.out)
			}

			dir := t.TempDir()
			built := filepath.Join(dir, "mcp-bashd")
			const version = "v0.0.0-shtest"
			cmd := exec.Command("bash", "-c", strings.Replace(d.build, d.out, built, 1))
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "VERSION="+version)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", cmd.Args[2], err, out)
			}
			why, err := shDynamic(built)
			if err != nil {
				t.Fatal(err)
			}
			if len(why) > 0 {
				t.Fatalf("%s is not static: %s", name, strings.Join(why, "; "))
			}

			v := exec.Command(built, "version")
			v.Env = []string{}
			out, err := v.Output()
			if err != nil || string(out) != "mcp-bashd "+version+"\n" {
				t.Fatalf("version: %q, %v (want the stamped version %s)", out, err, version)
			}

			tmp := t.TempDir()
			srv := exec.Command(built, "--bash", bash, filepath.Join(root, "examples/plain/tools.sh"))
			srv.Env = []string{"TMPDIR=" + tmp}
			s := harness.StartCmd(t, srv)
			s.RoundTrip(harness.InitLine)
			if got := shCallText(t, s, 1, "echo", `{"static":true}`, false); got != `{"static":true}` {
				t.Fatalf("echo: %q", got)
			}
			if ee := s.CloseAndWait(); ee != nil {
				t.Fatalf("exit: %v\n%s", ee, s.Stderr.String())
			}
			shEmptyDir(t, tmp)
		})
	}
}

// ---------------------------------------------------------------------------
// Alpine's userland: bash plus busybox applets, nothing else on PATH.

// shBusyboxPath makes a directory holding a symlink to busybox for every
// applet it lists, plus bash, and returns it with busybox's path.
func shBusyboxPath(t *testing.T) (dir, busybox string) {
	t.Helper()
	busybox, err := exec.LookPath("busybox")
	if err != nil {
		t.Skip("busybox is not installed (Debian package busybox; .ci/run installs it)")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal(err)
	}
	if busybox, err = filepath.EvalSymlinks(busybox); err != nil {
		t.Fatal(err)
	}
	if bash, err = filepath.EvalSymlinks(bash); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(busybox, "--list").Output()
	if err != nil {
		t.Fatalf("busybox --list: %v", err)
	}
	dir = t.TempDir()
	n := 0
	for _, a := range strings.Fields(string(out)) {
		if a == "bash" || strings.Contains(a, "/") {
			continue
		}
		if err := os.Symlink(busybox, filepath.Join(dir, a)); err != nil {
			t.Fatal(err)
		}
		n++
	}
	for _, must := range []string{"sh", "sed", "awk", "sleep", "mktemp", "date", "cat", "uname", "dirname", "readlink"} {
		if _, err := os.Lstat(filepath.Join(dir, must)); err != nil {
			t.Fatalf("busybox has no %s applet (%d applets)", must, n)
		}
	}
	if err := os.Symlink(bash, filepath.Join(dir, "bash")); err != nil {
		t.Fatal(err)
	}
	return dir, busybox
}

// shBusyboxEnv is the whole environment of a daemon in the busybox
// userland: PATH is the applet directory and nothing else.
func shBusyboxEnv(pathDir, tmp, mark string, extra ...string) []string {
	return append([]string{
		"PATH=" + pathDir,
		"HOME=" + tmp,
		"TMPDIR=" + tmp,
		harness.MarkKey + "=" + mark,
	}, extra...)
}

func TestBusyboxUserland(t *testing.T) {
	pathDir, busybox := shBusyboxPath(t)
	root := shRoot(t)

	// The drop-in greeter, started as `bash server.sh` (its shebang's
	// /usr/bin/env would find the same bash on this PATH).
	t.Run("greeter", func(t *testing.T) {
		tmp, logs, mark := t.TempDir(), t.TempDir(), shMark(t)
		cmd := exec.Command(filepath.Join(pathDir, "bash"), filepath.Join(root, "examples/greeter/server.sh"))
		cmd.Env = shBusyboxEnv(pathDir, tmp, mark, "MCP_BASHD="+harness.Binary, "MCP_LOG_FILE="+filepath.Join(logs, "greeter.log"))
		s := harness.StartCmd(t, cmd)
		if got := s.RoundTrip(harness.InitLine); !strings.Contains(got, `"serverInfo":{"name":"greeter","version":"1.0.0"}`) {
			t.Fatalf("initialize: %s", got)
		}
		s.Send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		if list := s.RoundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`); !strings.Contains(list, `"name":"greet"`) {
			t.Fatalf("tools/list: %s", list)
		}
		if got := shCallText(t, s, 2, "greet", `{"name":"Ada"}`, false); got != "Hello, Ada" {
			t.Fatalf("greet: %q", got)
		}
		for i := 1; i <= 3; i++ {
			if got := shCallText(t, s, 10+i, "count", `{}`, false); got != strconv.Itoa(i) {
				t.Fatalf("count %d: %q", i, got)
			}
		}
		if got := shCallText(t, s, 3, "fail", `{}`, true); got != "Error executing fail: this tool always fails" {
			t.Fatalf("fail: %q", got)
		}
		if ee := s.CloseAndWait(); ee != nil {
			t.Fatalf("exit: %v\n%s", ee, s.Stderr.String())
		}
		shDrained(t, s)
		harness.WaitNoneLeft(t, mark, -1, "no process left with "+mark)
		shEmptyDir(t, tmp) // the state file (EXIT trap) and every call root
	})

	// examples/plain in manifest mode: uname is busybox's.
	t.Run("plain", func(t *testing.T) {
		tmp, mark := t.TempDir(), shMark(t)
		cmd := exec.Command(harness.Binary, filepath.Join(root, "examples/plain/tools.sh"))
		cmd.Env = shBusyboxEnv(pathDir, tmp, mark)
		s := harness.StartCmd(t, cmd)
		s.RoundTrip(harness.InitLine)
		if got := shCallText(t, s, 1, "echo", `{"a":[1,"two"]}`, false); got != `{"a":[1,"two"]}` {
			t.Fatalf("echo: %q", got)
		}
		if got := shCallText(t, s, 2, "sysinfo", `{}`, false); !regexp.MustCompile(`^bash \S+ on Linux \S+$`).MatchString(got) {
			t.Fatalf("sysinfo: %q", got)
		}
		if got := shCallText(t, s, 3, "slow", `{"seconds":0}`, false); got != "slept 0s" {
			t.Fatalf("slow: %q", got)
		}
		if ee := s.CloseAndWait(); ee != nil {
			t.Fatalf("exit: %v\n%s", ee, s.Stderr.String())
		}
		shDrained(t, s)
		harness.WaitNoneLeft(t, mark, -1, "no process left with "+mark)
		shEmptyDir(t, tmp)
	})

	// The tool server for the remaining scenarios.
	const tools = `
tool_text() {
    local f c
    f=$(mktemp "$MCP_CALL_TMPDIR/text.XXXXXX") || return 1
    printf 'b a\nd c\n' >"$f"
    sed 's/a/A/' "$f" | awk '{ print $2 "-" $1 }'
    sleep 0.01
    date -u -d @86400 +%Y-%m-%d
    cat "$f" | wc -l
    for c in sed awk sleep mktemp date cat; do
        printf '%s=%s\n' "$c" "$(readlink "$(command -v "$c")")"
    done
}
tool_nap() { echo "$$" >"$SH_DIR/nap.ready"; sleep 1000; echo woke; }
tool_hold() {
    echo "$$" >"$SH_DIR/hold.ready"
    while [ ! -e "$SH_DIR/hold.go" ]; do sleep 0.01; done
    echo released
}
`
	start := func(t *testing.T) (s *harness.Daemon, dir, tmp, mark string) {
		dir = harness.WriteFiles(t, map[string]string{"tools.sh": tools, "tools.json": harness.ToolsJSON("text", "nap", "hold")})
		tmp, mark = t.TempDir(), shMark(t)
		cmd := exec.Command(harness.Binary, "--grace", "5s", filepath.Join(dir, "tools.sh"))
		cmd.Env = shBusyboxEnv(pathDir, tmp, mark, "SH_DIR="+dir)
		s = harness.StartCmd(t, cmd)
		s.RoundTrip(harness.InitLine)
		return s, dir, tmp, mark
	}

	t.Run("commands", func(t *testing.T) {
		s, _, tmp, mark := start(t)
		want := "A-b\nc-d\n1970-01-02\n2"
		for _, c := range []string{"sed", "awk", "sleep", "mktemp", "date", "cat"} {
			want += "\n" + c + "=" + busybox
		}
		if got := shCallText(t, s, 1, "text", `{}`, false); got != want {
			t.Fatalf("text:\n got %q\nwant %q", got, want)
		}
		if ee := s.CloseAndWait(); ee != nil {
			t.Fatalf("exit: %v\n%s", ee, s.Stderr.String())
		}
		shDrained(t, s)
		harness.WaitNoneLeft(t, mark, -1, "no process left with "+mark)
		shEmptyDir(t, tmp)
	})

	// notifications/cancelled for a tool in busybox sleep: the group dies
	// on SIGTERM (well before the 5 s grace would KILL it), no response for
	// that id, the daemon keeps answering.
	t.Run("cancel", func(t *testing.T) {
		s, dir, tmp, mark := start(t)
		s.Send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"nap","arguments":{}}}`)
		proctest.WaitUntil(t, harness.Deadline(t), "the nap tool's busybox sleep", func() (bool, string) {
			if _, err := os.Stat(filepath.Join(dir, "nap.ready")); err != nil {
				return false, "no ready file"
			}
			ps, err := proctest.WithEnv(harness.MarkKey, mark)
			if err != nil {
				return false, err.Error()
			}
			for _, p := range proctest.Alive(ps) {
				if p.Comm == "sleep" && len(p.Cmdline) > 0 && p.Cmdline[0] == "sleep" {
					return true, ""
				}
			}
			return false, fmt.Sprint(ps)
		})
		s.Send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5,"reason":"test"}}`)
		harness.WaitNoneLeft(t, mark, s.Cmd.Process.Pid, "no process left with "+mark)
		if got := s.RoundTrip(`{"jsonrpc":"2.0","id":6,"method":"ping"}`); got != `{"jsonrpc":"2.0","id":6,"result":{}}` {
			t.Fatalf("ping after cancel: %s", got)
		}
		if ee := s.CloseAndWait(); ee != nil {
			t.Fatalf("exit: %v\n%s", ee, s.Stderr.String())
		}
		shDrained(t, s) // nothing for id 5, ever
		harness.WaitNoneLeft(t, mark, -1, "no process left with "+mark)
		shEmptyDir(t, tmp)
	})

	// stdin EOF with a call in flight: the call finishes and is answered,
	// then the daemon exits 0.
	t.Run("eof", func(t *testing.T) {
		s, dir, tmp, mark := start(t)
		s.Send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"hold","arguments":{}}}`)
		proctest.WaitUntil(t, harness.Deadline(t), "the hold tool to start", func() (bool, string) {
			_, err := os.Stat(filepath.Join(dir, "hold.ready"))
			return err == nil, fmt.Sprint(err)
		})
		s.Stdin.Close()
		if err := os.WriteFile(filepath.Join(dir, "hold.go"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		r := harness.Parse(t, string(s.Recv()))
		if string(r.ID) != "7" || r.Result == nil || r.Result.IsError || r.Result.Content[0].Text != "released" {
			t.Fatalf("hold after EOF: %+v", r)
		}
		if ee := s.CloseAndWait(); ee != nil {
			t.Fatalf("exit: %v\n%s", ee, s.Stderr.String())
		}
		shDrained(t, s)
		harness.WaitNoneLeft(t, mark, -1, "no process left with "+mark)
		shEmptyDir(t, tmp)
	})
}
