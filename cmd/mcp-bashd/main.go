// Command mcp-bashd serves MCP tools written as bash functions.
//
// main is a flat list of steps: parse flags, set up logs, start the
// supervisor, load the server script, serve stdio until EOF or a signal,
// tear down, exit with shell conventions (128+N for death by signal N).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"go.uber.org/zap"

	// A sandboxed call's exec helper: started as this binary, it becomes
	// the call's bash in this package's init, before main and before the
	// large dependencies' inits (see there).
	_ "github.com/mcp-bashd/mcp-bashd/sandbox/exechelper"
	"github.com/mcp-bashd/mcp-bashd/scripts"
	"github.com/mcp-bashd/mcp-bashd/supervisor"

	"github.com/mcp-bashd/mcp-bashd/internal/fds"
	"github.com/mcp-bashd/mcp-bashd/rpc/mcp"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

const usage = `mcp-bashd — serve MCP tools written as bash functions.

Usage:
  mcp-bashd [flags] SERVER.sh [-- ARGS...]   serve SERVER.sh over stdio (host-manifest form)
  mcp-bashd --tools-dir DIR [SERVER.sh]   also serve DIR's executables (EXE list / EXE NAME ARGS)
  mcp-bashd tools SERVER.sh               list the tools (name, description, arguments)
  mcp-bashd call SERVER.sh TOOL [k=v...]  run one call and print the result
  mcp-bashd check SERVER.sh               lint a server without serving it
  mcp-bashd shim                          print the drop-in mcpserver_core.sh
  mcp-bashd new DIR                       start a new server in DIR
  mcp-bashd config --client NAME SERVER   print a host's config for SERVER (--list: the hosts)
  mcp-bashd doctor [SERVER]               say what a host would run, and what is wrong (OK/WARN/FAIL)
  mcp-bashd bundle [DIR]                  pack DIR into NAME-VERSION.mcpb (docs/bundle.md)
  mcp-bashd completion bash|zsh|fish      print the shell completion script
  mcp-bashd version                       print the version
  mcp-bashd help [COMMAND]                this text, or a command's
Each subcommand takes --help. Flags may stand anywhere before a "--";
arguments for the server script go after it.

SERVER.sh defines tool_<name> bash functions; tools.json declares them with
their inputSchema. Its top level runs once; every call then runs in a fresh
bash process group with the state the top level left behind. A script that
sources the drop-in shim (mcp-bashd shim > mcpserver_core.sh) and calls
run_mcp_server can also be started directly: ./server.sh.

Flags:
`

const examples = `
Environment (flags win):
  MCP_TOOLS_LIST_FILE   tools list (default: tools.json beside SERVER.sh)
  MCP_CONFIG_FILE       serverInfo, capabilities, instructions (default: config.json beside
                        SERVER.sh, optional there; a file named here or by --config must exist)
  MCP_RESOURCES_FILE    resources and resource templates (default: resources.json beside tools.json; optional)
  MCP_PROMPTS_FILE      prompts (default: prompts.json beside tools.json; optional)
  MCP_LOG_FILE          structured log file, every level (default: none)
  (SERVER.sh may set these three itself, as for bash-mcp-sdk: the value its top level leaves,
  a relative one meaning a file in the directory it was in, wins over the environment.)
  MCP_EXTRA_LOG_FILE    a second log file
  MCP_LOG_LEVEL         least level logged anywhere: debug, info, warn, error (--log-level)
  MCP_LOG_STDERR        stderr alone: unset warn; 0/no nothing; 1/yes the log level; or a level
  MCP_LOG_FORMAT        console or json, for every line (--log-format)
  TMPDIR                where per-call directories are made (default: /tmp)

Settings from the environment (for a server the host starts as ./server.sh):
  MCP_BASHD_MAX_CONCURRENCY, MCP_BASHD_TIMEOUT, MCP_BASHD_GRACE, MCP_BASHD_DRAIN,
  MCP_BASHD_WARM, MCP_BASHD_FORK, MCP_BASHD_SEQUENTIAL  each the value of the flag of that name (MCP_BASHD_SEQUENTIAL=1)
  MCP_BASHD_FLAGS       daemon flags separated by spaces, e.g. "--sequential --grace 5s"
  Precedence: the command line, then MCP_BASHD_FLAGS, then MCP_BASHD_<NAME>, then the default.

Examples:
  mcp-bashd ./examples/greeter/server.sh
  printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' | mcp-bashd server.sh
  {"command": "mcp-bashd", "args": ["/abs/path/server.sh"]}   (an MCP host manifest)
`

