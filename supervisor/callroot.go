package supervisor

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"

	"github.com/mcp-bashd/mcp-bashd/tmpdir"
)

// callRoot is the directory a process that runs server code works in:
// $TMPDIR/mcp-call.XXXXXX (tmpdir.Create: mode 0700, tmpdir's owner record
// inside; the prefix is the SDK's documented pattern). A call has one, its
// cancel hook shares it, and the EXIT-trap run and each tools-directory
// `list` get their own. It is removed, whatever is in it, once the
// process group that used it is gone.
//
// This file is the specification of what a root holds. Go names each file
// through a method below; bash uses the names as literals (worker.sh as
// "$__mcpbashd_root/NAME", the shim through the environment variables),
// and TestCallRootNamesInScripts fails when the two sides disagree.
//
//	args     the call's arguments JSON, exactly as the client sent them;
//	         empty for the EXIT trap and for a cancel hook at shutdown.
//	         Written by Go before the spawn; worker.sh reads it whole
//	         (read -d '') and passes it as $1 (a tools-dir executable: $2).
//	         A file, not argv: Linux caps one argv string at 128 KiB.
//	values   MCP_BASHD_ARGS: a tool call's arguments decoded for mcp_arg,
//	         as a bash function the shim sources on first use
//	         (argvalues.go says its form). Written by Go beside args;
//	         absent for resource, prompt and completion functions.
//	out      stdout and stderr of a call (call mode), stdout of a tools-dir
//	         executable (exec and list modes). Go creates it (O_APPEND, so
//	         every writer appends) and hands it over as fds 1 and 2, then
//	         reads at most Config.OutputCap of it (a result's budget:
//	         output first, then content records and copies). A file, not a
//	         pipe: a background child holding it open cannot hang the call.
//	stderr   exec and list modes: the executable's stderr, kept apart from
//	         its result (logged, and joined to the text of a failure).
//	phase    worker.sh, around mcp_before_tool_call: "hook" before it runs,
//	         "refused N" when it returned N≠0 (the tool does not run),
//	         "tool" when the tool runs. No newline. Go reads it to tell "the
//	         tool failed" from "the call ended inside the hook"; absent means
//	         there was no hook.
//	hook     worker.sh: the hook's stdout and stderr; Go reads it (capped)
//	         when phase is not "tool".
//	opts     worker.sh only: `shopt -p; set +o` saved before the hook and
//	         replayed after it, so the hook cannot change the tool's options.
//	events   MCP_BASHD_EVENTS: notifications (mcp_progress, mcp_log) the
//	         shim appends while the call runs; Go tails it (events.go).
//	content  MCP_BASHD_CONTENT: result items (mcp_text, mcp_image, …) the
//	         shim appends; Go reads it once the call ended (content.go).
//	content.N  the bytes of one mcp_image or mcp_audio, copied by the shim
//	         in the tool's own process (so /dev/stdin, a FIFO or a relative
//	         path mean what they mean to the tool) and stopped just past
//	         MCP_BASHD_OUTPUT_CAP bytes; its content record names it.
//	events.N a reply FIFO of one mcp_ask (ask.go): made by the shim,
//	         named in its ask record, written once by Go and removed.
//	tmp/     MCP_CALL_TMPDIR: the tool's own scratch directory, made by Go
//	         (the SDK's contract: it exists when the tool starts and is
//	         gone after the call).
//
// A tool can replace any of these files with anything (a symlink to
// /dev/stdin, a FIFO, a device), so Go reads them only through openRegular:
// never following a symlink, never blocking in open(2), only a regular
// file, and never more than a limit.
type callRoot string

func (r callRoot) file(name string) string { return filepath.Join(string(r), name) }

// Args is the arguments file. See callRoot for each file's contract.
func (r callRoot) Args() string    { return r.file("args") }
func (r callRoot) Out() string     { return r.file("out") }
func (r callRoot) Stderr() string  { return r.file("stderr") }
func (r callRoot) Phase() string   { return r.file("phase") }
func (r callRoot) Hook() string    { return r.file("hook") }
func (r callRoot) Opts() string    { return r.file("opts") }
func (r callRoot) Events() string  { return r.file("events") }
func (r callRoot) Content() string { return r.file("content") }
func (r callRoot) Tmp() string     { return r.file("tmp") }
func (r callRoot) Values() string  { return r.file("values") }

