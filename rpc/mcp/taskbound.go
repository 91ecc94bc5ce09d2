package mcp

import (
	"fmt"
	"time"

	"github.com/mcp-bashd/mcp-bashd/rpc/wire"
)

// The task store's bounds (Options.TaskStoreMax, TaskStoreBytes): what
// clients can make the daemon hold in tasks, whatever their TTLs say.
const (
	DefaultTaskStoreMax   = 1000     // tasks held, running or finished
	DefaultTaskStoreBytes = 64 << 20 // bytes of finished tasks' results
)

// The rule when a bound is reached: finished tasks are dropped oldest
// ended first (their ids are then unknown, as after their TTL); a new task
// when every held task is still running is refused; a result larger than
// the whole byte bound is not kept, and its task fails saying so.

// room makes room for one more task (st.mu held): false when every task
// held is running.
func (st *taskStore) room() bool {
	for len(st.m) >= st.maxCount() {
		if !st.evictOldestLocked(nil) {
			return false
		}
	}
	return true
}

// keep accounts tk's finished result (st.mu held), evicting others past
// the byte bound; false when the result alone is over it.
func (st *taskStore) keep(tk *task) bool {
	size := int64(len(tk.result))
	if tk.err != nil {
		size += int64(len(tk.err.Message))
	}
	if size > st.maxBytes() {
		return false
	}
	tk.size, tk.ended = size, time.Now()
	st.bytes += size
	for st.bytes > st.maxBytes() && st.evictOldestLocked(tk) {
	}
	return true
}

// evictOldestLocked drops the finished task that ended first, other than
// except; false when there is none.
func (st *taskStore) evictOldestLocked(except *task) bool {
	var old *task
	for _, tk := range st.m {
		if tk != except && !tk.ended.IsZero() && (old == nil || tk.ended.Before(old.ended)) {
			old = tk
		}
	}
	if old == nil {
		return false
	}
	st.removeLocked(old.id)
	st.evicted++
	if st.share != nil {
		st.share.forget(old.id)
	}
	return true
}

func (st *taskStore) removeLocked(id string) {
	if tk := st.m[id]; tk != nil {
		st.bytes -= tk.size
		// Whoever still holds tk (a tasks/result just woken) does not hold
		// its result, and answers that it is gone.
		if tk.result != nil {
			tk.result, tk.status = nil, taskFailed
			tk.err = wire.Errorf(wire.CodeInternal, "Task "+id+" is no longer held: it expired or the task store's bound dropped it")
		}
		tk.size = 0
		delete(st.m, id)
	}
}

func (st *taskStore) maxCount() int {
	if st.max > 0 {
		return st.max
	}
	return DefaultTaskStoreMax
}

func (st *taskStore) maxBytes() int64 {
	if st.maxB > 0 {
		return st.maxB
	}
	return DefaultTaskStoreBytes
}

// errTaskStoreFull refuses a task when every held task still runs.
func errTaskStoreFull(n int) *wire.Error {
	return wire.Errorf(wire.CodeInternal, fmt.Sprintf("Task store full: %d tasks are running (--task-store-max); retry when one has finished", n))
}

// tooLargeToKeep is the error a task whose result is over the byte bound
// ends with.
func tooLargeToKeep(tool string, size int, bound int64) *wire.Error {
	return wire.Errorf(wire.CodeInternal, fmt.Sprintf("Tool %s completed, but its result (%d bytes) is larger than the task store keeps (--task-store-bytes %d)", tool, size, bound))
}
