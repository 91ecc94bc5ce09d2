//go:build darwin || (linux && portable)

package supervisor

import "sync"

// exitWatch tells of the exits of the reaper's leaders without reaping
// them (reaper_posix.go): exitwatch_darwin.go and, for the portable build
// on Linux, exitwatch_linux.go.
type exitWatch interface {
	// add watches pid, a child that may have exited already; its exit is
	// pushed on the queue once.
	add(pid int)
	close()
}

// exitQueue holds the pids a watch reported, until the reaper takes them.
type exitQueue struct {
	mu   sync.Mutex
	pids []int
	kick chan struct{}
}

func newExitQueue() *exitQueue { return &exitQueue{kick: make(chan struct{}, 1)} }

func (q *exitQueue) push(pid int) {
	q.mu.Lock()
	q.pids = append(q.pids, pid)
	q.mu.Unlock()
	select {
	case q.kick <- struct{}{}:
	default:
	}
}

func (q *exitQueue) take() []int {
	q.mu.Lock()
	defer q.mu.Unlock()
	pids := q.pids
	q.pids = nil
	return pids
}

// watched is the set of pids a watch has been asked for and not yet
// reported: each add is reported once, however many ways its exit is seen.
type watched struct {
	mu   sync.Mutex
	pids map[int]struct{}
	q    *exitQueue
}

func (w *watched) put(pid int) {
	w.mu.Lock()
	w.pids[pid] = struct{}{}
	w.mu.Unlock()
}

// report pushes pid's exit if pid is watched, and stops watching it.
func (w *watched) report(pid int) {
	w.mu.Lock()
	_, ok := w.pids[pid]
	delete(w.pids, pid)
	w.mu.Unlock()
	if ok {
		w.q.push(pid)
	}
}

// list is the watched pids.
func (w *watched) list() []int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]int, 0, len(w.pids))
	for pid := range w.pids {
		out = append(out, pid)
	}
	return out
}
