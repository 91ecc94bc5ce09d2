package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/mcp-bashd/mcp-bashd/rpc/wire"
)

// Catalog is what a server declares at one moment: its tools.json, its
// config.json and its tools directory's listing. It is immutable; a Source
// publishes a new one when a file changes, and a request keeps the one it
// read for its whole life.
type Catalog struct {
	Tools  *ToolsFile
	Config *Config
	Dir    *DirTools // nil without a tools directory
	// Resources and Prompts are resources.json and prompts.json (each
	// Missing when the server has none).
	Resources *ResourcesFile
	Prompts   *PromptsFile
	// hasToolsFile is false for a tools-directory server without a script,
	// which has no tools.json: its missing file is then not an error.
	hasToolsFile bool
	// cacheDefaults are Options' DefaultTTL and DefaultScope, checked.
	cacheDefaults CacheHints
	st            stamps
}

// ToolsList is the tools/list result: tools.json's tools, then those of
// the tools directory.
func (c *Catalog) ToolsList() (json.RawMessage, error) {
	list := c.Tools.List
	if c.Tools.Err != nil {
		if c.Dir == nil || c.hasToolsFile {
			return nil, &FileError{Message: "Cannot read tools list: " + c.Tools.Path, Path: c.Tools.Path, Reason: c.Tools.Err}
		}
		list = json.RawMessage(`{"tools":[]}`)
	}
	if c.Dir != nil {
		if c.Dir.Err != nil {
			return nil, c.Dir.Err
		}
		list = mergeList(list, c.Dir.Public)
	}
	return list, nil
}

// Lookup finds the declaration of a tool: the tools directory's first,
// then tools.json's. found is false when nothing declares name; why is the
// SDK's reason when a declaration exists but cannot be used (to follow
// "Cannot validate arguments for NAME: ").
func (c *Catalog) Lookup(name string) (t *Tool, found bool, why string) {
	if t := c.Dir.Tool(name); t != nil {
		return t, true, ""
	}
	if c.Dir != nil && !c.hasToolsFile {
		return nil, false, ""
	}
	return c.Tools.Lookup(name)
}

// FileError is a declaration file that cannot be used: Message is the
// bash SDK's text (users' tests compare it), Path and Reason say which
// file, absolutely, and why.
type FileError struct {
	Message string
	Path    string
	Reason  error
}

func (e *FileError) Error() string { return e.Message }

// Abs is the file's absolute path.
func (e *FileError) Abs() string {
	if a, err := filepath.Abs(e.Path); err == nil {
		return a
	}
	return e.Path
}

// ConfigError is config.json's FileError for initialize and server/discover.
func (c *Config) ConfigError() *FileError {
	if c.Err == nil {
		return nil
	}
	return &FileError{Message: "Cannot read server configuration: " + c.Path, Path: c.Path, Reason: c.Err}
}

// mergeList appends a tools directory's tools to a tools/list result.
func mergeList(list json.RawMessage, extra []json.RawMessage) json.RawMessage {
	if len(extra) == 0 {
		return list
	}
	body := bytes.TrimSuffix(bytes.TrimSpace(list), []byte("]}"))
	var b bytes.Buffer
	b.Write(body)
	for i, p := range extra {
		if i > 0 || !bytes.HasSuffix(body, []byte("[")) {
			b.WriteByte(',')
		}
		b.Write(p)
	}
	b.WriteString("]}")
	return b.Bytes()
}

// Options say where a server's declarations are.
type Options struct {
	ToolsFile  string // "" only for a tools-directory server without a script
	ConfigFile string
	// ConfigRequired: ConfigFile was named explicitly, so its absence is
	// an error rather than defaults (LoadConfig).
	ConfigRequired bool
	ToolsDir       string // "" for none
	Lister         Lister // runs `EXE list`; required with ToolsDir
	// DefaultTTL and DefaultScope are MCP_DEFAULT_TTL_MS and
	// MCP_DEFAULT_CACHE_SCOPE as the server script held them ("" for
	// unset): the 2026 SDK's defaults for ttlMs and cacheScope (cache.go).
	DefaultTTL, DefaultScope string
	Log                      *zap.Logger

	// ResourcesFile and PromptsFile are resources.json and prompts.json;
	// "" (or a missing file) for none.
	ResourcesFile, PromptsFile string
}

// Source keeps the current Catalog. Readers never wait for I/O they do not
// need: Current is a pointer load; Fresh stats tools.json, config.json and
// the tools directory itself (the bash SDK read its files on every
// request, so an edit must be seen by the next one) and re-reads what
// changed; Refresh, for the watcher, also stats every directory entry (an
// executable edited in place). Listing the directory runs providers and
// may take long: it happens in one flight at a time, shared by whoever
// needs it, with no lock held.
type Source struct {
	opt Options
	log *zap.Logger
	cur atomic.Pointer[Catalog]

	mu sync.Mutex // serialises publishing (file parses are quick)

	runMu sync.Mutex
	run   *dirRun // the directory listing in flight, if any
	last  *dirRun // the latest finished one (maybe not yet published)
}

