package main

import (
	"context"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/mcp-bashd/mcp-bashd/rpc"
	"github.com/mcp-bashd/mcp-bashd/supervisor"
)

// reloadPoll is how often the server's files are checked for changes.
const reloadPoll = 500 * time.Millisecond

// run reloads the server when the script, tools.json or
// config.json changes: the script is loaded again (a new snapshot) and
// swapped in for new calls only — a call that started before the change
// finishes on the definitions it started with. A load that fails (syntax
// error, script exits non-zero) is logged and the last good snapshot keeps
// serving. tools.json and config.json are re-read by rpc on their own; a
// change to either, or to the set of functions, is announced with
// notifications/tools/list_changed.
// watcher holds the stamps of the server's files as they were when the
// server was loaded: it is made before the load, so an edit made while the
// daemon starts (or before the watching goroutine first runs) is a change.
type watcher struct {
	script   string
	files    []string
	toolsDir string
	stamps   map[string]rpc.FileStamp
	dirStamp string
}

func newWatcher(script string, files []string, toolsDir string) *watcher {
	w := &watcher{script: script, files: files, toolsDir: toolsDir, stamps: map[string]rpc.FileStamp{}}
	watch := append([]string{}, files...)
	if script != "" {
		watch = append(watch, script)
	}
	for _, f := range watch {
		w.stamps[f] = rpc.StampOf(f)
	}
	w.dirStamp = rpc.DirStamp(toolsDir)
	return w
}

func (w *watcher) run(ctx context.Context, sup *supervisor.Supervisor, srv *rpc.Server, cur *atomic.Pointer[supervisor.Snapshot], log *zap.Logger) {
	script, files, toolsDir, stamps := w.script, w.files, w.toolsDir, w.stamps
	dirStamp := w.dirStamp
	t := time.NewTicker(reloadPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		changed := map[string]bool{}
		for f, old := range stamps {
			if st := rpc.StampOf(f); st != old {
				stamps[f] = st
				changed[f] = true
			}
		}
		// A tools directory changes when an executable is added, removed or
		// edited; rpc lists it again at the next request.
		if toolsDir != "" {
			if st := rpc.DirStamp(toolsDir); st != dirStamp {
				dirStamp = st
				changed[toolsDir] = true
			}
		}
		if len(changed) == 0 {
			continue
		}
		if script != "" && changed[script] {
			snap, err := sup.Load(ctx)
			if err != nil {
				log.Error("reload failed; the previous definitions keep serving", zap.String("script", script), zap.Error(err))
				continue
			}
			old := cur.Swap(snap)
			log.Info("server script reloaded", zap.String("script", script), zap.Uint64("generation", snap.Gen))
			if !changed[files[0]] && sameFunctions(old, snap) {
				continue
			}
		}
		srv.NotifyToolsChanged()
	}
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