type options struct {
	tools, config, bash string
	resources, prompts  string
	maxConcurrent       int
	taskStoreMax        int
	taskStoreBytes      int64
	pageSize            int
	warm                int
	warmIdle            time.Duration
	fork                bool
	maxLine             int
	outputCap           int64
	grace, timeout      time.Duration
	drain               time.Duration
	drainSet            bool
	sequential          bool
	snapshotFD          int
	serverPID, shellPID int  // the drop-in form's (internal flags)
	shellExitTrap       bool // the drop-in shell runs the EXIT handler (internal flag)
	noWatch             bool
	oneshot             bool
	toolsDir            string
	http                bool
	httpConn            bool // one HTTP connection on stdin/stdout
	httpPort, httpBind  string
	httpPath, origins   string
	tokenFile           string
	metricsAddr         string
	stateURL            string // --state: the store replicas share (issue 26); "" in-memory
	statePasswordFile   string
	replicaID           string
	tlsCert, tlsKey     string
	limits              *limitFlags
	logs                *logFlags
}

func main() {
	// Before anything is started: nothing inherited reaches a tool.
	fds.CloseOnExecInherited()
	os.Exit(run(os.Args[1:], streams{os.Stdin, os.Stdout, os.Stderr}))
}

// streams are a command's standard input, output and error: the process's
// in main, a test's buffers in the package's tests.
type streams struct {
	in       io.Reader
	out, err io.Writer
}

// run is the whole command: it returns the exit status.
func run(args []string, std streams) int {
	if len(args) > 0 {
		if code, ok := subcommand(args[0], args[1:], std); ok {
			return code
		}
	}
	var o options
	fs := daemonFlags(&o)
	positional, rest, err := parseArgs(fs, args, func(w io.Writer) { usageOf(w, fs, usage, examples) }, std)
	if err != nil {
		return parseFailed(err, "", std)
	}
	// The shim's one-shot process_request is an API call, not a server:
	// the serving settings of the environment are not its own.
	if !o.oneshot {
		if err := envFlags(fs); err != nil {
			fmt.Fprintln(std.err, "mcp-bashd:", err)
			return 2
		}
	}
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "drain" {
			o.drainSet = true
		}
	})
	o.http = o.http || o.httpConn
	if o.http && !o.drainSet {
		// An HTTP client that is still connected expects its answer; a
		// stdio client that signals wants the server gone.
		o.drain = 5 * time.Second
	}
	if _, err := o.limits.spec(); err != nil {
		fmt.Fprintln(std.err, "mcp-bashd:", err)
		return 2
	}
	if err := o.logs.check(); err != nil {
		fmt.Fprintln(std.err, "mcp-bashd:", err)
		return 2
	}
	o.logs.quiet = o.oneshot
	if len(positional) < 1 && o.toolsDir == "" {
		fmt.Fprintln(std.err, "mcp-bashd: missing SERVER.sh (see mcp-bashd --help)")
		return 2
	}
	script := ""
	if len(positional) > 0 {
		script, positional = positional[0], positional[1:]
		if o.shellPID == 0 {
			script = scriptOf(script) // a server's directory, as tools, call and check take it
		}
	}
	return serve(o, script, append(positional, rest...), std)
}

// subcommand runs the command named first, if it is one.
func subcommand(name string, args []string, std streams) (int, bool) {
	help := len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help")
	switch name {
	case "help", "-h", "--help", "-help":
		return helpCommand(name, args, std), true
	case "shim":
		if help {
			fmt.Fprint(std.out, "Usage: mcp-bashd shim\n\nPrints the drop-in mcpserver_core.sh: source it in place of bash-mcp-sdk's file.\n\nExample:\n  mcp-bashd shim > mcpserver_core.sh\n")
			return 0, true
		}
		fmt.Fprint(std.out, scripts.Shim)
		return 0, true
	case "version", "--version":
		if help {
			fmt.Fprint(std.out, "Usage: mcp-bashd version\n\nPrints the version (and the commit it was built from, when known).\n\nExample:\n  mcp-bashd version\n")
			return 0, true
		}
		fmt.Fprintln(std.out, "mcp-bashd", buildVersion())
		return 0, true
	case "json":
		return jsonCommand(args, std.in, std.out, std.err), true
	case "tools":
		return toolsCommand(args, std), true
	case "call":
		return callCommand(args, std), true
	case "check":
		return checkCommand(args, std), true
	case "new":
		return newCommand(args, std), true
	case "config":
		return configCommand(args, std), true
	case "doctor":
		return doctorCommand(args, std), true
	case "completion":
		return completionCommand(args, std), true
	case "bundle":
		return bundleCommand(args, std), true
	}
	return 0, false
}