type dirRun struct {
	done    chan struct{}
	self    FileStamp
	entries string
	listing *DirTools
}

// NewSource reads every declaration once (listing the tools directory,
// which runs its providers) and logs what is unusable.
func NewSource(opt Options) *Source {
	if opt.Log == nil {
		opt.Log = zap.NewNop()
	}
	s := &Source{opt: opt, log: opt.Log}
	c := &Catalog{hasToolsFile: opt.ToolsFile != "", cacheDefaults: CacheHints{
		TTL: validTTL(json.RawMessage(opt.DefaultTTL)), Scope: validScope(wire.Quote(opt.DefaultScope)),
	}}
	c.st = s.stamp(true)
	c.Tools = LoadTools(opt.ToolsFile)
	c.Config = LoadConfig(opt.ConfigFile, opt.ConfigRequired)
	c.Resources, c.Prompts = LoadResources(opt.ResourcesFile), LoadPrompts(opt.PromptsFile)
	logDeclarations(s.log, c)
	if opt.ToolsDir != "" {
		r := s.listOnce(context.Background())
		c.Dir, c.st.dirSelf, c.st.dirEntries = r.listing, r.self, r.entries
		if c.Dir.Err != nil {
			s.log.Error("tools directory unusable", zap.Error(c.Dir.Err))
		}
	}
	if c.Tools.Err != nil && c.hasToolsFile {
		s.log.Error(unreadable(opt.ToolsFile, c.Tools.Err), zap.String("path", opt.ToolsFile), zap.String("what", "tools list"), zap.Error(c.Tools.Err))
	}
	logSchemas(s.log, c.Tools)
	if c.Config.Err != nil {
		s.log.Error(unreadable(opt.ConfigFile, c.Config.Err), zap.String("path", opt.ConfigFile), zap.String("what", "server configuration"), zap.Error(c.Config.Err))
	}
	s.cur.Store(c)
	return s
}

// Current is the catalog as last published, without any I/O.
func (s *Source) Current() *Catalog { return s.cur.Load() }

// Config is the current config.json after a stat: the cheap part of Fresh
// that never lists the tools directory.
func (s *Source) Config() *Config {
	c := s.cur.Load()
	if StampOf(s.opt.ConfigFile) == c.st.config {
		return c.Config
	}
	return s.publish(c, s.stamp(false), nil).Config
}

// NeedsListing reports whether Fresh would list the tools directory again
// (an entry was added, removed or renamed): a caller on a path that must
// not block (the connection's reader) hands the request off first.
func (s *Source) NeedsListing() bool {
	return s.opt.ToolsDir != "" && StampOf(s.opt.ToolsDir) != s.cur.Load().st.dirSelf
}

// Fresh is the catalog with every edit to its files seen (see Source).
func (s *Source) Fresh(ctx context.Context) *Catalog { return s.refresh(ctx, false) }

// Refresh is Fresh plus a stat of every tools-directory entry.
func (s *Source) Refresh(ctx context.Context) *Catalog { return s.refresh(ctx, true) }

func (s *Source) refresh(ctx context.Context, deep bool) *Catalog {
	c := s.cur.Load()
	st := s.stamp(deep)
	if !deep {
		st.dirEntries = c.st.dirEntries
	}
	if st == c.st {
		return c
	}
	var r *dirRun
	if s.opt.ToolsDir != "" && (st.dirSelf != c.st.dirSelf || st.dirEntries != c.st.dirEntries) {
		if r = s.listOnce(ctx); r == nil {
			return c // the request went away while waiting
		}
	}
	return s.publish(c, st, r)
}

// publish makes the catalog that replaces c: files whose stamps changed
// are read again, a listing is taken when one was made.
func (s *Source) publish(c *Catalog, st stamps, r *dirRun) *Catalog {
	s.mu.Lock()
	defer s.mu.Unlock()
	if now := s.cur.Load(); now != c {
		c = now // someone published meanwhile; build on theirs
	}
	next := *c
	if st.tools != c.st.tools {
		next.Tools = keepGood(s.log, c.Tools, LoadTools(s.opt.ToolsFile), c.Tools.Err, func(t *ToolsFile) error { return t.Err },
			"tools list changed but is unusable; the last good one keeps serving", s.opt.ToolsFile)
		if next.Tools != c.Tools {
			logSchemas(s.log, next.Tools) // once per version of the file
		}
		next.st.tools = st.tools
	}
	if st.config != c.st.config {
		next.Config = keepGood(s.log, c.Config, LoadConfig(s.opt.ConfigFile, s.opt.ConfigRequired), c.Config.Err, func(c *Config) error { return c.Err },
			"server configuration changed but is unusable; the last good one keeps serving", s.opt.ConfigFile)
		next.st.config = st.config
	}
	if r != nil {
		next.Dir, next.st.dirSelf, next.st.dirEntries = r.listing, r.self, r.entries
	}
	s.publishDeclarations(c, &next, st)
	s.cur.Store(&next)
	return &next
}

