package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcp-bashd/mcp-bashd/rpc/catalog"
	"github.com/mcp-bashd/mcp-bashd/rpc/mcp"
	"github.com/mcp-bashd/mcp-bashd/rpc/transport"
	"github.com/mcp-bashd/mcp-bashd/rpc/wire"
	"github.com/mcp-bashd/mcp-bashd/supervisor"
)

const callUsage = `Usage: mcp-bashd call [flags] SERVER.sh TOOL [key=value ... | JSON]
       mcp-bashd call --tools-dir DIR TOOL [key=value ... | JSON]
       mcp-bashd call --url URL TOOL [key=value ... | JSON]

Runs one call of TOOL through the real supervisor (its own process group,
MCP_CALL_TMPDIR, the before-tool hook, validation) and prints the result;
with --url, calls it on a running mcp-bashd --http (or any Streamable HTTP
MCP server) instead. Values are typed by the tool's inputSchema: n=3 is a
number where the schema says integer or number, a string otherwise; arrays
and objects are JSON. A single JSON object argument is used as the
arguments as is. While the tool runs, its mcp_progress shows as a progress
bar and its mcp_log lines as "[level] text" on stderr (plain lines when
stderr is not a terminal).

A tool that asks (mcp_elicit) asks the person at the terminal; --answer
gives the answers instead (for scripts).

Exit status: 0 a result; 1 an isError result (the tool failed, or its
arguments did not validate); 2 a usage error; 3 the server answered a
JSON-RPC error (an unknown tool, invalid params); 4 no call was made (the
server did not load, its tools.json is unusable, the connection or TLS
failed); 130 (128+N for signal N) interrupted: the call was cancelled.

Examples:
  mcp-bashd call examples/greeter/server.sh greet name=Ada
  mcp-bashd call --timeout 5s examples/plain/tools.sh slow '{"seconds":1}'
  mcp-bashd call --url http://127.0.0.1:3000/mcp greet name=Ada
  mcp-bashd call --url https://host:3000/mcp --cacert cert.pem --auth-token-file token greet name=Ada

Flags:
`

type callFlags struct {
	timeout   time.Duration
	toolsDir  string
	asJSON    bool
	url       string
	tokenFile string
	limits    *limitFlags
	cacert    string
	insecure  bool
	answers   stringList
}

// call's exit statuses: a script can tell the tool's failure from a
// server it could not reach or use.
const (
	exitToolError   = 1 // an isError result: the tool ran and failed (validation included)
	exitUsage       = 2
	exitRPCError    = 3 // the server answered a JSON-RPC error (unknown tool, invalid params)
	exitUnavailable = 4 // no call was made: the server did not load, its files are unusable, the connection failed
)

func callCommand(args []string, std streams) int {
	var cf callFlags
	// --url needs no script; with --tools-dir, a first argument that names
	// no file is TOOL.
	f, rest, code := cliFlags("call", callUsage, args, cf.define, func(first string) bool {
		return cf.url != "" || (cf.toolsDir != "" && !isFile(scriptOf(first)))
	}, std)
	switch {
	case code == 1:
		return exitUnavailable // SERVER.sh is not there
	case code >= 0:
		return code
	case len(rest) < 1:
		fmt.Fprintln(std.err, "mcp-bashd call: missing TOOL (see mcp-bashd call --help)")
		return exitUsage
	}
	if _, err := cf.limits.spec(); err != nil {
		fmt.Fprintln(std.err, "mcp-bashd call:", err)
		return exitUsage
	}
	answers, err := parseAnswers(cf.answers)
	if err != nil {
		fmt.Fprintln(std.err, "mcp-bashd call:", err)
		return exitUsage
	}
	// Ctrl-C cancels the call the way a client's cancel would, then tears
	// down as the daemon does (EXIT trap, temp files) and exits 128+N.
	sigc := make(chan os.Signal, 4)
	signal.Notify(sigc, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigc)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	var interrupted atomic.Value
	go func() {
		if sig, ok := <-sigc; ok {
			interrupted.Store(sig)
			cancel(supervisor.ErrCancelled)
		}
	}()
	code = runCall(ctx, f, cf, rest[0], rest[1:], &terminalAsker{std: std, answers: answers}, std)
	if sig, ok := interrupted.Load().(os.Signal); ok && ctx.Err() != nil {
		fmt.Fprintf(std.err, "mcp-bashd call: interrupted (%v); the call was cancelled\n", sig)
		return 128 + int(sig.(syscall.Signal))
	}
	return code
}

