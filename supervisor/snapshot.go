package supervisor

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// The snapshot file: a server script's shell state once its top level has
// run, which every call sources instead of running the script again. This
// comment is its specification; the shim's __mcpbashd_dump writes it,
// storeSnapshot trims it, scripts/worker.sh sources it.
//
// What the shim writes, line by line, in this order:
//
//	# mcp-bashd snapshot v1       the header; Go refuses a file without it
//	#rdwr PRINTED                 how this bash prints `{ : 1<>/dev/null; }`,
//	                              on one line (snapshot_rdwr.go)
//	#fn NAME                      one per shell function (compgen -A function),
//	                              first, so Go knows the functions without
//	                              running bash (Snapshot.Functions)
//	{                             a group whose stderr is silenced: restoring
//	                              a read-only variable prints an error that
//	                              does not matter
//	declare -- NAME="VALUE"       `declare -p` of every variable but bash's own
//	                              specials (BASH*, PWD, RANDOM, …) and ours
//	                              (__mcpbashd_*, __MCPBASHD_*, MCP_CALL_TMPDIR);
//	                              a value holding a newline spans lines in bash
//	                              before 5.2 (5.2 prints it as $'…')
//	#shim PATH                    the file the shim's functions come from
//	#def NAME LINE FILE           before each function: where bash says it was
//	                              defined (`declare -F` under extdebug)
//	NAME ()                       `declare -f NAME`; its last line is "}"
//	{ …
//	}
//	} 2>/dev/null                 the group's end
//	__mcpbashd_options() {        `shopt -p` and `set +o`: one shopt or set
//	shopt -s NAME | set -o NAME   command per line, replayed in every call
//	}
//	__mcpbashd_exit_trap() {      the EXIT trap (`trap -p EXIT`, possibly over
//	:                             several lines); calling the function installs
//	trap -- '…' EXIT              it, and the exit that follows runs it; ":"
//	}                             keeps the body from being empty
//	builtin cd -- DIR 2>/dev/null the working directory
//
// run_mcp_server, run_mcp_http_server and the shim's helpers they use are
// not dumped: calls never serve.
// The #fn, #shim and #def lines are comments to bash. A call's prelude
// sources the file, calls __mcpbashd_options with stderr silenced, and the
// EXIT-trap run calls __mcpbashd_exit_trap and exits.
//
// What Go changes before it stores the file, in one pass over its lines
// (every call parses the file, so whatever is left out is work saved on
// every call; everything else is kept byte for byte):
//
//   - `declare -x NAME="VALUE"` lines among the variables, when VALUE is
//     what the call gets from its environment anyway (in the drop-in form:
//     every variable exported before the daemon was started and not changed
//     since);
//   - option lines that turn off an option a fresh bash has off already
//     (defaultOn lists the ones a fresh bash may have on); a ":" line keeps
//     the body from being empty;
//   - in function bodies, a bare `<>` that bash printed for `1<>` becomes
//     `1<>` again, when the #rdwr line shows the quirk (snapshot_rdwr.go);
//   - each function whose #def names the #shim file (the shim's own helper,
//     not redefined by the script; keptWhole excepted) becomes a one-line stub,
//     `NAME () { __mcpbashd_load NAME "$@"; }`; __mcpbashd_load, written
//     once before the first stub, sources the shim ($__mcpbashd_shim_file,
//     set by the prelude), which defines the real functions, and calls the
//     one asked for.
//
// The pass also reads, without changing them, the one-line MCP_*
// variables and the cd line's directory (Snapshot.Vars and Dir,
// snapshot_vars.go).
//
// Lines are told apart by what they start with, within their section: a
// line of a multi-line value never counts as a declare, #shim or #def line.
// A function whose body holds a here-document line starting with "#def "
// and naming the shim file would be misread; only the shim writes such
// lines.
//
// Empty() is the file the same writer makes with nothing in it.

