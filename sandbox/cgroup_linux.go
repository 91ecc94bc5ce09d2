//go:build !portable

package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// cgroups is the daemon's own cgroup subtree: a parent directory per
// hierarchy (mcp-bashd.PID, under the daemon's own cgroup) that
// holds one child per call. Version 2 when the unified hierarchy offers
// the memory and pids controllers to the daemon's cgroup; otherwise the
// v1 memory and pids hierarchies, whichever are mounted (a host with a
// v2 hierarchy that has no controllers, like many CI machines, is v1).
type cgroups struct {
	version int               // 1 or 2; 0: unavailable (why says why)
	why     string            // why cgroup limits are unavailable
	parents map[string]string // v1: controller → parent dir; v2: "" → parent dir
	seq     atomic.Uint64
}

// controllers are the ones the calls use.
var controllers = []string{"memory", "pids"}

// mount is one cgroup mount of /proc/self/mountinfo.
type mount struct {
	dir, root string
	v2        bool
	opts      map[string]bool // v1: the controllers it carries
}

func readMounts() ([]mount, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []mount
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [TAGS...] - FSTYPE SOURCE SUPEROPTS
		left, right, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		lf, rf := strings.Fields(left), strings.Fields(right)
		if len(lf) < 5 || len(rf) < 3 {
			continue
		}
		m := mount{dir: unescape(lf[4]), root: unescape(lf[3]), opts: map[string]bool{}}
		switch rf[0] {
		case "cgroup2":
			m.v2 = true
		case "cgroup":
			for _, o := range strings.Split(rf[2], ",") {
				m.opts[o] = true
			}
		default:
			continue
		}
		out = append(out, m)
	}
	return out, sc.Err()
}

// unescape undoes mountinfo's octal escapes (\040 for a space).
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// ownCgroups reads /proc/self/cgroup: controller → path ("" for v2).
func ownCgroups() (map[string]string, error) {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[1] == "" {
			out[""] = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			out[c] = parts[2]
		}
	}
	return out, nil
}

// dirOf is the directory of cgroup path own in mount m (the mount may show
// only a subtree: its root is cut from own).
func dirOf(m mount, own string) (string, bool) {
	rel := own
	if m.root != "/" {
		var ok bool
		if rel, ok = strings.CutPrefix(own, m.root); !ok {
			return "", false
		}
	}
	return filepath.Join(m.dir, rel), true
}

// setupCgroups finds the hierarchies and creates the daemon's parents.
func setupCgroups() *cgroups {
	c := &cgroups{parents: map[string]string{}}
	mounts, err := readMounts()
	if err != nil {
		c.why = "cannot read mounts: " + err.Error()
		return c
	}
	own, err := ownCgroups()
	if err != nil {
		c.why = "cannot read /proc/self/cgroup: " + err.Error()
		return c
	}
	name := "mcp-bashd." + strconv.Itoa(os.Getpid())
	var whyV2 string
	for _, m := range mounts {
		if !m.v2 {
			continue
		}
		dir, ok := dirOf(m, own[""])
		if !ok {
			continue
		}
		parent, err := setupV2(dir, name)
		if err == nil {
			c.version, c.parents[""] = 2, parent
			return c
		}
		whyV2 = err.Error()
	}
	var whys []string
	for _, ctl := range controllers {
		for _, m := range mounts {
			if m.v2 || !m.opts[ctl] {
				continue
			}
			dir, ok := dirOf(m, own[ctl])
			if !ok {
				continue
			}
			sweep(dir)
			parent := filepath.Join(dir, name)
			if err := os.Mkdir(parent, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
				whys = append(whys, fmt.Sprintf("v1 %s: %v", ctl, err))
				continue
			}
			c.parents[ctl] = parent
		}
	}
	if len(c.parents) > 0 {
		c.version = 1
		return c
	}
	if whyV2 != "" {
		whys = append([]string{"v2: " + whyV2}, whys...)
	}
	if len(whys) == 0 {
		whys = append(whys, "no cgroup hierarchy with the memory or pids controller is mounted")
	}
	c.why = strings.Join(whys, "; ")
	return c
}

