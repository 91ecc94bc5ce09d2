package main

import (
	"context"
	"errors"
	"fmt"
	stdlog "log"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/mcp-bashd/mcp-bashd/rpc/mcp"
	"github.com/mcp-bashd/mcp-bashd/rpc/metrics"
	"github.com/mcp-bashd/mcp-bashd/rpc/state"
	"github.com/mcp-bashd/mcp-bashd/rpc/streamhttp"
	"github.com/mcp-bashd/mcp-bashd/supervisor"
)

type httpServer struct {
	srv  *http.Server
	mcp  *streamhttp.Handler
	errc chan error
}

// startHTTP listens (so a port in use fails at start, with the address)
// and serves in the background.
func startHTTP(o options, srv *mcp.Server, log *zap.Logger) (*httpServer, error) {
	var token []byte
	if o.tokenFile != "" {
		b, err := os.ReadFile(o.tokenFile)
		if err != nil {
			return nil, fmt.Errorf("auth token file: %w", err)
		}
		token = []byte(strings.TrimSpace(string(b)))
		if len(token) == 0 {
			return nil, fmt.Errorf("auth token file %s is empty", o.tokenFile)
		}
	}
	if (o.tlsCert == "") != (o.tlsKey == "") {
		return nil, errors.New("--tls-cert and --tls-key go together")
	}
	var origins []string
	for _, v := range strings.Split(o.origins, ",") {
		if v = strings.TrimSpace(v); v != "" {
			origins = append(origins, v)
		}
	}
	ln, loopback, err := httpListener(o, token != nil, log)
	if err != nil {
		return nil, err
	}
	handler := streamhttp.New(streamhttp.Options{
		Path: o.httpPath, AllowedOrigins: origins, Loopback: loopback, Token: token, MaxBody: o.maxLine,
		LegacyVersions: mcp.LegacyVersions(), ModernEnabled: srv.ModernEnabled, Stopping: srv.Stopping, Serve: srv.Serve,
		Sessionless: o.httpConn, Store: srv.Store(), ReplicaID: srv.ReplicaID(), Log: log.Named("http"),
	})
	hs := &httpServer{
		srv: &http.Server{Handler: accessLog(handler, log.Named("http")), ReadHeaderTimeout: 10 * time.Second,
			ErrorLog: serverErrorLog(log.Named("http"))},
		mcp:  handler,
		errc: make(chan error, 1),
	}
	// Sessions' GET streams never end by themselves: Shutdown ends them.
	hs.srv.RegisterOnShutdown(handler.EndStreams)
	scheme := "http"
	if o.tlsCert != "" {
		scheme = "https"
	}
	if o.httpConn {
		// One request, then the connection closes, as the 2026 SDK's
		// handle-connection answered (Connection: close).
		hs.srv.SetKeepAlivesEnabled(false)
		log.Info("serving one http connection on stdin/stdout", zap.String("local", ln.Addr().String()), zap.Bool("loopback", loopback))
	} else {
		url := scheme + "://" + shownAddr(o.httpBind, ln.Addr()) + o.httpPath
		say(log, zap.InfoLevel, "serving "+url, zap.String("url", url))
	}
	go func() {
		var err error
		if o.tlsCert != "" {
			err = hs.srv.ServeTLS(ln, o.tlsCert, o.tlsKey)
		} else {
			err = hs.srv.Serve(ln)
		}
		if errors.Is(err, http.ErrServerClosed) || (o.httpConn && errors.Is(err, net.ErrClosed)) {
			err = nil // the one connection is done
		}
		hs.errc <- err
	}()
	return hs, nil
}

