package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"runtime/debug"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"golang.org/x/sys/unix"

	"github.com/mcp-bashd/mcp-bashd/rpc/catalog"
	"github.com/mcp-bashd/mcp-bashd/rpc/mcp"
	"github.com/mcp-bashd/mcp-bashd/rpc/metrics"
	"github.com/mcp-bashd/mcp-bashd/rpc/state"
	"github.com/mcp-bashd/mcp-bashd/rpc/stdio"
	"github.com/mcp-bashd/mcp-bashd/supervisor"
)

// daemon is the wiring of one served server.
type daemon struct {
	name      string // the server, as the user named it
	log       *zap.Logger
	sup       *supervisor.Supervisor
	srv       *mcp.Server
	met       *metrics.Metrics
	stopWatch context.CancelFunc
	httpSrv   *httpServer
	served    chan error
	outDead   <-chan struct{}
	stdio     *stdio.Conn // nil with --http
	store     state.Store // --state's, or this process's own
}

// startOrSignal is start, cancelled by a signal that arrives first (a slow
// top-level load must not hold a SIGTERM for its whole time limit): the
// load's processes are killed, what was set up is torn down, and the
// signal is returned for the daemon to die by.
func startOrSignal(o options, p paths, scriptArgs []string, log *zap.Logger, sigc <-chan os.Signal) (*daemon, os.Signal, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type started struct {
		d   *daemon
		err error
	}
	done := make(chan started, 1)
	go func() {
		d, err := start(ctx, o, p, scriptArgs, log)
		done <- started{d, err}
	}()
	select {
	case r := <-done:
		return r.d, nil, r.err
	case sig := <-sigc:
		log.Info("signal received while starting; stopping", zap.String("signal", sig.String()))
		cancel()
		if r := <-done; r.d != nil {
			r.d.teardown(o)
		}
		return nil, sig, nil
	}
}

// memorySlack is what the daemon may use beyond the output cap (the
// promise is RSS under cap + 50 MiB); the rest of the 50 is the binary.
const memorySlack = 40 << 20

// limitMemory sets the collector's soft limit to the output cap +
// memorySlack, so that with answers of megabytes held for a slow client,
// or written one after another, it collects as the heap nears the promise
// instead of letting the heap grow to twice what is live. GOMEMLIMIT, when
// set, wins; no cap, no limit.
func limitMemory(o options) {
	if os.Getenv("GOMEMLIMIT") == "" && o.outputCap > 0 {
		debug.SetMemoryLimit(o.outputCap + memorySlack)
	}
}

// openState opens --state's store (or this process's own) and settles the
// requestState key: MCP_BASHD_STATE_KEY's, else, with a shared store, the
// deployment's, which keepKey writes back for as long as the daemon runs.
func openState(ctx context.Context, o options, log *zap.Logger) (store state.Store, stateKey, replica string, keepKey func(context.Context), err error) {
	stateKey = takeStateKey()
	if store, err = state.Open(o.stateURL, o.statePasswordFile); err != nil {
		return nil, "", "", nil, err
	}
	replica = replicaName(o.replicaID)
	keepKey = func(context.Context) {}
	if !store.Shared() {
		return store, stateKey, replica, keepKey, nil
	}
	// The URL holds no password (that is --state-password-file's).
	log.Info("sharing state", zap.String("store", o.stateURL), zap.String("replica", replica))
	if stateKey != "" {
		return store, stateKey, replica, keepKey, nil
	}
	// One key per deployment: a retry may reach another replica.
	if stateKey, err = state.DeploymentKey(ctx, store); err != nil {
		store.Close()
		return nil, "", "", nil, fmt.Errorf("--state %s: the requestState key: %w", o.stateURL, err)
	}
	key := stateKey
	keepKey = func(ctx context.Context) {
		state.KeepDeploymentKey(ctx, store, key, state.DeploymentKeyEvery, func(err error) {
			log.Warn("state store: the requestState key", zap.Error(err))
		})
	}
	return store, key, replica, keepKey, nil
}