// setupV2 makes dir/name a parent whose children get the memory and pids
// controllers. A v2 cgroup with processes cannot hand controllers to its
// children ("no internal processes"), so when the daemon's own cgroup
// refuses, the daemon moves itself into a leaf beside the parent first,
// as a service with Delegate=yes is expected to.
func setupV2(dir, name string) (string, error) {
	avail, err := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	if err != nil {
		return "", err
	}
	have := map[string]bool{}
	for _, c := range strings.Fields(string(avail)) {
		have[c] = true
	}
	for _, c := range controllers {
		if !have[c] {
			return "", fmt.Errorf("the %s controller is not available in %s", c, dir)
		}
	}
	sweep(dir)
	enable := "+memory +pids"
	if err := writeFile(filepath.Join(dir, "cgroup.subtree_control"), enable); err != nil {
		if !errors.Is(err, unix.EBUSY) {
			return "", err
		}
		leaf := filepath.Join(dir, name+".daemon")
		if err := os.Mkdir(leaf, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return "", err
		}
		if err := writeFile(filepath.Join(leaf, "cgroup.procs"), strconv.Itoa(os.Getpid())); err != nil {
			return "", fmt.Errorf("move the daemon to a leaf cgroup: %w", err)
		}
		if err := writeFile(filepath.Join(dir, "cgroup.subtree_control"), enable); err != nil {
			return "", err
		}
	}
	parent := filepath.Join(dir, name)
	if err := os.Mkdir(parent, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return "", err
	}
	if err := writeFile(filepath.Join(parent, "cgroup.subtree_control"), enable); err != nil {
		os.Remove(parent)
		return "", err
	}
	return parent, nil
}

// sweep removes what daemons that are gone left in dir: their parents
// (mcp-bashd.PID with no such process) and the call cgroups inside, whose
// processes are killed first (they were a dead daemon's calls).
func sweep(dir string) {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		pid, ok := strings.CutPrefix(e.Name(), "mcp-bashd.")
		if !ok || !e.IsDir() {
			continue
		}
		pid = strings.TrimSuffix(pid, ".daemon")
		n, err := strconv.Atoi(pid)
		if err != nil || n == os.Getpid() || !errors.Is(unix.Kill(n, 0), unix.ESRCH) {
			continue // not ours to judge, or its daemon lives
		}
		parent := filepath.Join(dir, e.Name())
		calls, _ := os.ReadDir(parent)
		for _, c := range calls {
			if c.IsDir() {
				killAndRemove(filepath.Join(parent, c.Name()), time.Second)
			}
		}
		os.Remove(parent)
	}
}

// group is one call's cgroup: a directory per hierarchy (one on v2).
type group struct {
	version int
	dirs    map[string]string // controller ("" on v2) → dir
}

// newGroup creates a call's cgroup and sets its limits: memory (and
// memory+swap, so swap is no way around it) and pids.
func (c *cgroups) newGroup(s *Spec) (*group, error) {
	g := &group{version: c.version, dirs: map[string]string{}}
	name := "call-" + strconv.FormatUint(c.seq.Add(1), 10)
	for ctl, parent := range c.parents {
		dir := filepath.Join(parent, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			g.remove()
			return nil, fmt.Errorf("create the call's cgroup: %w", err)
		}
		g.dirs[ctl] = dir
	}
	if err := g.limit(s); err != nil {
		g.remove()
		return nil, fmt.Errorf("set the call's cgroup limits: %w", err)
	}
	return g, nil
}

