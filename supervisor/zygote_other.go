//go:build !linux || portable

package supervisor

// No fork server where there are no warm processes (warmos_posix.go) or
// no /proc to find a forked process's $$ in: zygote_linux.go.

type zygote struct{}

func (r *reaper) pumpSourcesLocked() {}

func (p *warmPool) newWarm(sn *Snapshot) (*warmProc, error) { return p.s.startWarm(sn) }

func (p *warmPool) retireZygoteLocked() {}

func (p *warmPool) forkFor(Request) *warmProc { return nil }

func ctlDir() string { return "" }

func (w *warmProc) removeCtl() {}

// No keeper where nothing is forked (keeper_linux.go).
func (r *reaper) closeKeeper() {}

func (s *Supervisor) pinGroup(int) int { return 0 }