// daemonFlags are the serving command's flags.
func daemonFlags(o *options) *flag.FlagSet {
	fs := flag.NewFlagSet("mcp-bashd", flag.ContinueOnError)
	fs.StringVar(&o.tools, "tools", "", "tools list `file` (overrides MCP_TOOLS_LIST_FILE)")
	fs.StringVar(&o.config, "config", "", "server configuration `file` (overrides MCP_CONFIG_FILE)")
	fs.StringVar(&o.resources, "resources", "", "resources list `file` (overrides MCP_RESOURCES_FILE)")
	fs.StringVar(&o.prompts, "prompts", "", "prompts list `file` (overrides MCP_PROMPTS_FILE)")
	fs.StringVar(&o.bash, "bash", "", "`path` of the bash that runs tools (default: bash on PATH)")
	fs.IntVar(&o.maxConcurrent, "max-concurrency", 16, "tool calls running at once")
	fs.IntVar(&o.taskStoreMax, "task-store-max", mcp.DefaultTaskStoreMax, "tasks held at once, running or finished (finished ones are dropped oldest first)")
	fs.Int64Var(&o.taskStoreBytes, "task-store-bytes", mcp.DefaultTaskStoreBytes, "bytes of finished tasks' results held at once")
	fs.IntVar(&o.pageSize, "page-size", 0, "entries per page of tools/list, resources/list, resources/templates/list and prompts/list\n(0: every list in one page; N: pages of N with nextCursor)")
	fs.IntVar(&o.warm, "warm", supervisor.DefaultWarm, "keep up to `N` call processes started ahead of their calls, as many as calls run\n(bash function tools without limits; none kept once --warm-idle passes without a call; 0: every call starts its own)")
	durationVar(fs, &o.warmIdle, "warm-idle", supervisor.DefaultWarmIdle, "how long warm call processes are kept after the last call")
	fs.BoolVar(&o.fork, "fork", true, "fork warm call processes from one bash that sourced the script's state once, instead of\nstarting a bash for each (Linux; a bash that exports dollar_dollar_pid, as distributions' do)")
	fs.IntVar(&o.maxLine, "max-line", 16<<20, "longest request line in `bytes`")
	fs.Int64Var(&o.outputCap, "output-cap", 16<<20, "tool output kept in a result, in `bytes` (the rest is cut with a marker)")
	durationVar(fs, &o.grace, "grace", 2*time.Second, "time between SIGTERM and SIGKILL when a call is stopped")
	durationVar(fs, &o.timeout, "timeout", 0, "default per-call timeout (0: none; tools.json x-mcp-bashd.timeout overrides)")
	durationVar(fs, &o.drain, "drain", 0, "on SIGINT/SIGTERM/SIGHUP, time in-flight calls get to finish before they are cancelled")
	fs.BoolVar(&o.sequential, "sequential", false, "answer one request at a time, in the order they arrive, as bash-mcp-sdk did\n(a cancellation of the running call still cancels it; over HTTP, one request at a time server-wide)")
	fs.StringVar(&o.toolsDir, "tools-dir", "", "also serve every executable in `DIR` that answers `EXE list` (one tool JSON per line); calls run `EXE NAME ARGS_JSON`")
	fs.BoolVar(&o.oneshot, "oneshot", false, "internal: serve stdin once for the shim's process_request (no reload, the caller's EXIT trap not run)")
	fs.BoolVar(&o.noWatch, "no-reload", false, "do not reload when the script, tools.json or config.json changes")
	fs.BoolVar(&o.http, "http", false, "serve Streamable HTTP instead of stdio")
	fs.BoolVar(&o.httpConn, "http-connection", false, "serve Streamable HTTP on the one connection given as stdin/stdout, then exit (inetd, socat EXEC, systemd Accept=yes; the 2026 SDK's handle-connection)")
	fs.StringVar(&o.httpPort, "http-port", envOr("MCP_HTTP_PORT", "3000"), "HTTP `port` (MCP_HTTP_PORT)")
	fs.StringVar(&o.httpBind, "http-bind", envOr("MCP_HTTP_BIND", "127.0.0.1"), "HTTP bind `address` (MCP_HTTP_BIND)")
	fs.StringVar(&o.httpPath, "http-path", envOr("MCP_HTTP_PATH", "/mcp"), "HTTP endpoint `path` (MCP_HTTP_PATH)")
	fs.StringVar(&o.origins, "allowed-origins", os.Getenv("MCP_ALLOWED_ORIGINS"), "comma-separated Origins accepted besides loopback ones (MCP_ALLOWED_ORIGINS)")
	fs.StringVar(&o.metricsAddr, "metrics-addr", os.Getenv("MCP_METRICS_ADDR"), "serve /metrics (Prometheus text) and /healthz on this `address`, e.g. 127.0.0.1:9090 (MCP_METRICS_ADDR)")
	fs.StringVar(&o.stateURL, "state", "", "share tasks, notifications and the requestState key with the other replicas through Redis at `URL`\n(redis://HOST:PORT/DB, rediss:// for TLS; default: in this process only)")
	fs.StringVar(&o.statePasswordFile, "state-password-file", "", "the --state store's password, read from `file`")
	fs.StringVar(&o.replicaID, "replica-id", "", "this replica's `name` in the --state store (default: random)")
	fs.StringVar(&o.tokenFile, "auth-token-file", "", "require `file`'s content as a bearer token on HTTP")
	fs.StringVar(&o.tlsCert, "tls-cert", "", "serve HTTPS with this certificate `file` (with --tls-key)")
	fs.StringVar(&o.tlsKey, "tls-key", "", "the TLS private key `file`")
	o.limits = addLimitFlags(fs)
	o.logs = addLogFlags(fs)
	fs.IntVar(&o.snapshotFD, "snapshot-fd", -1, "internal: read the server snapshot from this descriptor (used by the shim's run_mcp_server)")
	fs.IntVar(&o.serverPID, "server-pid", 0, "internal: the server's pid, which calls see as MCP_BASHD_SERVER_PID (the drop-in script's $$; default: this process)")
	fs.BoolVar(&o.shellExitTrap, "shell-exit-trap", false, "internal: the drop-in server's shell runs the script's EXIT handler itself once we have exited (as the SDK ran it, in the script's shell)")
	fs.IntVar(&o.shellPID, "shell-pid", 0, "internal: the drop-in server's shell, our parent: the script is found through it, and the daemon dies with it")
	return fs
}