// logSchemas logs, for one version of tools.json, each inputSchema that
// does not compile and each keyword left unenforced as malformed (the
// server keeps serving; `mcp-bashd check` says the same).
func logSchemas(log *zap.Logger, f *ToolsFile) {
	for _, t := range f.Order {
		if t.SandboxErr != nil {
			log.Error("x-mcp-bashd limits unusable; the tool's calls are refused", zap.String("tool", t.Name), zap.Error(t.SandboxErr))
		}
		if t.SchemaErr != nil {
			log.Error("inputSchema does not compile", zap.String("path", f.Path), zap.String("tool", t.Name), zap.Error(t.SchemaErr))
			continue
		}
		if t.Schema == nil {
			continue
		}
		for _, i := range t.Schema.Ignored() {
			fields := []zap.Field{zap.String("path", f.Path), zap.String("tool", t.Name), zap.String("keyword", i.Pointer), zap.String("reason", i.Reason)}
			switch {
			case i.Refuses:
				log.Warn("inputSchema pattern cannot be evaluated; strings it applies to are refused", fields...)
			case i.Deduped:
				log.Warn("inputSchema list names an item twice; enforced with each once", fields...)
			default:
				log.Warn("inputSchema keyword is malformed and not enforced", fields...)
			}
		}
	}
}

// keepGood returns the new parse, unless it is broken while the old one
// was good: a half-saved edit must not take the server down. The change is
// logged either way it goes wrong.
func keepGood[T any](log *zap.Logger, old, new T, oldErr error, errOf func(T) error, msg, path string) T {
	if err := errOf(new); err != nil && oldErr == nil {
		log.Error(msg, zap.String("path", path), zap.Error(err))
		return old
	}
	return new
}

// listOnce lists the tools directory, or joins the listing in flight. It
// returns nil when ctx ends first; the listing itself goes on (another
// request or the watcher will use it) under the supervisor's own deadline.
func (s *Source) listOnce(ctx context.Context) *dirRun {
	s.runMu.Lock()
	r := s.run
	if r == nil && s.last != nil && s.last.self == StampOf(s.opt.ToolsDir) && s.last.entries == DirStamp(s.opt.ToolsDir) {
		// A listing of the directory as it is now has just finished and
		// its waiters are publishing it: take it rather than list again.
		r = s.last
	}
	if r == nil {
		r = &dirRun{done: make(chan struct{})}
		s.run = r
		go func() {
			// Stamps first: an edit made while providers run is a change
			// the next refresh sees.
			r.self, r.entries = StampOf(s.opt.ToolsDir), DirStamp(s.opt.ToolsDir)
			r.listing = listDir(context.Background(), s.opt.ToolsDir, s.opt.Lister, s.log.Named("tools-dir"))
			s.runMu.Lock()
			s.run, s.last = nil, r
			s.runMu.Unlock()
			close(r.done)
		}()
	}
	s.runMu.Unlock()
	select {
	case <-r.done:
		return r
	case <-ctx.Done():
		return nil
	}
}

// stamps are the file stamps a catalog was read at.
type stamps struct {
	tools, config, dirSelf FileStamp
	dirEntries             string
	resources, prompts     FileStamp
}

func (s *Source) stamp(deep bool) stamps {
	st := stamps{tools: StampOf(s.opt.ToolsFile), config: StampOf(s.opt.ConfigFile),
		resources: StampOf(s.opt.ResourcesFile), prompts: StampOf(s.opt.PromptsFile)}
	if s.opt.ToolsDir != "" {
		st.dirSelf = StampOf(s.opt.ToolsDir)
		if deep {
			st.dirEntries = DirStamp(s.opt.ToolsDir)
		}
	}
	return st
}

// unreadable is the SDK's log sentence for a declaration file it could not
// use: missing (or not a regular file), or not exactly one JSON object.
func unreadable(path string, err error) string {
	if fi, serr := os.Stat(path); errors.Is(err, fs.ErrNotExist) || serr != nil || !fi.Mode().IsRegular() {
		return "File not found: " + path
	}
	return "Not exactly one parseable JSON object: " + path
}
