package tmpdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
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

// Owner is what a directory's owner record says: the runtime directory of
// the daemon that made it. A daemon holds an exclusive flock on its runtime
// directory's record for its whole life; the kernel drops the lock when the
// daemon dies, however it dies, and a lock is the same object seen from any
// pid namespace sharing the filesystem. So "the owner is provably gone"
// means "its lock can be taken" — not "its pid is absent from my /proc",
// which a daemon in another container would get wrong.
type Owner struct {
	Runtime string
}

func (o Owner) String() string { return o.Runtime + "\n" }

// Runtime is a daemon's own directory, locked for its lifetime.
type Runtime struct {
	Dir  string
	lock *os.File
}

// NewRuntime creates base/mcp-bashd.XXXX with its locked owner record.
func NewRuntime(base string) (*Runtime, error) {
	dir, err := os.MkdirTemp(base, RuntimePrefix+"*")
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, ownerFile), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("lock owner record: %w", err)
	}
	// Written only once locked: Sweep leaves an empty record alone (its
	// maker may be between open and flock).
	if _, err := f.WriteString(Owner{Runtime: dir}.String()); err != nil {
		f.Close()
		os.RemoveAll(dir)
		return nil, err
	}
	return &Runtime{Dir: dir, lock: f}, nil
}

// Owner is the record call roots of this runtime carry.
func (r *Runtime) Owner() Owner { return Owner{Runtime: r.Dir} }

// Close removes the runtime directory, then releases the lock.
func (r *Runtime) Close() error {
	err := Remove(r.Dir)
	r.lock.Close()
	return err
}

// runtimeGone reports whether the daemon owning runtime dir is provably
// gone: its directory no longer exists, or its record's lock can be taken.
func runtimeGone(dir string) bool {
	f, err := os.OpenFile(filepath.Join(dir, ownerFile), os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		_, derr := os.Lstat(dir)
		return errors.Is(derr, fs.ErrNotExist)
	}
	if err != nil {
		return false
	}
	defer f.Close()
	if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil {
		return false // held: alive
	}
	defer unix.Flock(int(f.Fd()), unix.LOCK_UN)
	fi, err := f.Stat()
	return err == nil && fi.Size() > 0
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
	// A call root's record is a symlink to the runtime directory: its
	// target lives in the inode (no data block to allocate, and on a disk
	// filesystem to free and discard again when the root goes), and it
	// is made with one system call. Nothing follows it: Sweep reads it.
	rec := filepath.Join(dir, ownerFile)
	if err := unix.Symlinkat(owner.Runtime, unix.AT_FDCWD, rec); err != nil {
		Remove(dir)
		return "", &fs.PathError{Op: "symlink", Path: rec, Err: err}
	}
	return dir, nil
}

// Remove deletes dir and everything below it without following symlinks.
// A first pass removes what it can; if that fails (a tool left a directory
// read-only or mode 000), permissions of the real directories below are
// restored and the removal is retried.
func Remove(dir string) error {
	if removeFlat(dir) {
		return nil
	}
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
		var gone bool
		if strings.HasPrefix(name, RuntimePrefix) {
			gone = runtimeGone(dir)
		} else if owner, ok := readOwner(dir); ok {
			gone = runtimeGone(owner.Runtime)
		}
		if !gone {
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
	// A symlink since issue 13; a file (the runtime and a newline) before.
	rec := filepath.Join(dir, ownerFile)
	rt, err := os.Readlink(rec)
	if err != nil {
		b, ferr := os.ReadFile(rec)
		if ferr != nil {
			return Owner{}, false
		}
		rt = strings.TrimSpace(string(b))
	}
	if !filepath.IsAbs(rt) || !strings.HasPrefix(filepath.Base(rt), RuntimePrefix) {
		return Owner{}, false
	}
	return Owner{Runtime: rt}, true
}

// removeFlat removes dir when it holds only files and empty directories —
// what a call's root holds after nearly every call — with one directory
// read and one unlinkat per entry (os.RemoveAll first tries dir as a file,
// then as an empty directory, then each entry as a file before as a
// directory). false: something is left (a non-empty subdirectory, a
// permission problem); the caller's full removal takes over from there.
func removeFlat(dir string) bool {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	ok := removeEntries(fd)
	unix.Close(fd)
	return ok && unix.Rmdir(dir) == nil
}