// start makes the supervisor, reads the declarations, loads the script and
// makes the server; the reload watcher runs unless turned off.
func start(ctx context.Context, o options, p paths, scriptArgs []string, log *zap.Logger) (*daemon, error) {
	limitMemory(o)
	store, stateKey, replica, keepKey, err := openState(ctx, o, log)
	if err != nil {
		return nil, err
	}
	self, _ := os.Executable()
	sup, err := supervisor.New(supervisor.Config{
		Bash: p.bash, Script: p.script, ScriptArgs: scriptArgs, Self: self,
		OutputCap: zeroMeansNone(o.outputCap), Grace: time.Duration(zeroMeansNone(int64(o.grace))),
		ServerPID: o.serverPID, Log: log.Named("supervisor"), Limits: o.limits.parsed, Warm: warmSetting(o), WarmIdle: o.warmIdle, NoFork: !o.fork,
		ScriptStderr: scriptStderr(log),
	})
	if err != nil {
		store.Close()
		return nil, err
	}
	d := &daemon{name: p.given, log: log, sup: sup, met: metrics.New(), stopWatch: func() {}, served: make(chan error, 1), store: store}
	// The script's stamp is taken before it loads, so an edit made while
	// the daemon starts is a change.
	scriptStamp := catalog.StampOf(p.script)
	if err = loadSnapshot(ctx, sup, o.snapshotFD, p.script == ""); err != nil {
		log.Error("server script not loaded", zap.Error(err))
		sup.Close()
		return nil, err
	}
	// Only now are the declarations known: the script may name them.
	files := declare(o, p, sup.Current(), log)
	if !o.oneshot { // the shim's process_request: the serving daemon has said it
		warnMissingFunctions(log.Named("catalog"), files.tools, p.script, sup.Current())
		warnElsewhere(log.Named("catalog"), p.script, files)
	}
	catLog := log.Named("catalog")
	if o.oneshot {
		// The shim's process_request: its stderr is its caller's (in a
		// nested dispatch, the tool's output), and the serving daemon has
		// reported the schemas' warnings already.
		catLog = catLog.WithOptions(zap.IncreaseLevel(zapcore.ErrorLevel))
	}
	src := catalog.NewSource(catalog.Options{ToolsFile: files.tools, ConfigFile: files.config, ConfigRequired: files.configNamed,
		ToolsDir: p.toolsDir, Lister: sup, Log: catLog, ResourcesFile: files.resources, PromptsFile: files.prompts,
		DefaultTTL: scriptSetting("MCP_DEFAULT_TTL_MS", sup.Current()), DefaultScope: scriptSetting("MCP_DEFAULT_CACHE_SCOPE", sup.Current())})
	watcher := mcp.NewWatcher(src, p.script, scriptStamp, log.Named("reload"))
	log.Info("serving", zap.String("script", p.script), zap.String("tools", files.tools), zap.String("config", files.config),
		zap.Bool("config_named", files.configNamed), zap.String("version", version), settingsField(o))
	d.srv = mcp.New(mcp.Options{
		Catalog: src, Runner: sup, Snapshot: sup.Current, Metrics: d.met,
		MaxConcurrent: o.maxConcurrent, DefaultTimeout: o.timeout, Sequential: o.sequential,
		Log: log.Named("mcp"), StateKey: stateKey, Store: store, ReplicaID: replica,
		TaskStoreMax: o.taskStoreMax, TaskStoreBytes: o.taskStoreBytes, PageSize: o.pageSize,
	})
	if !o.noWatch && !o.oneshot {
		ctx, cancel := context.WithCancel(context.Background())
		d.stopWatch = cancel
		go watcher.Run(ctx, d.srv, sup)
	}
	// mcp_resource_updated, from any process, to the subscribed clients (of
	// every replica, with --state).
	fwd, stopFwd := context.WithCancel(context.Background())
	go d.srv.FanOutResourceUpdates(fwd, sup.ResourceUpdates(), store)
	go d.srv.FanOutListChanged(fwd)
	go keepKey(fwd)
	stopWatch := d.stopWatch
	d.stopWatch = func() { stopWatch(); stopFwd() }
	return d, nil
}