// runCall makes the call, locally or at --url, and prints its result.
func runCall(ctx context.Context, f *cliFiles, cf callFlags, tool string, kv []string, ask *terminalAsker, std streams) int {
	var local *localServer
	if cf.url == "" {
		// Loaded first: the script may name its tools list, which types
		// the arguments.
		var err error
		if local, err = startLocal(ctx, f, cf, std.err); err != nil {
			if ctx.Err() == nil {
				fmt.Fprintln(std.err, "mcp-bashd call:", err)
			}
			return exitUnavailable
		}
		defer local.close()
		if !local.toolsUsable(f, cf.toolsDir, std.err) {
			return exitUnavailable
		}
	}
	arguments, err := catalog.Arguments(f.tools, tool, kv)
	if err != nil {
		fmt.Fprintln(std.err, "mcp-bashd call:", err)
		return exitUsage
	}
	show := newProgress(std.err)
	var body json.RawMessage
	var rerr *wire.Error
	if cf.url != "" {
		body, rerr, err = remoteCall(ctx, cf, tool, arguments, show, ask)
	} else {
		body, rerr, err = local.call(ctx, tool, arguments, show, ask)
	}
	show.done()
	switch {
	case ctx.Err() != nil:
		return exitUnavailable // interrupted: callCommand says so
	case err != nil:
		fmt.Fprintln(std.err, "mcp-bashd call:", err)
		return exitUnavailable
	case rerr != nil:
		fmt.Fprintf(std.err, "mcp-bashd call: error %d: %s%s\n", rerr.Code, rerr.Message, local.whyNotFound(tool, rerr))
		return exitRPCError
	case cf.asJSON:
		return printCallJSON(body, std.out)
	}
	return printCallResult(body, std)
}

// define declares call's own flags.
func (cf *callFlags) define(fs *flag.FlagSet) {
	durationVar(fs, &cf.timeout, "timeout", 0, "stop the call after this long (0: the tool's own x-mcp-bashd.timeout, or none)")
	fs.StringVar(&cf.toolsDir, "tools-dir", "", "also look for TOOL among `DIR`'s executables (EXE list); SERVER.sh may then be left out")
	fs.BoolVar(&cf.asJSON, "json", false, "print the CallToolResult as JSON instead of its text")
	fs.StringVar(&cf.url, "url", "", "call the tool on the Streamable HTTP server at `URL` (no SERVER.sh)")
	fs.StringVar(&cf.tokenFile, "auth-token-file", "", "with --url: send `file`'s content as a bearer token")
	fs.StringVar(&cf.cacert, "cacert", "", "with --url: trust the CA certificate(s) in this PEM `file` (a self-signed server's --tls-cert), besides the system's")
	fs.BoolVar(&cf.insecure, "insecure", false, "with --url: do not verify the server's TLS certificate")
	fs.Var(&cf.answers, "answer", "the answer to the tool's next question (mcp_elicit): `JSON`, the content {\"k\":\"v\"} or a whole result {\"action\":\"decline\"}; repeat for several (default: asked on the terminal)")
	cf.limits = addLimitFlags(fs)
}

// printCallJSON prints the CallToolResult as compact JSON; the status is 1
// for an isError result, as printCallResult's.
func printCallJSON(body json.RawMessage, stdout io.Writer) int {
	stdout.Write(append(wire.Compact(body), '\n'))
	var r struct {
		IsError bool `json:"isError"`
	}
	if json.Unmarshal(body, &r) == nil && r.IsError {
		return exitToolError
	}
	return 0
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir()
}

// localServer is SERVER.sh loaded under a supervisor of its own, to run
// one call.
type localServer struct {
	sup      *supervisor.Supervisor
	src      *catalog.Source
	srv      *mcp.Server
	closeLog func()
	stderr   io.Writer // the command's
	script   string
}