// The lines that give a snapshot its shape.
const (
	snapHeader     = "# mcp-bashd snapshot v1"
	snapFn         = "#fn "
	snapStateOpen  = "{"
	snapStateClose = "} 2>/dev/null"
	snapShim       = "#shim "
	snapDef        = "#def "
	snapFuncClose  = "}"
	snapOptions    = "__mcpbashd_options"
	snapExitTrap   = "__mcpbashd_exit_trap"
	snapLoader     = "__mcpbashd_load" // what the shim's stubs call
)

// Snapshot is a loaded server script: the file every call sources and the
// names of the shell functions it defines.
//
// Its file lives until it is retired (replaced by a reload) and no process
// that sources it is left: a call in flight across a reload finishes on
// the definitions it started with, and the runtime directory does not fill
// with one file per edit.
type Snapshot struct {
	Path      string
	Functions map[string]bool
	Gen       uint64
	// ExitTrap: the script had an EXIT handler when it was snapshot.
	ExitTrap bool
	// LoadStdout is what the script's top level wrote to stdout when Load
	// ran it (at most 4 KiB): harmless here, but under the drop-in shim
	// that stdout is the protocol stream.
	LoadStdout string
	// Vars are the MCP_* variables the script's shell held when
	// run_mcp_server ran (set, exported or inherited), and Dir the
	// directory it was in: the bash SDK opened MCP_TOOLS_LIST_FILE and the
	// others from there (snapshot_vars.go). Nil and "" when the snapshot
	// has none.
	Vars map[string]string
	Dir  string

	// readonlyIFS: the script made IFS read-only; the warm prelude's
	// `IFS= read` would fail in its shell (warm.go).
	readonlyIFS bool
	widthOnce   sync.Once // fieldWidth
	width       int

	mu      sync.Mutex
	users   int  // calls and hooks holding the file
	retired bool // no longer current: removed when the last user lets go
	removed bool
}

// hold keeps the file for one user; false once it has been removed.
func (sn *Snapshot) hold() bool {
	sn.mu.Lock()
	defer sn.mu.Unlock()
	if sn.removed {
		return false
	}
	sn.users++
	return true
}

// release lets go of the file (nil-safe).
func (sn *Snapshot) release() {
	if sn == nil {
		return
	}
	sn.mu.Lock()
	defer sn.mu.Unlock()
	sn.users--
	sn.removeIfUnused()
}

// retire marks the snapshot replaced (nil-safe).
func (sn *Snapshot) retire() {
	if sn == nil {
		return
	}
	sn.mu.Lock()
	defer sn.mu.Unlock()
	sn.retired = true
	sn.removeIfUnused()
}

func (sn *Snapshot) removeIfUnused() {
	if sn.retired && sn.users == 0 && !sn.removed {
		sn.removed = true
		os.Remove(sn.Path)
	}
}

// HasFunction reports whether the snapshot defines a shell function name.
func (sn *Snapshot) HasFunction(name string) bool { return sn != nil && sn.Functions[name] }

// Adopt stores snapshot bytes produced by the shim's run_mcp_server (the
// drop-in path, where the script already ran in the shell that started us).
func (s *Supervisor) Adopt(data []byte) (*Snapshot, error) {
	gen := s.seq.Add(1)
	return s.storeSnapshot(s.snapshotPath(gen), gen, data)
}

// Empty is the snapshot of a server without a script (a --tools-dir only
// server): nothing to source but the two functions the prelude calls.
func (s *Supervisor) Empty() (*Snapshot, error) {
	gen := s.seq.Add(1)
	return s.storeSnapshot(s.snapshotPath(gen), gen, emptySnapshot())
}

// emptySnapshot has nothing to restore: the header and the two functions
// the prelude calls. (No state group: bash refuses an empty { }.)
func emptySnapshot() []byte {
	var w snapshotWriter
	w.header()
	w.openFunc(snapOptions)
	w.closeFunc()
	w.openFunc(snapExitTrap)
	w.closeFunc()
	return w.Bytes()
}

func (s *Supervisor) snapshotPath(gen uint64) string {
	return filepath.Join(s.runtime, fmt.Sprintf("snapshot.%d.sh", gen))
}

var errNotSnapshot = errors.New("not an mcp-bashd snapshot (is the shim from another version?)")

