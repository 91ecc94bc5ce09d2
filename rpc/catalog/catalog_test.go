package catalog

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// lister answers `EXE list` from a map, counting runs; a provider named in
// block waits until release is closed.
type lister struct {
	out     map[string]string
	runs    atomic.Int32
	block   string
	started chan struct{}
	release chan struct{}
	once    sync.Once // started is closed by the first blocked run only
}

func (l *lister) ListTools(ctx context.Context, exe string) ([]byte, error) {
	l.runs.Add(1)
	if filepath.Base(exe) == l.block {
		// A later listing (a request after the release may start one
		// before the first is published) must not close started again.
		l.once.Do(func() { close(l.started) })
		<-l.release
	}
	out, ok := l.out[filepath.Base(exe)]
	if !ok {
		return nil, errors.New("not a provider")
	}
	return []byte(out), nil
}

func write(t *testing.T, path, body string, mode os.FileMode) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

const oneTool = `{"tools":[{"name":"a","inputSchema":{"type":"object"},"x-mcp-bashd":{"timeout":"3s"}}]}`

// An edit of tools.json or config.json is seen by the next Fresh; a broken
// edit of a good file keeps the good one.
func TestSourceFreshSeesEdits(t *testing.T) {
	dir := t.TempDir()
	tools, config := filepath.Join(dir, "tools.json"), filepath.Join(dir, "config.json")
	write(t, tools, oneTool, 0o644)
	s := NewSource(Options{ToolsFile: tools, ConfigFile: config})
	c := s.Current()
	if !c.Config.Missing || c.Tools.Err != nil {
		t.Fatalf("first read: config missing=%v tools err=%v", c.Config.Missing, c.Tools.Err)
	}
	if list, _ := c.ToolsList(); strings.Contains(string(list), SettingsKey) {
		t.Errorf("the settings key reached tools/list: %s", list)
	}
	if tl, found, why := c.Lookup("a"); !found || why != "" || tl.Timeout.String() != "3s" {
		t.Errorf("lookup a: %+v %v %q", tl, found, why)
	}
	if s.Fresh(context.Background()) != c {
		t.Errorf("nothing changed, yet a new catalog was published")
	}
	write(t, config, `{"serverInfo":{"name":"x","version":"1"}}`, 0o644)
	if got := string(s.Config().ServerInfo()); got != `{"name":"x","version":"1"}` {
		t.Errorf("config edit not seen: %s", got)
	}
	write(t, tools, `{"tools":[`, 0o644)
	if c := s.Fresh(context.Background()); c.Tools.Err != nil {
		t.Errorf("a broken edit replaced the good tools list: %v", c.Tools.Err)
	}
	write(t, tools, `{"tools":[]}`, 0o644)
	if _, found, _ := s.Fresh(context.Background()).Lookup("a"); found {
		t.Errorf("a still declared after it was removed")
	}
}

// The tools directory is listed again only when it changed, in one
// flight however many ask, and never under the publishing lock: Current
// and Config answer while a provider blocks.
func TestSourceListsDirectoryInOneFlight(t *testing.T) {
	dir, tdir := t.TempDir(), t.TempDir()
	l := &lister{out: map[string]string{"p": `{"name":"p1","inputSchema":{"type":"object"}}`, "q": `{"name":"q1","inputSchema":{"type":"object"}}`}}
	write(t, filepath.Join(tdir, "p"), "#!/bin/sh\n", 0o755)
	s := NewSource(Options{ToolsFile: filepath.Join(dir, "tools.json"), ConfigFile: filepath.Join(dir, "config.json"), ToolsDir: tdir, Lister: l})
	if l.runs.Load() != 1 || s.Current().Dir.Tool("p1") == nil {
		t.Fatalf("first listing: %d runs, p1 %v", l.runs.Load(), s.Current().Dir.Tool("p1"))
	}
	if s.NeedsListing() {
		t.Errorf("NeedsListing with nothing changed")
	}
	l.block, l.started, l.release = "q", make(chan struct{}), make(chan struct{})
	write(t, filepath.Join(tdir, "q"), "#!/bin/sh\n", 0o755)
	if !s.NeedsListing() {
		t.Fatalf("a new executable does not call for a listing")
	}
	results := make(chan *Catalog, 2)
	for range 2 {
		go func() { results <- s.Fresh(context.Background()) }()
	}
	<-l.started
	_ = s.Current()
	_ = s.Config()
	close(l.release)
	for range 2 {
		if c := <-results; c.Dir.Tool("q1") == nil {
			t.Errorf("a listing without q1")
		}
	}
	// p and q listed once more each: the two requests shared one listing.
	if n := l.runs.Load(); n != 3 {
		t.Errorf("%d provider runs, want 3 (1 at start, 2 in one shared listing)", n)
	}
}

// A request that gives up while the directory is listed gets the catalog
// it had; the listing goes on and is published for the next one.
func TestSourceListingOutlivesItsRequest(t *testing.T) {
	dir, tdir := t.TempDir(), t.TempDir()
	l := &lister{out: map[string]string{"q": `{"name":"q1","inputSchema":{"type":"object"}}`}}
	s := NewSource(Options{ToolsFile: filepath.Join(dir, "tools.json"), ConfigFile: filepath.Join(dir, "config.json"), ToolsDir: tdir, Lister: l})
	l.block, l.started, l.release = "q", make(chan struct{}), make(chan struct{})
	write(t, filepath.Join(tdir, "q"), "#!/bin/sh\n", 0o755)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan *Catalog)
	go func() { done <- s.Fresh(ctx) }()
	<-l.started
	cancel()
	if c := <-done; c.Dir.Tool("q1") != nil {
		t.Errorf("the abandoned request saw the listing it did not wait for")
	}
	close(l.release)
	if c := s.Fresh(context.Background()); c.Dir.Tool("q1") == nil {
		t.Errorf("q1 missing after the listing finished")
	}
}
