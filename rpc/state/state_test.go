package state

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// startRedis runs a redis-server on a free loopback port for the test,
// with a password when given; it skips without redis-server unless CI is
// set (then the missing package is a failure).
func startRedis(t *testing.T, password string) (addr string, stop func()) {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("redis-server not installed (CI)")
		}
		t.Skip("redis-server not installed")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	dir := t.TempDir()
	args := []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir}
	if password != "" {
		args = append(args, "--requirepass", password)
	}
	cmd := exec.Command(bin, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	stopped := false
	stop = func() {
		if !stopped {
			stopped = true
			cmd.Process.Kill()
			cmd.Wait()
		}
	}
	t.Cleanup(stop)
	// Ready once it accepts a connection (retried on refusal, not timed).
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return addr, stop
		}
		if cmd.ProcessState != nil {
			t.Fatal("redis-server exited")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func openRedis(t *testing.T, addr, password string) Store {
	t.Helper()
	pwFile := ""
	if password != "" {
		pwFile = filepath.Join(t.TempDir(), "pw")
		os.WriteFile(pwFile, []byte(password+"\n"), 0o600)
	}
	s, err := Open("redis://"+addr+"/0", pwFile)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// exercise is the contract every Store keeps; a and b are two replicas'
// handles on one store.
func exercise(t *testing.T, a, b Store) {
	ctx := context.Background()
	if err := a.Set(ctx, "t:task:1", []byte("working"), time.Minute); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := b.Get(ctx, "t:task:1"); err != nil || !ok || string(v) != "working" {
		t.Fatalf("Get from the other replica: %q %v %v", v, ok, err)
	}
	if _, ok, err := b.Get(ctx, "t:none"); ok || err != nil {
		t.Fatalf("missing key: %v %v", ok, err)
	}
	a.Set(ctx, "t:task:2", []byte("x"), time.Minute)
	a.Set(ctx, "u:other", []byte("x"), time.Minute)
	keys, err := b.Keys(ctx, "t:task:")
	if err != nil || len(keys) != 2 {
		t.Fatalf("Keys: %v %v", keys, err)
	}
	// SET NX: the first value stands for both.
	v1, err := a.SetNX(ctx, "t:key", []byte("first"), 0)
	if err != nil || string(v1) != "first" {
		t.Fatalf("SetNX first: %q %v", v1, err)
	}
	v2, err := b.SetNX(ctx, "t:key", []byte("second"), 0)
	if err != nil || string(v2) != "first" {
		t.Fatalf("SetNX second: %q %v", v2, err)
	}
	k1, err := DeploymentKey(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if k2, _ := DeploymentKey(ctx, b); k1 != k2 || len(k1) != 64 {
		t.Fatalf("deployment keys differ: %q %q", k1, k2)
	}
	if err := b.Del(ctx, "t:task:1"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := a.Get(ctx, "t:task:1"); ok {
		t.Fatal("deleted key still there")
	}
	// Pub/sub reaches the other replica's subscriber.
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	got := make(chan []byte, 1)
	if err := b.Subscribe(sctx, "t:chan", func(m []byte) { got <- m }); err != nil {
		t.Fatal(err)
	}
	if err := a.Publish(ctx, "t:chan", []byte("cancel 7")); err != nil {
		t.Fatal(err)
	}
	if m := <-got; !bytes.Equal(m, []byte("cancel 7")) {
		t.Fatalf("message %q", m)
	}
}

func TestMemory(t *testing.T) {
	m := NewMemory()
	exercise(t, m, m)
	// Expiry, on a clock the test moves.
	now := time.Unix(1000, 0)
	m.now = func() time.Time { return now }
	m.Set(context.Background(), "e", []byte("v"), time.Second)
	now = now.Add(time.Second)
	if _, ok, _ := m.Get(context.Background(), "e"); ok {
		t.Fatal("expired key still there")
	}
}

func TestRedis(t *testing.T) {
	addr, _ := startRedis(t, "s3cret")
	exercise(t, openRedis(t, addr, "s3cret"), openRedis(t, addr, "s3cret"))
}

func TestRedisTTL(t *testing.T) {
	addr, _ := startRedis(t, "")
	s := openRedis(t, addr, "").(*Redis)
	ctx := context.Background()
	s.Set(ctx, "k", []byte("v"), time.Minute)
	if ttl := s.c.TTL(ctx, "k").Val(); ttl <= 0 || ttl > time.Minute {
		t.Fatalf("TTL %v, want (0, 1m]", ttl)
	}
	s.SetNX(ctx, "forever", []byte("v"), 0)
	if ttl := s.c.TTL(ctx, "forever").Val(); ttl != -1 {
		t.Fatalf("TTL of a key without one: %v, want -1 (none)", ttl)
	}
}

func TestRedisWrongPassword(t *testing.T) {
	addr, _ := startRedis(t, "right")
	s := openRedis(t, addr, "wrong")
	if err := s.Ping(context.Background()); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Ping with a wrong password: %v", err)
	}
}

// A store that goes away answers ErrUnavailable (no hang); one that comes
// back on the same address is used again without a new Open.
func TestRedisDownAndBack(t *testing.T) {
	addr, stop := startRedis(t, "")
	s := openRedis(t, addr, "")
	ctx := context.Background()
	if err := s.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	// What must outlive the outage: a subscription, and the deployment
	// key written back by the replicas that hold it.
	heard := make(chan string, 64)
	subCtx, unsubscribe := context.WithCancel(ctx)
	defer unsubscribe()
	if err := s.Subscribe(subCtx, "ch", func(m []byte) { heard <- string(m) }); err != nil {
		t.Fatal(err)
	}
	key, err := DeploymentKey(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	reports := make(chan error, 64)
	go KeepDeploymentKey(subCtx, s, key, 50*time.Millisecond, func(err error) { reports <- err })
	stop()
	if err := s.Set(ctx, "k", []byte("v"), time.Minute); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Set while down: %v", err)
	}
	if _, _, err := s.Get(ctx, "k"); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Get while down: %v", err)
	}
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command("redis-server", "--port", port, "--bind", "127.0.0.1", "--save", "", "--dir", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for s.Ping(ctx) != nil {
		time.Sleep(10 * time.Millisecond)
	}
	if err := s.Set(ctx, "k", []byte("v"), time.Minute); err != nil {
		t.Fatalf("Set after Redis came back: %v", err)
	}
	// The restarted Redis is empty: the key is back once written again.
	deadline := time.Now().Add(20 * time.Second)
	for {
		v, ok, err := s.Get(ctx, deploymentKeyName)
		if ok && string(v) == key {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("deployment key after the restart: %q %v %v, want %q", v, ok, err, key)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := (<-reports); !errors.Is(err, ErrUnavailable) {
		t.Errorf("KeepDeploymentKey's report during the outage: %v", err)
	}
	// The subscription made before the outage hears again (the client
	// subscribes anew once it reconnects; publish until it does).
	for got := false; !got; {
		if err := s.Publish(ctx, "ch", []byte("again")); err != nil {
			t.Fatal(err)
		}
		select {
		case m := <-heard:
			got = m == "again"
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("the subscription made before the outage heard nothing after it")
		}
	}
}

func TestOpenErrors(t *testing.T) {
	for _, c := range []struct{ url, pw, want string }{
		{"http://x:1/0", "", "want redis://"},
		{"", "pw", "needs --state"},
		{"redis://127.0.0.1:1/0", filepath.Join(t.TempDir(), "missing"), "--state-password-file"},
		{"redis://127.0.0.1:1/notanumber", "", "--state"},
	} {
		_, err := Open(c.url, c.pw)
		if err == nil || !bytes.Contains([]byte(err.Error()), []byte(c.want)) {
			t.Errorf("Open(%q, %q): %v, want an error with %q", c.url, c.pw, err, c.want)
		}
	}
	if s, err := Open("", ""); err != nil || s.Shared() {
		t.Fatalf("default store: %v shared=%v", err, s.Shared())
	}
}

// A store standing on another deployment key (a replica drew its own
// while the store was empty) is reported, and the standing key is left.
func TestKeepDeploymentKeyReportsAnotherKey(t *testing.T) {
	s := NewMemory()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := s.Set(ctx, deploymentKeyName, []byte("theirs"), 0); err != nil {
		t.Fatal(err)
	}
	reports := make(chan error, 1)
	go KeepDeploymentKey(ctx, s, "mine", time.Millisecond, func(err error) {
		select {
		case reports <- err:
		default:
		}
	})
	if err := <-reports; err == nil || !bytes.Contains([]byte(err.Error()), []byte("another requestState key")) {
		t.Fatalf("report: %v", err)
	}
	if v, _, _ := s.Get(ctx, deploymentKeyName); string(v) != "theirs" {
		t.Fatalf("standing key %q, want it left as it was", v)
	}
}
