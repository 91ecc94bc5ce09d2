package harness

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Cluster is a scaled-out deployment (issue 26): a real redis-server, N
// daemons sharing it through --state, and a real haproxy in front that
// balances round-robin with no affinity, so consecutive requests land on
// different replicas.
type Cluster struct {
	Redis    string // host:port of the redis-server
	Replicas []*HTTPDaemon
	// Health[i] is replica i's /healthz (each runs --metrics-addr on a
	// port of its own and --replica-id r<i>).
	Health   []string
	URL      string // the balancer's endpoint (same path as a replica's)
	redis    *exec.Cmd
	redisBin string
	redisDir string
	redisEnd <-chan struct{}
	o        Options
}

// need finds bin, failing the test when CI is set (CI must install it,
// see .ci/run) and skipping it otherwise.
func need(t *testing.T, bin string) string {
	t.Helper()
	p, err := exec.LookPath(bin)
	if err != nil {
		// Debian installs haproxy in /usr/sbin, which a user's PATH may lack.
		if sb, serr := exec.LookPath("/usr/sbin/" + bin); serr == nil {
			return sb
		}
		if os.Getenv("CI") != "" {
			t.Fatalf("%s not installed (CI)", bin)
		}
		t.Skipf("%s not installed", bin)
	}
	return p
}

// freePort is a loopback port nothing listens on right now.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// waitListening returns once addr accepts a connection; done reports the
// process behind it exited first (a failure, not a wait to the deadline).
func waitListening(t *testing.T, what, addr string, done <-chan struct{}) {
	t.Helper()
	until := Deadline(t)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return
		}
		select {
		case <-done:
			t.Fatalf("%s exited before listening on %s", what, addr)
		default:
		}
		if time.Now().After(until) {
			t.Fatalf("%s not listening on %s: %v", what, addr, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// start runs cmd with its output kept for a failing test, and stops it
// (SIGKILL: neither redis nor haproxy has state to keep here) at cleanup.
func start(t *testing.T, what string, cmd *exec.Cmd) <-chan struct{} {
	t.Helper()
	out := &Output{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-done
		if t.Failed() {
			t.Logf("%s output:\n%s", what, Tail([]byte(out.String()), 40))
		}
	})
	return done
}

// StartCluster starts redis-server (own directory, no persistence), n
// daemons as o describes with --state pointing at it, and haproxy in front
// of them; everything is torn down at cleanup.
func StartCluster(t *testing.T, n int, o Options) *Cluster {
	t.Helper()
	redisBin, haproxyBin := need(t, "redis-server"), need(t, "haproxy")
	c := &Cluster{o: o}
	c.Redis = net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t)))
	c.redisBin, c.redisDir = redisBin, t.TempDir()
	c.StartRedis(t)

	var servers []string
	for i := 0; i < n; i++ {
		ro := o
		metrics := net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t)))
		ro.Flags = append([]string{"--state", "redis://" + c.Redis + "/0", "--replica-id", fmt.Sprintf("r%d", i),
			"--metrics-addr", metrics}, o.Flags...)
		c.Health = append(c.Health, "http://"+metrics+"/healthz")
		d := StartHTTP(t, ro)
		u, err := url.Parse(d.URL)
		if err != nil {
			t.Fatalf("replica %d URL %q: %v", i, d.URL, err)
		}
		c.Replicas = append(c.Replicas, d)
		servers = append(servers, fmt.Sprintf("    server r%d %s", i, u.Host))
		if c.URL == "" {
			c.URL = u.Path
		}
	}

	front := net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t)))
	// http mode, round-robin, no cookie or source affinity: each request
	// picks the next replica. Long timeouts: SSE streams stay open.
	cfg := strings.Join(append([]string{
		"global",
		"    maxconn 256",
		"defaults",
		"    mode http",
		"    timeout connect 5s",
		"    timeout client 10m",
		"    timeout server 10m",
		"frontend mcp",
		"    bind " + front,
		"    default_backend replicas",
		"backend replicas",
		"    balance roundrobin",
		"    option http-server-close",
	}, servers...), "\n") + "\n"
	path := filepath.Join(t.TempDir(), "haproxy.cfg")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	done := start(t, "haproxy", exec.Command(haproxyBin, "-db", "-f", path))
	waitListening(t, "haproxy", front, done)
	c.URL = "http://" + front + c.URL
	return c
}

// StartRedis starts the cluster's redis-server on its port (again, after
// StopRedis: empty, as a restarted Redis without persistence is).
func (c *Cluster) StartRedis(t *testing.T) {
	t.Helper()
	host, port, _ := net.SplitHostPort(c.Redis)
	c.redis = exec.Command(c.redisBin, "--port", port, "--bind", host, "--save", "", "--appendonly", "no", "--dir", c.redisDir)
	c.redisEnd = start(t, "redis-server", c.redis)
	waitListening(t, "redis-server", c.Redis, c.redisEnd)
}

// StopRedis kills the redis-server (SIGKILL: the store goes away as in
// a crash) and returns once it has exited.
func (c *Cluster) StopRedis(t *testing.T) {
	t.Helper()
	c.redis.Process.Kill()
	<-c.redisEnd
}

// KillReplica kills replica i with SIGKILL (no shutdown of its own) and
// returns once it has exited.
func (c *Cluster) KillReplica(t *testing.T, i int) {
	t.Helper()
	d := c.Replicas[i]
	d.Cmd.Process.Kill()
	<-d.Done
}
