package main

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"

	"github.com/mcp-bashd/mcp-bashd/rpc/catalog"
	"github.com/mcp-bashd/mcp-bashd/rpc/mcp"
	"github.com/mcp-bashd/mcp-bashd/rpc/metrics"
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

// start makes the supervisor, reads the declarations, loads the script and
// makes the server; the reload watcher runs unless turned off.
func start(ctx context.Context, o options, p paths, scriptArgs []string, log *zap.Logger) (*daemon, error) {
	limitMemory(o)
	self, _ := os.Executable()
	sup, err := supervisor.New(supervisor.Config{
		Bash: p.bash, Script: p.script, ScriptArgs: scriptArgs, Self: self,
		OutputCap: zeroMeansNone(o.outputCap), Grace: time.Duration(zeroMeansNone(int64(o.grace))),
		Log: log.Named("supervisor"),
	})
	if err != nil {
		return nil, err
	}
	d := &daemon{name: p.given, log: log, sup: sup, met: metrics.New(), stopWatch: func() {}, served: make(chan error, 1)}
	src := catalog.NewSource(catalog.Options{ToolsFile: p.tools, ConfigFile: p.config, ToolsDir: p.toolsDir, Lister: sup, Log: log.Named("catalog"),
		ResourcesFile: p.resources, PromptsFile: p.prompts})
	// The watcher takes the files' stamps before the script loads, so an
	// edit made while the daemon starts is a change.
	watcher := mcp.NewWatcher(src, p.script, log.Named("reload"))
	if err = loadSnapshot(ctx, sup, o.snapshotFD, p.script == ""); err != nil {
		log.Error("server script not loaded", zap.Error(err))
		sup.Close()
		return nil, err
	}
	log.Info("serving", zap.String("script", p.script), zap.String("tools", p.tools), zap.String("config", p.config), zap.String("version", version))
	d.srv = mcp.New(mcp.Options{
		Catalog: src, Runner: sup, Snapshot: sup.Current, Metrics: d.met,
		MaxConcurrent: o.maxConcurrent, DefaultTimeout: o.timeout,
		Log: log.Named("mcp"),
	})
	if !o.noWatch && !o.oneshot {
		ctx, cancel := context.WithCancel(context.Background())
		d.stopWatch = cancel
		go watcher.Run(ctx, d.srv, sup)
	}
	// mcp_resource_updated, from any process, to the subscribed clients.
	fwd, stopFwd := context.WithCancel(context.Background())
	go d.srv.ForwardResourceUpdates(fwd, sup.ResourceUpdates())
	stopWatch := d.stopWatch
	d.stopWatch = func() { stopWatch(); stopFwd() }
	return d, nil
}

// listen starts the transport: Streamable HTTP, or stdin/stdout.
func (d *daemon) listen(o options) error {
	if o.http {
		var err error
		if d.httpSrv, err = startHTTP(o, d.srv, d.log); err != nil {
			return err
		}
		go func() { d.served <- d.httpSrv.wait() }()
		return nil
	}
	if isTerminal(os.Stdin) {
		// A person at a terminal, not a client: say what this is.
		fmt.Fprintf(os.Stderr, "mcp-bashd: serving %s as MCP on stdin/stdout (JSON-RPC, one message per line; Ctrl-D ends).\n"+
			"  To try its tools by hand: mcp-bashd tools %s, mcp-bashd call %s TOOL key=value\n", d.name, d.name, d.name)
	}
	conn := stdio.New(os.Stdin, os.Stdout, stdio.Options{MaxLine: o.maxLine, ModernEnabled: d.srv.ModernEnabled, Log: d.log.Named("stdio")})
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
	if !o.oneshot {
		d.sup.RunExitTrap(nil)
	}
	if err := d.sup.Close(); err != nil {
		d.log.Warn("cleanup incomplete", zap.Error(err))
	}
	d.log.Info("stopped")
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
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