// storeSnapshot trims what the shim wrote and stores it at path.
func (s *Supervisor) storeSnapshot(path string, gen uint64, data []byte) (*Snapshot, error) {
	p, err := passSnapshot(data, s.env)
	if err != nil {
		return nil, err
	}
	out := p.w.Bytes()
	if err := os.WriteFile(path, out, 0o600); err != nil {
		return nil, err
	}
	return &Snapshot{Path: path, Functions: p.functions, Gen: gen, ExitTrap: installsExitTrap(out), Vars: p.vars, Dir: p.dir,
		readonlyIFS: readonlyIFS.Match(out)}, nil
}

// readonlyIFS finds a read-only IFS among a snapshot's declare lines.
var readonlyIFS = regexp.MustCompile(`(?m)^declare -[a-zA-Z]*r[a-zA-Z]* IFS=`)

// installsExitTrap reports whether a snapshot's __mcpbashd_exit_trap
// installs a handler: its first line after the ":" is what `trap -p EXIT`
// printed, and none is an empty line (or none at all), posix mode's
// report of none (`trap -- - EXIT`), or an ignored EXIT. A file of another
// shape says yes: running it is what was done before.
func installsExitTrap(snap []byte) bool {
	i := bytes.LastIndex(snap, []byte("\n"+snapExitTrap+"() {\n:\n"))
	if i < 0 {
		return true
	}
	line, _, _ := bytes.Cut(snap[i+len(snapExitTrap)+8:], []byte("\n"))
	switch string(line) {
	case "", snapFuncClose, "trap -- - EXIT", "trap -- '' EXIT":
		return false
	}
	return true
}

// snapshotWriter writes a snapshot's lines; the trimming pass and Empty
// share it, so both open and close the functions the prelude calls alike.
type snapshotWriter struct {
	bytes.Buffer
	loader bool // the stubs' loader is written
}

func (w *snapshotWriter) line(s string) { w.WriteString(s); w.WriteByte('\n') }
func (w *snapshotWriter) header()       { w.line(snapHeader) }

// openFunc opens a function the prelude calls; ":" keeps its body valid
// when nothing follows.
func (w *snapshotWriter) openFunc(name string) { w.line(name + "() {"); w.line(":") }
func (w *snapshotWriter) closeFunc()           { w.line(snapFuncClose) }

// stub is a function of the shim that loads the shim on first use, through
// the one loader written before the first stub. (Every call parses every
// stub: bash's parser takes about 10 µs per stub of four commands, and
// two dozen of them were a third of what sourcing a small snapshot cost.)
func (w *snapshotWriter) stub(name string) {
	if !w.loader {
		w.loader = true
		w.line(snapLoader + ` () { __mcpbashd_lazy=1; builtin . "$__mcpbashd_shim_file"; builtin unset __mcpbashd_lazy; "$@"; }`)
	}
	fmt.Fprintf(w, "%s () { %s %s \"$@\"; }\n", name, snapLoader, name)
}

// The sections of a snapshot, in order, as the pass walks them.
type snapSection int

const (
	inHeader    snapSection = iota // #fn lines, up to "{"
	inVariables                    // declare lines, up to #shim or the first function
	inFunctions                    // #def lines and function bodies, up to "} 2>/dev/null"
	inShimFunc                     // a shim function being replaced, up to its "}"
	beforeOpts                     // up to __mcpbashd_options's first line
	inOptions                      // __mcpbashd_options's body, up to "}"
	beforeTrap                     // up to __mcpbashd_exit_trap's first line
	trapColon                      // the ":" openFunc has written already
	inTail                         // the trap and the cd line, kept as they are
)

// trimSnapshot is the one pass over a snapshot's lines described above: it
// reads the function names and writes the trimmed file.
func trimSnapshot(data []byte, env []string) ([]byte, map[string]bool, error) {
	p, err := passSnapshot(data, env)
	if err != nil {
		return nil, nil, err
	}
	return p.w.Bytes(), p.functions, nil
}