// startLocal loads the script (when there is one) and picks the files it
// names (f.adopt).
func startLocal(ctx context.Context, f *cliFiles, cf callFlags, stderr io.Writer) (*localServer, error) {
	log, closeLog, err := newLogger()
	if err != nil {
		return nil, err
	}
	bash, err := f.bashPath()
	if err != nil {
		closeLog()
		return nil, fmt.Errorf("bash not found on PATH (use --bash PATH)")
	}
	self, _ := os.Executable()
	sup, err := supervisor.New(supervisor.Config{Bash: bash, Script: f.script, Self: self, Log: log.Named("supervisor"), Limits: cf.limits.parsed, Warm: -1})
	if err != nil {
		closeLog()
		return nil, err
	}
	if err := loadSnapshot(ctx, sup, -1, f.script == ""); err != nil {
		sup.Close()
		closeLog()
		return nil, err
	}
	if f.script != "" {
		f.adopt(sup.Current())
	}
	l := &localServer{sup: sup, closeLog: closeLog, stderr: stderr, script: f.script}
	l.src = catalog.NewSource(catalog.Options{ToolsFile: f.tools, ConfigFile: f.config, ConfigRequired: f.configNamed,
		ToolsDir: absPath(cf.toolsDir), Lister: sup, Log: log.Named("catalog")})
	l.srv = mcp.New(mcp.Options{
		Catalog: l.src, Runner: sup, Log: log.Named("mcp"), Snapshot: sup.Current, DefaultTimeout: cf.timeout,
	})
	return l, nil
}

// call runs the tool once.
func (l *localServer) call(ctx context.Context, tool string, args json.RawMessage, show *progress, ask *terminalAsker) (json.RawMessage, *wire.Error, error) {
	if t, found, _ := l.src.Fresh(ctx).Lookup(tool); found && t.SandboxErr == nil {
		printLimits(l.stderr, tool, l.sup.Sandbox().Describe(t.Sandbox))
	}
	res, rerr := l.srv.CallAsking(ctx, tool, args, show, ask.ask)
	if res == nil {
		return nil, rerr, nil
	}
	return res.Body, nil, nil
}

// close runs the script's EXIT trap and ends everything the load started.
func (l *localServer) close() {
	l.sup.RunExitTrap(nil)
	l.sup.Close()
	l.closeLog()
}

// progress shows a call's notifications on stderr: a bar redrawn in place
// on a terminal, one line per notification otherwise. It is the
// transport.Stream of a call made from the command line.
type progress struct {
	w    io.Writer
	tty  bool
	drew bool
}

func newProgress(w io.Writer) *progress {
	f, ok := w.(*os.File)
	return &progress{w: w, tty: ok && isTerminal(f)}
}

func (p *progress) Notify(method string, params json.RawMessage) {
	switch method {
	case "notifications/progress":
		var n struct {
			Progress float64  `json:"progress"`
			Total    *float64 `json:"total"`
			Message  string   `json:"message"`
		}
		if json.Unmarshal(params, &n) != nil {
			return
		}
		text := fmt.Sprintf("%g", n.Progress)
		if n.Total != nil && *n.Total > 0 {
			frac := min(max(n.Progress / *n.Total, 0), 1)
			text = fmt.Sprintf("[%-20s] %3.0f%%", strings.Repeat("=", int(frac*20)), frac*100)
		}
		if n.Message != "" {
			text += " " + n.Message
		}
		if p.tty {
			fmt.Fprintf(p.w, "\r\x1b[K%s", text)
			p.drew = true
			return
		}
		fmt.Fprintln(p.w, "progress:", text)
	case "notifications/message":
		var m struct {
			Level string          `json:"level"`
			Data  json.RawMessage `json:"data"`
		}
		if json.Unmarshal(params, &m) != nil {
			return
		}
		var text string
		if json.Unmarshal(m.Data, &text) != nil {
			text = string(m.Data)
		}
		p.clear()
		fmt.Fprintf(p.w, "[%s] %s\n", m.Level, text)
	}
}

func (p *progress) clear() {
	if p.drew {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.drew = false
	}
}

func (p *progress) done() {
	if p.drew {
		fmt.Fprintln(p.w)
		p.drew = false
	}
}

// Respond and Finish: the result is returned by Call, not streamed.
func (p *progress) Respond(transport.Response) {}
func (p *progress) Finish()                    {}
