//go:build !portable

package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/mcp-bashd/mcp-bashd/sandbox/exechelper"
)

// share prepares a root daemon's call that runs as u (never root: see
// docs/security.md, "Root and non-root daemons"): the call's own files
// become u's, and the daemon's files the call needs are opened to u's
// group — read for the scripts, write for a FIFO, search for their
// directories — and to no one else. A file already so is left alone, so
// a call costs a stat per shared file once the first call did the work.
func share(p Paths, u exechelper.IDs) error {
	if dir := searchable(filepath.Dir(p.Root), u); dir != "" {
		return fmt.Errorf("%s is not searchable by uid %d, which a root daemon's sandboxed calls run as: allow it (chmod o+x) or set TMPDIR to a directory under which every directory is", dir, u.UID)
	}
	for _, f := range p.Own {
		if err := os.Lchown(f, u.UID, u.GID); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	dirs := map[string]bool{}
	for _, f := range p.Shared {
		if !dirs[filepath.Dir(f)] {
			dirs[filepath.Dir(f)] = true
			if err := openToGroup(filepath.Dir(f), u.GID, 0o010); err != nil {
				return err
			}
		}
		if err := openToGroup(f, u.GID, 0o040); err != nil {
			return err
		}
	}
	return nil
}

// searchable names the first directory from dir up that u cannot search
// ("" when it can reach dir), so that a TMPDIR under /root fails the call
// with a sentence instead of bash's "Permission denied" on the prelude.
func searchable(dir string, u exechelper.IDs) string {
	for d := dir; ; d = filepath.Dir(d) {
		var st unix.Stat_t
		if unix.Stat(d, &st) == nil {
			ok := st.Mode&0o001 != 0 || (int(st.Uid) == u.UID && st.Mode&0o100 != 0) ||
				(int(st.Gid) == u.GID && st.Mode&0o010 != 0)
			if !ok {
				return d
			}
		}
		if d == "/" || d == "." {
			return ""
		}
	}
}

// openToGroup gives path to group gid with the bits want (a FIFO gets
// write as well: the call writes notifications into it).
func openToGroup(path string, gid int, want uint32) error {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil
		}
		return err
	}
	if st.Mode&unix.S_IFMT == unix.S_IFIFO {
		want = 0o060
	}
	if int(st.Gid) == gid && st.Mode&want == want {
		return nil
	}
	if err := unix.Lchown(path, -1, gid); err != nil {
		return err
	}
	return unix.Chmod(path, (st.Mode&0o7777)|want)
}