// passSnapshot runs the pass and returns its state: the trimmed file, the
// functions, and what snapshot_vars.go reads.
func passSnapshot(data []byte, env []string) (*snapshotPass, error) {
	if !bytes.HasPrefix(data, []byte(snapHeader+"\n")) {
		return nil, errNotSnapshot
	}
	p := &snapshotPass{env: make(map[string]string, len(env)), functions: map[string]bool{}}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			p.env[k] = v
		}
	}
	p.w.Grow(len(data))
	for off := 0; off < len(data); {
		end := bytes.IndexByte(data[off:], '\n') + 1
		if end == 0 {
			end = len(data) - off
		}
		raw := data[off : off+end]
		if p.keep(strings.TrimSuffix(string(raw), "\n"), raw, off) {
			p.w.Write(raw)
		}
		off += end
	}
	if p.sec == inFunctions {
		p.rdwr.flush(&p.w) // no closing line
	}
	if p.sec == inShimFunc {
		// No closing line: not a body this pass understands; keep it.
		p.w.Write(data[p.skipFrom:])
	}
	return p, nil
}

// snapshotPass is the state of trimSnapshot between two lines.
type snapshotPass struct {
	w         snapshotWriter
	env       map[string]string // the environment every call gets
	functions map[string]bool   // from the #fn lines
	sec       snapSection
	quote     quoteState        // a value left open by the line before
	shim      string            // the #shim file
	stubbed   string            // the shim function being replaced
	skipFrom  int               // the offset of its #def line
	vars      map[string]string // MCP_* variables as the shell held them (snapshot_vars.go)
	dir       string            // the directory of the cd line
	rdwr      rdwrFix           // bare <> back to 1<> (snapshot_rdwr.go)
}

// keep takes the line at offset start (text, and raw with its newline),
// writes what replaces it if anything does, and reports whether the line
// itself is kept as it is.
func (p *snapshotPass) keep(text string, raw []byte, start int) bool {
	switch p.sec {
	case inHeader:
		if name, ok := strings.CutPrefix(text, snapFn); ok {
			p.functions[name] = true
		} else if probe, ok := strings.CutPrefix(text, snapRdwr); ok {
			p.rdwr.on = rdwrQuirk(probe)
		} else if text == snapStateOpen {
			p.sec = inVariables
		}
	case inVariables:
		if p.quote != quoteNone { // a value continued from the line before
			p.quote = scanQuotes(text, p.quote)
			return true
		}
		if strings.HasPrefix(text, "declare ") {
			p.quote = scanQuotes(text, quoteNone)
			if p.quote == quoteNone {
				p.noteVar(text)
			}
			return p.quote != quoteNone || !inherited(text, p.env)
		}
		p.sec = inFunctions
		return p.keep(text, raw, start)
	case inFunctions:
		if f, ok := strings.CutPrefix(text, snapShim); ok && p.shim == "" {
			p.shim = f
		} else if name, ok := shimDef(text, p.shim); ok {
			p.rdwr.flush(&p.w)
			p.sec, p.stubbed, p.skipFrom = inShimFunc, name, start
			return false
		} else if text == snapStateClose {
			p.rdwr.flush(&p.w)
			p.sec = beforeOpts
			return true
		}
		p.rdwr.add(&p.w, text, raw)
		return false
	case inShimFunc:
		if text == snapFuncClose {
			p.w.stub(p.stubbed)
			p.sec = inFunctions
		}
		return false
	case beforeOpts:
		if text == snapOptions+"() {" {
			p.w.openFunc(snapOptions)
			p.sec = inOptions
			return false
		}
	case inOptions:
		if text == snapFuncClose {
			p.sec = beforeTrap
		}
		// ":" is openFunc's, written already: the pass is idempotent.
		return text != ":" && !restoresDefault(text)
	case beforeTrap:
		if text == snapExitTrap+"() {" {
			p.w.openFunc(snapExitTrap)
			p.sec = trapColon
			return false
		}
	case trapColon:
		p.sec = inTail
		return text != ":"
	case inTail:
		p.noteDir(text)
	}
	return true
}

