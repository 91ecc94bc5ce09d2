package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/mcp-bashd/mcp-bashd/rpc"
)

type httpServer struct {
	srv  *http.Server
	errc chan error
}

// startHTTP listens (so a port in use fails at start, with the address)
// and serves in the background.
func startHTTP(o options, srv *rpc.Server, log *zap.Logger) (*httpServer, error) {
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
	addr := net.JoinHostPort(o.httpBind, o.httpPort)
	ip := net.ParseIP(strings.Trim(o.httpBind, "[]"))
	loopback := o.httpBind == "localhost" || (ip != nil && ip.IsLoopback())
	if !loopback && token == nil {
		fmt.Fprintf(os.Stderr, "mcp-bashd: WARNING: serving on %s without --auth-token-file: anyone who can reach it can run your tools\n", addr)
		log.Warn("non-loopback bind without a token", zap.String("addr", addr))
	}
	var origins []string
	for _, v := range strings.Split(o.origins, ",") {
		if v = strings.TrimSpace(v); v != "" {
			origins = append(origins, v)
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	h := srv.HTTPHandler(rpc.HTTPOptions{Path: o.httpPath, AllowedOrigins: origins, Loopback: loopback, Token: token})
	hs := &httpServer{
		srv:  &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second},
		errc: make(chan error, 1),
	}
	scheme := "http"
	if o.tlsCert != "" {
		scheme = "https"
	}
	log.Info("serving http", zap.String("url", scheme+"://"+ln.Addr().String()+o.httpPath))
	fmt.Fprintf(os.Stderr, "mcp-bashd: serving %s://%s%s\n", scheme, ln.Addr().String(), o.httpPath)
	go func() {
		var err error
		if o.tlsCert != "" {
			err = hs.srv.ServeTLS(ln, o.tlsCert, o.tlsKey)
		} else {
			err = hs.srv.Serve(ln)
		}
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		hs.errc <- err
	}()
	return hs, nil
}

// wait blocks until the server stops; an HTTP server ends only by a signal.
func (h *httpServer) wait() error { return <-h.errc }

// close stops accepting and ends idle connections; in-flight requests were
// drained or cancelled by rpc.Server.Stop before this runs.
func (h *httpServer) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = h.srv.Shutdown(ctx)
}
