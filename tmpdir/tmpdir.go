package tmpdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Name prefixes. "mcp-call." is part of the SDK contract (documented as the
// pattern a call's root matches); the runtime prefix is ours.
const (
	CallPrefix    = "mcp-call."
	RuntimePrefix = "mcp-bashd."
	ownerFile     = ".mcp-bashd-owner"
)

// Base returns the absolute directory new roots are created in: TMPDIR, or
// /tmp when unset.
func Base() (string, error) {
	base := os.Getenv("TMPDIR")
	if base == "" {
		base = os.TempDir()
	}
	return filepath.Abs(base)
}

// Owner identifies a live daemon process across pid reuse.
type Owner struct {
	PID   int
	Start uint64 // field 22 of /proc/PID/stat: clock ticks after boot
}

// Self is the owner record of the current process.
func Self() (Owner, error) {
	pid := os.Getpid()
	st, err := startTime(pid)
	if err != nil {
		return Owner{}, err
	}
	return Owner{PID: pid, Start: st}, nil
}

func (o Owner) String() string { return fmt.Sprintf("%d %d\n", o.PID, o.Start) }

// alive reports whether the owner's process still exists (same pid and the
// same start time, so a reused pid does not count).
func (o Owner) alive() bool {
	st, err := startTime(o.PID)
	return err == nil && st == o.Start
}

func startTime(pid int) (uint64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces and parentheses: fields
	// are counted after the last ')'.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, errors.New("malformed /proc stat")
	}
	f := strings.Fields(string(b[i+1:]))
	// After ')' come field 3 (state) onwards; start time is field 22.
	if len(f) < 20 {
		return 0, errors.New("short /proc stat")
	}
	return strconv.ParseUint(f[19], 10, 64)
}

// Create makes a fresh 0700 directory prefix+random under base, with the
// owner record inside it.
func Create(base, prefix string, owner Owner) (string, error) {
	dir, err := os.MkdirTemp(base, prefix+"*")
	if err != nil {
		return "", err
	}
	// MkdirTemp uses 0700 already; chmod makes it independent of umask
	// quirks on exotic filesystems.
	if err := os.Chmod(dir, 0o700); err != nil {
		Remove(dir)
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(owner.String()), 0o600); err != nil {
		Remove(dir)
		return "", err
	}
	return dir, nil
}

// Remove deletes dir and everything below it without following symlinks.
// A first pass removes what it can; if that fails (a tool left a directory
// read-only or mode 000), permissions of the real directories below are
// restored and the removal is retried.
func Remove(dir string) error {
	err := os.RemoveAll(dir)
	if err == nil {
		return nil
	}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, werr error) error {
		// WalkDir uses Lstat: a symlink is reported as a symlink and never
		// descended into, so only the call's own directories are chmodded.
		if werr != nil {
			// An unreadable directory: make it traversable, then walk on.
			if d != nil && d.IsDir() || errors.Is(werr, fs.ErrPermission) {
				_ = os.Chmod(p, 0o700)
			}
			return nil
		}
		if d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	// Mode 000 directories may hide subdirectories until chmodded; a
	// second walk reaches them.
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, werr error) error {
		if werr == nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	return os.RemoveAll(dir)
}

// Sweep removes directories left under base by daemons that are provably
// gone: only directories with our prefixes, owned by this user, that carry
// an owner record naming a process that no longer exists. A directory
// without a record (another tool's, or one being created right now) is left
// alone. It returns the paths removed.
func Sweep(base string) ([]string, error) {
	entries, err := os.ReadDir(base)
	if err != nil {
		return nil, err
	}
	uid := os.Getuid()
	var removed []string
	var errs []error
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || !(strings.HasPrefix(name, CallPrefix) || strings.HasPrefix(name, RuntimePrefix)) {
			continue
		}
		dir := filepath.Join(base, name)
		if !ownedBy(dir, uid) {
			continue
		}
		owner, ok := readOwner(dir)
		if !ok || owner.alive() {
			continue
		}
		if err := Remove(dir); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, dir)
	}
	return removed, errors.Join(errs...)
}

func readOwner(dir string) (Owner, bool) {
	b, err := os.ReadFile(filepath.Join(dir, ownerFile))
	if err != nil {
		return Owner{}, false
	}
	var o Owner
	if _, err := fmt.Sscanf(string(b), "%d %d", &o.PID, &o.Start); err != nil || o.PID <= 0 {
		return Owner{}, false
	}
	return o, true
}