// shimDef reports whether a line is the #def line of a function defined in
// the shim file, and which.
func shimDef(line, shim string) (string, bool) {
	name, _, file, ok := parseDef(line)
	return name, ok && shim != "" && file == shim && !keptWhole[name]
}

// keptWhole are the shim's functions a snapshot keeps as they are instead
// of stubbing: mcp_arg is read in $(...), a subshell, where a stub would
// source the whole shim on every read.
var keptWhole = map[string]bool{"mcp_arg": true}

// parseDef reads a "#def NAME LINE FILE" line (LINE 0 when it is not a
// number).
func parseDef(line string) (name string, at int, file string, ok bool) {
	rest, ok := strings.CutPrefix(line, snapDef)
	if !ok {
		return "", 0, "", false
	}
	name, rest, _ = strings.Cut(rest, " ")
	num, file, _ := strings.Cut(rest, " ")
	at, _ = strconv.Atoi(num)
	return name, at, file, name != ""
}

// inherited reports whether a declare line sets an exported variable to
// the value the call's environment already gives it.
func inherited(line string, env map[string]string) bool {
	rest, ok := strings.CutPrefix(line, "declare -x ")
	if !ok {
		return false
	}
	name, val, ok := strings.Cut(rest, "=")
	if !ok {
		return false
	}
	v, ok := unquoteDeclare(val)
	if !ok {
		return false
	}
	cur, ok := env[name]
	return ok && cur == v
}

// unquoteDeclare decodes the double-quoted value `declare -p` prints on one
// line (backslash escapes only before " \ $ and `).
func unquoteDeclare(q string) (string, bool) {
	if len(q) < 2 || q[0] != '"' || q[len(q)-1] != '"' {
		return "", false
	}
	q = q[1 : len(q)-1]
	var b strings.Builder
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch c {
		case '\\':
			if i+1 < len(q) && strings.IndexByte("\"\\$`", q[i+1]) >= 0 {
				i++
				c = q[i]
			}
		case '"', '$', '`':
			return "", false // not a plain value (would need bash to read it)
		}
		b.WriteByte(c)
	}
	return b.String(), true
}

// The quoting a `declare -p` line may leave open at its end.
type quoteState int

const (
	quoteNone   quoteState = iota
	quoteDouble            // "…": backslash escapes
	quoteSingle            // '…': no escapes
	quoteANSI              // $'…': backslash escapes
)

// scanQuotes follows the quotes of one line of `declare -p` output,
// starting in state q, and returns the state at its end: anything but
// quoteNone means the value goes on on the next line.
func scanQuotes(line string, q quoteState) quoteState {
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch q {
		case quoteNone:
			switch {
			case c == '\\':
				i++
			case c == '"':
				q = quoteDouble
			case c == '\'':
				q = quoteSingle
			case c == '$' && i+1 < len(line) && line[i+1] == '\'':
				q, i = quoteANSI, i+1
			}
		case quoteDouble, quoteANSI:
			if c == '\\' {
				i++
			} else if (q == quoteDouble && c == '"') || (q == quoteANSI && c == '\'') {
				q = quoteNone
			}
		case quoteSingle:
			if c == '\'' {
				q = quoteNone
			}
		}
	}
	return q
}

// defaultOn are the shell options some bash turns on by default in a
// non-interactive shell (bash 5.2's list, a superset of older ones).
// Restoring "off" for any other option is a no-op in a fresh bash.
var defaultOn = map[string]bool{
	"checkwinsize": true, "cmdhist": true, "complete_fullquote": true, "extquote": true,
	"force_fignore": true, "globasciiranges": true, "globskipdots": true, "hostcomplete": true,
	"interactive_comments": true, "patsub_replacement": true, "progcomp": true, "promptvars": true,
	"sourcepath": true, "braceexpand": true, "hashall": true, "interactive-comments": true,
	"expand_aliases": true,
}

// restoresDefault reports whether an option line turns off an option a
// fresh bash has off already.
func restoresDefault(line string) bool {
	f := strings.Fields(line)
	return len(f) == 3 && ((f[0] == "shopt" && f[1] == "-u") || (f[0] == "set" && f[1] == "+o")) && !defaultOn[f[2]]
}