func (g *group) limit(s *Spec) error {
	mem, pids := g.dirs["memory"], g.dirs["pids"]
	memMax, swapMax, pidsMax := "memory.limit_in_bytes", "memory.memsw.limit_in_bytes", "pids.max"
	if g.version == 2 {
		mem, pids = g.dirs[""], g.dirs[""]
		memMax, swapMax = "memory.max", "memory.swap.max"
	}
	if s.Memory > 0 && mem != "" {
		if err := writeFile(filepath.Join(mem, memMax), strconv.FormatInt(s.Memory, 10)); err != nil {
			return err
		}
		swap := strconv.FormatInt(s.Memory, 10) // v1: memory+swap
		if g.version == 2 {
			swap = "0" // v2: swap alone
		}
		// Without swap accounting the file is missing: memory alone is
		// then limited, and swap may extend it.
		if err := writeFile(filepath.Join(mem, swapMax), swap); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	if s.Processes > 0 && pids != "" {
		if err := writeFile(filepath.Join(pids, pidsMax), strconv.FormatInt(s.Processes, 10)); err != nil {
			return err
		}
	}
	return nil
}

// has reports whether the group carries controller ctl.
func (g *group) has(ctl string) bool {
	if g == nil {
		return false
	}
	if g.version == 2 {
		return true
	}
	_, ok := g.dirs[ctl]
	return ok
}

// procsFiles are the files the exec helper writes its pid to, to join.
func (g *group) procsFiles() []string {
	var out []string
	for _, d := range g.dirs {
		out = append(out, filepath.Join(d, "cgroup.procs"))
	}
	return out
}

// events reads how often the limits bit: memory OOM kills and refused
// forks. Read before the group is removed.
func (g *group) events() (oomKills, pidsMax int64) {
	mem, pids := g.dirs["memory"], g.dirs["pids"]
	memFile := "memory.oom_control" // v1: "oom_kill N" since Linux 4.13
	if g.version == 2 {
		mem, pids, memFile = g.dirs[""], g.dirs[""], "memory.events"
	}
	if mem != "" {
		oomKills = counter(filepath.Join(mem, memFile), "oom_kill")
	}
	if pids != "" {
		pidsMax = counter(filepath.Join(pids, "pids.events"), "max")
	}
	return
}

// counter reads "KEY N" from a flat-keyed cgroup file (0 when absent).
func counter(path, key string) int64 {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, " "); ok && k == key {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// kill ends every process of the group — setsid escapees and double forks
// included, which the process group no longer holds — and removes it.
func (g *group) kill() error {
	var errs []error
	for _, d := range g.dirs {
		errs = append(errs, killAndRemove(d, 5*time.Second))
	}
	return errors.Join(errs...)
}

// remove removes an unused group's directories.
func (g *group) remove() {
	if g == nil {
		return
	}
	for _, d := range g.dirs {
		os.Remove(d)
	}
}

// killAndRemove empties a cgroup: cgroup.kill where the kernel has it (v2,
// Linux 5.14), else SIGKILL to every member listed in cgroup.procs until
// it lists none (a member forking meanwhile has its child listed in the
// next round; a killed process cannot fork again). Then rmdir, which the
// kernel refuses (EBUSY) while a member is still exiting.
func killAndRemove(dir string, budget time.Duration) error {
	if err := writeFile(filepath.Join(dir, "cgroup.kill"), "1"); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("cgroup.kill: %w", err)
	}
	end := time.Now().Add(budget)
	pause := 100 * time.Microsecond
	for {
		pids, err := members(dir)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		for _, pid := range pids {
			_ = unix.Kill(pid, unix.SIGKILL)
		}
		if len(pids) == 0 {
			err := os.Remove(dir)
			if err == nil || errors.Is(err, os.ErrNotExist) {
				return nil
			}
			if !errors.Is(err, unix.EBUSY) || time.Now().After(end) {
				return err
			}
		} else if time.Now().After(end) {
			return fmt.Errorf("%d processes still in %s", len(pids), dir)
		}
		// The killed are exiting; the kernel offers no event for a v1
		// cgroup becoming empty that is cheaper than looking again.
		time.Sleep(pause)
		pause = min(pause*2, 10*time.Millisecond)
	}
}

// members lists the pids in a cgroup.
func members(dir string) ([]int, error) {
	data, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil, err
	}
	var out []int
	for _, f := range strings.Fields(string(data)) {
		if n, err := strconv.Atoi(f); err == nil {
			out = append(out, n)
		}
	}
	return out, nil
}

// close removes the daemon's parents (their calls are gone by then).
func (c *cgroups) close() {
	for _, p := range c.parents {
		os.Remove(p)
	}
}

func writeFile(path, s string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(s)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