// listen starts the transport: Streamable HTTP, or stdin/stdout.
func (d *daemon) listen(o options, std streams) error {
	if o.http {
		var err error
		if d.httpSrv, err = startHTTP(o, d.srv, d.log); err != nil {
			return err
		}
		go func() { d.served <- d.httpSrv.wait() }()
		return nil
	}
	if f, ok := std.in.(*os.File); ok && isTerminal(f) {
		// A person at a terminal, not a client: say what this is.
		fmt.Fprintf(std.err, "mcp-bashd: serving %s as MCP on stdin/stdout (JSON-RPC, one message per line; Ctrl-D ends).\n"+
			"  To try its tools by hand: mcp-bashd tools %s, mcp-bashd call %s TOOL key=value\n", d.name, d.name, d.name)
	}
	conn := stdio.New(std.in, std.out, stdio.Options{MaxLine: o.maxLine, ModernEnabled: d.srv.ModernEnabled, SkipBlank: d.srv.SDK2026Dialect, Busy: d.srv.CallsRunning, Log: d.log.Named("stdio")})
	d.outDead = conn.OutputDead()
	d.stdio = conn
	go func() { d.served <- d.srv.Serve(conn) }()
	return nil
}

// wait serves until the input ends, the client closes our stdout, or a
// signal comes; it returns the signal, if any, after stopping the server.
func (d *daemon) wait(o options, sigc <-chan os.Signal) os.Signal {
	select {
	case err := <-d.served:
		if err != nil {
			d.log.Error("reading requests failed", zap.Error(err))
		}
	case <-d.outDead:
		d.log.Warn("client closed our stdout; stopping")
		d.srv.Stop(0)
	case sig := <-sigc:
		d.log.Info("signal received; shutting down", zap.String("signal", sig.String()), zap.Duration("drain", o.drain))
		// Further signals queue in sigc and are ignored: a second signal
		// must not cut the teardown short.
		d.srv.Stop(o.drain)
		return sig
	}
	return nil
}

// teardown ends what still runs: HTTP, the watcher, the script's EXIT
// trap, every process and the runtime directory.
func (d *daemon) teardown(o options) {
	if d.httpSrv != nil {
		d.httpSrv.close()
	}
	if d.stdio != nil {
		// Answers queued for a client that reads are written before the
		// process exits; one that does not read gets a second.
		d.stdio.Flush(time.Second)
	}
	d.stopWatch()
	if !o.oneshot && !o.shellExitTrap {
		d.sup.RunExitTrap(nil)
	}
	if err := d.sup.Close(); err != nil {
		d.log.Warn("cleanup incomplete", zap.Error(err))
	}
	d.log.Info("stopped")
}

// teardownNoting is the teardown that follows the end of input, noting the
// first signal that arrives while it runs (for example while the script's
// EXIT handler runs): the teardown is not cut short, it runs once, and the
// daemon then exits by that signal, as the SDK's server re-raises a signal
// recorded during its teardown pass. The signal is also taken when it
// arrived just after the pass.
func (d *daemon) teardownNoting(o options, sigc <-chan os.Signal) os.Signal {
	done := make(chan struct{})
	noted := make(chan os.Signal, 1)
	go func() {
		select {
		case sig := <-sigc:
			d.log.Info("signal received while shutting down; exiting by it after the teardown", zap.String("signal", sig.String()))
			noted <- sig
		case <-done:
			noted <- nil
		}
	}()
	d.teardown(o)
	close(done)
	if sig := <-noted; sig != nil {
		return sig
	}
	select {
	case sig := <-sigc:
		return sig
	default:
		return nil
	}
}

// warmSetting is Config.Warm for the --warm flag: 0 (none) is the
// supervisor's negative; a one-shot dispatch never keeps any.
func warmSetting(o options) int {
	if o.warm <= 0 || o.oneshot {
		return -1
	}
	return o.warm
}

// zeroMeansNone maps a flag's 0 ("no cap", "no grace") to the supervisor's
// negative "none"; its 0 means "the default".
func zeroMeansNone(v int64) int64 {
	if v == 0 {
		return -1
	}
	return v
}

// isTerminal reports whether f is a terminal (a person, not a client or a
// pipe).
func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), ioctlGetTermios)
	return err == nil
}

// replicaName is --replica-id, or a random name when it is not given.
func replicaName(id string) string {
	if id != "" {
		return id
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// takeStateKey reads the secret that signs 2026 requestState and removes
// it from the environment the tools inherit: a tool that could read it
// could forge the answers its own re-runs are given.
func takeStateKey() string {
	k := os.Getenv(mcp.StateKeyEnv)
	_ = os.Unsetenv(mcp.StateKeyEnv)
	return k
}