// httpListener is the listening socket, or in one-connection mode
// (--http-connection) the connection on stdin/stdout as a listener that
// yields it once; loopback says whether the Host check applies: the
// address clients reach is a loopback one.
func httpListener(o options, hasToken bool, log *zap.Logger) (net.Listener, bool, error) {
	ip := net.ParseIP(strings.Trim(o.httpBind, "[]"))
	loopback := o.httpBind == "localhost" || (ip != nil && ip.IsLoopback())
	if o.httpConn {
		c, err := streamhttp.StdioConn(os.Stdin, os.Stdout)
		if err != nil {
			return nil, false, fmt.Errorf("the connection on stdin/stdout: %w", err)
		}
		// The launcher's listening address, when the socket or the
		// launcher names it; the --http-bind setting otherwise.
		if a, ok := c.LocalAddr().(*net.TCPAddr); ok {
			loopback = a.IP.IsLoopback()
		}
		if !loopback && !hasToken {
			log.Warn("non-loopback connection without a token", zap.String("local", c.LocalAddr().String()))
		}
		return streamhttp.ListenOnce(c), loopback, nil
	}
	addr := net.JoinHostPort(o.httpBind, o.httpPort)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, false, fmt.Errorf("listen on %s: %w", addr, err)
	}
	if !loopback && !hasToken {
		// Once listening: the port is the one clients reach (--http-port 0).
		shown := shownAddr(o.httpBind, ln.Addr())
		say(log, zap.WarnLevel, fmt.Sprintf("serving on %s without --auth-token-file: anyone who can reach it can run your tools", shown), zap.String("addr", shown))
	}
	return ln, loopback, nil
}

// shownAddr is the address a server listens on as the user named it: the
// bind address given (0.0.0.0 stays 0.0.0.0, where the socket says [::])
// with the port the socket got (--http-port 0 picks one).
func shownAddr(bind string, a net.Addr) string {
	if t, ok := a.(*net.TCPAddr); ok && bind != "" {
		return net.JoinHostPort(strings.Trim(bind, "[]"), strconv.Itoa(t.Port))
	}
	return a.String()
}

// serverErrorLog routes net/http's own messages ("http: TLS handshake
// error from …", a panic in a handler) into the daemon's log, at warn, so
// they get its level, its format and its files instead of raw lines on
// stderr.
func serverErrorLog(log *zap.Logger) *stdlog.Logger {
	l, err := zap.NewStdLogAt(log, zap.WarnLevel)
	if err != nil {
		return zap.NewStdLog(log)
	}
	return l
}

// wait blocks until the server stops; an HTTP server ends only by a signal.
func (h *httpServer) wait() error { return <-h.errc }

// close stops accepting and ends idle connections; in-flight requests were
// drained, cancelled or abandoned by the server's Stop before this runs,
// so a connection still busy after a second is one whose client stopped
// reading: it is closed.
func (h *httpServer) close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if h.srv.Shutdown(ctx) != nil {
		_ = h.srv.Close()
	}
	h.mcp.Close()
}

// accessLog writes one structured line per HTTP request.
func accessLog(next http.Handler, log *zap.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		r, method := streamhttp.WithMethodNote(r)
		next.ServeHTTP(sw, r)
		if *method == "" {
			*method = r.Header.Get("Mcp-Method")
		}
		log.Info("request", zap.String("method", r.Method), zap.String("path", r.URL.Path),
			zap.Int("status", sw.status), zap.Duration("duration", time.Since(start)),
			zap.String("remote", r.RemoteAddr), zap.String("mcp_method", *method))
	})
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the connection through the
// wrapper: the transport flushes SSE events and sets a deadline on every
// write through it.
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// startMetrics serves /metrics and /healthz on their own address, so they
// can stay unexposed while the MCP endpoint is public (or the reverse).
func startMetrics(addr string, met *metrics.Metrics, srv *mcp.Server, sup *supervisor.Supervisor, store state.Store, log *zap.Logger) (func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics: listen on %s: %w", addr, err)
	}
	st := sup.Stats()
	h := metrics.Handler(met, srv.Stopping, []metrics.Counter{
		{Name: "mcp_bashd_cancellations_total", Help: "Calls cancelled by their client.", Value: st.Cancelled.Load},
		{Name: "mcp_bashd_timeouts_total", Help: "Calls stopped by their timeout.", Value: st.TimedOut.Load},
		{Name: "mcp_bashd_group_kills_total", Help: "Process groups SIGKILLed after ignoring SIGTERM for the grace.", Value: st.Killed.Load},
		{Name: "mcp_bashd_orphans_reaped_total", Help: "Processes reaped that no call started directly (lifeline sentinels, detached or orphaned tool processes).", Value: sup.OrphansReaped},
	}, store.Ping)
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ErrorLog: serverErrorLog(log.Named("metrics"))}
	go hs.Serve(ln)
	log.Info("serving metrics", zap.String("addr", ln.Addr().String()))
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		hs.Shutdown(ctx)
	}, nil
}