// The environment variables through which a root reaches bash. The first is
// the prelude's; the others are the shim's and the tools' (documented to
// tool authors), and none of them may leak from the daemon's own
// environment into a child (childEnv drops them).
const (
	envRoot    = "__MCPBASHD_ROOT"
	envCallTmp = "MCP_CALL_TMPDIR"
	envEvents  = "MCP_BASHD_EVENTS"
	envContent = "MCP_BASHD_CONTENT"
	envCap     = "MCP_BASHD_OUTPUT_CAP" // bytes; empty: no cap
	envValues  = "MCP_BASHD_ARGS"
)

// env is what a process running server code learns of its root, and the
// output cap the shim bounds its content copies by (<= 0: none).
func (r callRoot) env(outputCap int64) []string {
	limit := capString(outputCap)
	return []string{
		envRoot + "=" + string(r),
		envCallTmp + "=" + r.Tmp(),
		envEvents + "=" + r.Events(),
		envContent + "=" + r.Content(),
		envCap + "=" + limit,
		envValues + "=" + r.Values(),
	}
}

// copyFile is the content copy a record names (see callRoot): only a name
// the shim gives, content.N, is accepted — never a path, so a record can
// point at nothing but a file of this root.
func (r callRoot) copyFile(name string) (string, bool) {
	n, ok := strings.CutPrefix(name, filepath.Base(r.Content())+".")
	if !ok || n == "" || len(n) > 9 || strings.Trim(n, "0123456789") != "" {
		return "", false
	}
	return r.file(name), true
}

// replyFile is the reply FIFO an ask record names (see callRoot): only
// events.N, never a path.
func (r callRoot) replyFile(name string) (string, bool) {
	n, ok := strings.CutPrefix(name, filepath.Base(r.Events())+".")
	if !ok || n == "" || len(n) > 9 || strings.Trim(n, "0123456789") != "" {
		return "", false
	}
	return r.file(name), true
}

// errNotRegular: a root file a tool replaced with something else.
var errNotRegular = errors.New("not a regular file")