// serve is the daemon's life as a flat list of steps.
func serve(o options, script string, scriptArgs []string, std streams) int {
	log, closeLog, err := newLoggerWith(o.logs)
	if err != nil {
		fmt.Fprintln(std.err, "mcp-bashd:", err)
		return 1
	}
	defer closeLog()
	if o.shellPID > 0 {
		// Before anything runs that the shell's death should end.
		if err := dieWithShell(o.shellPID); err != nil {
			say(log, zap.ErrorLevel, err.Error())
			return 1
		}
	}
	paths, err := resolvePaths(o, script)
	if err != nil {
		say(log, zap.ErrorLevel, err.Error())
		return 1
	}
	// Signals first: a SIGTERM during start-up must still tear down.
	sigc := make(chan os.Signal, 4)
	signal.Notify(sigc, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	// Without Notify, a write to a closed stdout kills the process at once
	// with SIGPIPE and no cleanup; with it, the write returns EPIPE.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)

	d, sig, err := startOrSignal(o, paths, scriptArgs, log, sigc)
	if sig != nil {
		return dieBy(sig.(syscall.Signal))
	}
	if err != nil {
		say(log, zap.ErrorLevel, err.Error())
		return 1
	}
	defer d.sup.Close()
	defer d.store.Close()
	defer d.stopWatch()
	if o.metricsAddr != "" {
		stopMetrics, err := startMetrics(o.metricsAddr, d.met, d.srv, d.sup, d.store, log)
		if err != nil {
			say(log, zap.ErrorLevel, err.Error())
			return 1
		}
		defer stopMetrics()
	}
	if err := d.listen(o, std); err != nil {
		say(log, zap.ErrorLevel, err.Error())
		return 1
	}
	if sig = d.wait(o, sigc); sig == nil {
		sig = d.teardownNoting(o, sigc)
	} else {
		d.teardown(o)
	}
	if s, ok := sig.(syscall.Signal); ok {
		return dieBy(s)
	}
	return 0
}

// paths are the files a server is made of, resolved once. (tools.json
// and config.json are picked once the script is loaded: declare.)
type paths struct {
	script, toolsDir, bash string
	given                  string // the script or tools directory as named on the command line
}

// resolvePaths makes the script and tools directory absolute (checking
// they exist) and finds bash.
func resolvePaths(o options, script string) (paths, error) {
	p := paths{given: script}
	if script == "" {
		p.given = o.toolsDir
	}
	var err error
	if script != "" {
		p.script, err = scriptPath(script, o.shellPID)
		if err == nil {
			_, err = os.Stat(p.script)
		}
		if err != nil {
			return p, fmt.Errorf("server script %s: %w", script, err)
		}
	}
	if o.toolsDir != "" {
		if p.toolsDir, err = filepath.Abs(o.toolsDir); err == nil {
			_, err = os.ReadDir(p.toolsDir)
		}
		if err != nil {
			return p, fmt.Errorf("tools directory: %w", err)
		}
	}
	if p.bash = o.bash; p.bash == "" {
		if p.bash, err = exec.LookPath("bash"); err != nil {
			return p, errors.New("bash not found on PATH (use --bash PATH)")
		}
	}
	return p, nil
}

// dieBy re-raises a terminating signal with its default action so the
// parent sees death by that signal (status 128+N). PID 1 cannot be killed
// by its own default-action signal, so it exits 128+N instead.
func dieBy(s syscall.Signal) int {
	signal.Reset(s)
	if os.Getpid() != 1 {
		_ = syscall.Kill(os.Getpid(), s)
		// Delivery is asynchronous; wait for it.
		time.Sleep(time.Second)
	}
	return 128 + int(s)
}

// loadSnapshot loads the server script and puts it in use: from the
// shim's descriptor in the drop-in form, by running it otherwise, or an
// empty server for a tools-directory server without a script.
func loadSnapshot(ctx context.Context, sup *supervisor.Supervisor, fd int, noScript bool) error {
	var sn *supervisor.Snapshot
	var err error
	switch {
	case noScript:
		sn, err = sup.Empty()
	case fd < 0:
		sn, err = sup.Load(ctx)
	default:
		f := os.NewFile(uintptr(fd), "snapshot")
		if f == nil {
			return fmt.Errorf("snapshot descriptor %d is not open", fd)
		}
		defer f.Close()
		data, rerr := io.ReadAll(io.LimitReader(f, 256<<20))
		if rerr != nil {
			return fmt.Errorf("read snapshot: %w", rerr)
		}
		sn, err = sup.Adopt(data)
	}
	if err != nil {
		return err
	}
	sup.Use(sn)
	return nil
}

// declarationPaths picks resources.json and prompts.json: flag,
// environment, or beside tools.json (which, in the drop-in form, the
// script's MCP_TOOLS_LIST_FILE may have put elsewhere than the script).
func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func pick(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// commands are the subcommands `help COMMAND` knows.
var commands = []string{"tools", "call", "check", "new", "config", "doctor", "bundle", "shim", "version", "completion"}

// helpCommand is `help [COMMAND]` (also --help, -h): the general usage, or
// COMMAND's. A flag after it (help --help, --help -h) asks for the general
// usage again; anything else is a usage error, not the general text.
func helpCommand(name string, args []string, std streams) int {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") || args[0] == "help" {
		var o options
		usageOf(std.out, daemonFlags(&o), usage, examples)
		return 0
	}
	if len(args) > 1 {
		fmt.Fprintf(std.err, "mcp-bashd %s: one COMMAND at most, not %q\n", name, strings.Join(args, " "))
		return 2
	}
	if slices.Contains(commands, args[0]) {
		code, _ := subcommand(args[0], []string{"--help"}, std)
		return code
	}
	fmt.Fprintf(std.err, "mcp-bashd %s: no command %q (commands: %s; see mcp-bashd --help)\n", name, args[0], strings.Join(commands, ", "))
	return 2
}
