package mcp

import (
	"bytes"
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/mcp-bashd/mcp-bashd/rpc/catalog"
	"github.com/mcp-bashd/mcp-bashd/supervisor"
)

// Reloader loads the server script again and swaps the new definitions in
// for new calls (the supervisor); on failure the old ones keep serving.
type Reloader interface {
	Reload(ctx context.Context) (old, new *supervisor.Snapshot, err error)
}

// WatchPoll is how often the server's files are checked for changes.
const WatchPoll = 500 * time.Millisecond

// Watcher reloads the server when its files change and decides when
// clients are told: notifications/tools/list_changed goes out when what
// tools/list answers changed (tools.json, the tools directory) or the
// script's set of functions changed (a declared tool gained or lost its
// function) — not for an edit of config.json or of a function's body.
type Watcher struct {
	src         *catalog.Source
	script      string
	scriptStamp catalog.FileStamp
	cat         *catalog.Catalog
	list        []byte
	log         *zap.Logger
	// declared are resources/list + templates/list and prompts/list as
	// last seen (declared.go).
	resources, prompts []byte
}

// NewWatcher watches src's files and script, whose stamp scriptStamp was
// taken before the script was first loaded, so that an edit made while the
// daemon started is a change. (The declarations are read after the load:
// the script may name them.)
func NewWatcher(src *catalog.Source, script string, scriptStamp catalog.FileStamp, log *zap.Logger) *Watcher {
	w := &Watcher{src: src, script: script, log: log}
	if script != "" {
		w.scriptStamp = scriptStamp
	}
	w.cat = src.Current()
	w.list, _ = w.cat.ToolsList()
	w.resources, w.prompts = declaredLists(w.cat)
	return w
}

// Run checks the files every WatchPoll until ctx ends.
func (w *Watcher) Run(ctx context.Context, srv *Server, r Reloader) {
	t := time.NewTicker(WatchPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		w.tick(ctx, srv, r)
	}
}

func (w *Watcher) tick(ctx context.Context, srv *Server, r Reloader) {
	functions := false
	if w.script != "" {
		if st := catalog.StampOf(w.script); st != w.scriptStamp {
			w.scriptStamp = st
			functions = w.reload(ctx, r)
		}
	}
	cat := w.src.Refresh(ctx)
	if cat == w.cat && !functions {
		return
	}
	w.cat = cat
	list, _ := cat.ToolsList()
	tools := !bytes.Equal(list, w.list)
	w.list = list
	told := false
	if tools || functions {
		told = srv.ListChanged("tools", list)
	}
	resources, prompts := declaredLists(cat)
	resChanged, promptsChanged := !bytes.Equal(resources, w.resources), !bytes.Equal(prompts, w.prompts)
	w.resources, w.prompts = resources, prompts
	if resChanged {
		told = srv.ListChanged("resources", resources) || told
	}
	if promptsChanged {
		told = srv.ListChanged("prompts", prompts) || told
	}
	w.log.Info("server files changed", zap.Bool("tools_list_changed", tools), zap.Bool("functions_changed", functions),
		zap.Bool("resources_list_changed", resChanged), zap.Bool("prompts_list_changed", promptsChanged), zap.Bool("list_changed_sent", told))
}

// declaredLists are what resources/list with resources/templates/list,
// and prompts/list, answer for cat.
func declaredLists(cat *catalog.Catalog) (resources, prompts []byte) {
	resources = append(append([]byte(nil), cat.Resources.List...), cat.Resources.TemplateList...)
	return resources, cat.Prompts.List
}

// reload loads the script again and reports whether its set of functions
// changed.
func (w *Watcher) reload(ctx context.Context, r Reloader) bool {
	old, cur, err := r.Reload(ctx)
	if err != nil {
		w.log.Error("reload failed; the previous definitions keep serving", zap.String("script", w.script), zap.Error(err))
		return false
	}
	w.log.Info("server script reloaded", zap.String("script", w.script), zap.Uint64("generation", cur.Gen))
	return !sameFunctions(old, cur)
}

func sameFunctions(a, b *supervisor.Snapshot) bool {
	if a == nil || b == nil || len(a.Functions) != len(b.Functions) {
		return false
	}
	for f := range a.Functions {
		if !b.Functions[f] {
			return false
		}
	}
	return true
}