// openRegular opens a file of a root for reading the only way the daemon
// may: O_NOFOLLOW (a symlink to /dev/stdin is refused, not followed),
// O_NONBLOCK (open(2) on a FIFO returns at once instead of waiting for a
// writer), and only when it then is a regular file. It returns the size.
func openRegular(path string) (rawFile, int64, error) {
	fd, err := openRaw(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return rawFile{-1}, 0, err
	}
	var st unix.Stat_t
	err = unix.Fstat(fd, &st)
	if err == nil && st.Mode&unix.S_IFMT != unix.S_IFREG {
		err = errNotRegular
	}
	if err != nil {
		unix.Close(fd)
		return rawFile{-1}, 0, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	return rawFile{fd}, st.Size, nil
}

// readRegular reads at most max bytes (max < 0: no limit) of a root's
// regular file and reports how many more it held. A file is never read
// whole: a tool may write gigabytes, or grow it while it is read.
func readRegular(path string, max int64) ([]byte, int64, error) {
	f, size, err := openRegular(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	n := size
	if max >= 0 && n > max {
		n = max
	}
	b := make([]byte, n)
	got, err := f.ReadAt(b, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return b[:got], 0, err
	}
	return b[:got], size - int64(got), nil
}

// What the phase file says (see callRoot); also Outcome.Phase's values.
const (
	phaseTool    = "tool"
	phaseHook    = "hook"
	phaseRefused = "refused"
)

// readPhase reports where a call ended: phaseTool (the tool ran, or there
// was no hook), phaseHook (the hook exited or was killed instead of
// returning) or phaseRefused with the hook's non-zero status.
func (r callRoot) readPhase() (phase string, hookStatus int) {
	b, _, err := readRegular(r.Phase(), 64)
	if err != nil {
		return phaseTool, 0
	}
	switch p := string(b); {
	case p == phaseHook:
		return phaseHook, 0
	case strings.HasPrefix(p, phaseRefused+" "):
		fmt.Sscanf(p, phaseRefused+" %d", &hookStatus)
		return phaseRefused, hookStatus
	}
	return phaseTool, 0
}

// rootError is a root that could not be made: in path (TMPDIR), or its
// tmp/ directory at path (MCP_CALL_TMPDIR).
type rootError struct {
	path string
	tmp  bool
	err  error
}

func (e *rootError) Error() string {
	if e.tmp {
		return fmt.Sprintf("create MCP_CALL_TMPDIR %s: %v", e.path, e.err)
	}
	return fmt.Sprintf("create call directory in %s: %v", e.path, e.err)
}

func (e *rootError) Unwrap() error { return e.err }

// writeValues writes the root's values file, when there are values.
func writeValues(root callRoot, values []byte) error {
	if values == nil {
		return nil
	}
	return writeNew(root.Values(), values)
}

// newRoot creates a root with its tmp/ directory, args and values files. Its errors
// (*rootError) are the root's creation failing (the SDK's "call
// directory" result); the root is removed again when any step fails.
func (s *Supervisor) newRoot(args, values []byte, log *zap.Logger) (callRoot, error) {
	dir, err := tmpdir.Create(s.base, tmpdir.CallPrefix, s.owner)
	if err != nil {
		return "", &rootError{path: s.base, err: err}
	}
	root := callRoot(dir)
	if err := unix.Mkdir(root.Tmp(), 0o700); err != nil {
		s.removeRoot(root, log)
		return "", &rootError{path: root.Tmp(), tmp: true, err: &os.PathError{Op: "mkdir", Path: root.Tmp(), Err: err}}
	}
	// Writing the root's files is part of creating it: a full TMPDIR fails
	// here as often as at mkdir.
	if err := writeNew(root.Args(), args); err != nil {
		s.removeRoot(root, log)
		return "", &rootError{path: s.base, err: fmt.Errorf("write arguments: %w", err)}
	}
	if err := writeValues(root, values); err != nil {
		s.removeRoot(root, log)
		return "", &rootError{path: s.base, err: fmt.Errorf("write arguments: %w", err)}
	}
	return root, nil
}

// removeRoot takes a finished root out of TMPDIR before the call is
// answered, but does not make the answer wait for the filesystem to free
// its files (0.2–0.7 ms a directory on an ext4 mounted with discard): one
// rename moves it into the runtime directory as gone.N, and one goroutine
// removes those in turn (one, so that a burst of calls does not become a
// burst of threads blocked in unlinkat); Close waits for it. When the
// rename cannot be done (another filesystem, say), the queue is full or
// the supervisor is closing, it is removed here.
func (s *Supervisor) removeRoot(root callRoot, log *zap.Logger) {
	if s.gone != nil {
		gone := filepath.Join(s.runtime, "gone."+strconv.FormatUint(s.goneSeq.Add(1), 10))
		if renameNoReplace(string(root), gone) == nil {
			root = callRoot(gone)
			s.usersMu.Lock()
			queued := false
			if !s.closing {
				select {
				case s.gone <- gone:
					queued = true
				default:
				}
			}
			s.usersMu.Unlock()
			if queued {
				return
			}
		}
	}
	s.removeNow(root, log)
}

// removeGone removes the roots removeRoot queued, until Close.
func (s *Supervisor) removeGone() {
	defer close(s.goneDone)
	for dir := range s.gone {
		s.removeNow(callRoot(dir), s.log)
	}
}

// removeNow removes a root; one that cannot be removed now (out of file
// descriptors, say) is kept on a list and retried after later calls and at
// Close, so it is not left behind until the next daemon's sweep.
func (s *Supervisor) removeNow(root callRoot, log *zap.Logger) {
	if err := tmpdir.Remove(string(root)); err != nil {
		log.Warn(fmt.Sprintf("Cannot remove call directory %s: %v", root, err), zap.String("path", string(root)), zap.Error(err), zap.Bool("will_retry", true))
		s.leftMu.Lock()
		s.leftovers = append(s.leftovers, string(root))
		s.leftMu.Unlock()
		return
	}
	s.retryLeftovers()
}

func (s *Supervisor) retryLeftovers() {
	s.leftMu.Lock()
	defer s.leftMu.Unlock()
	kept := s.leftovers[:0]
	for _, dir := range s.leftovers {
		if err := tmpdir.Remove(dir); err != nil {
			kept = append(kept, dir)
		}
	}
	s.leftovers = kept
}

// openAppend creates (or opens) a root file a child writes through fds.
func openAppend(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
}
