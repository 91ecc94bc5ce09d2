package main

// The drop-in form: the shim's run_mcp_server starts the daemon as a child
// of the server script's shell, which waits for it (so that
// run_mcp_server returns at end of input) and passes on the host's
// signals. Two things only the daemon can do for that shell: find the
// script it is running, and die with it.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// scriptFD is where bash keeps the script it is reading open (its
// highest free descriptor under 256; always 255 in practice).
const scriptFD = 255

// scriptPath makes the server script's path absolute. The drop-in shim
// passes the name the script was started by, which is relative to where
// the shell started; the script may have changed directory since (the
// common `cd "$(dirname "$0")"`), so that name can lead nowhere, or
// elsewhere, from here. The shell's scriptFD names the file as the kernel
// resolved it at start; it is used unless the given name still leads to
// the same file (kept then, so a symlink's name stays what it was). macOS
// has no /proc: there the name is taken from here, as in the manifest
// form (a script started by a relative name that changes directory before
// run_mcp_server is not found; hosts start servers by absolute paths).
// Not a regular file there — `bash -c`, an interactive shell (a terminal) — or
// no shell: the name, from here, as in the manifest form.
func scriptPath(given string, shell int) (string, error) {
	abs, err := filepath.Abs(given)
	if err != nil || filepath.IsAbs(given) || shell <= 0 {
		return abs, err
	}
	link := fmt.Sprintf("/proc/%d/fd/%d", shell, scriptFD)
	open, err := os.Stat(link)
	if err != nil || !open.Mode().IsRegular() {
		return abs, nil
	}
	if st, err := os.Stat(abs); err == nil && os.SameFile(st, open) {
		return abs, nil
	}
	target, err := os.Readlink(link)
	if err != nil || !filepath.IsAbs(target) {
		return abs, nil
	}
	return target, nil
}

// errShellGone is a drop-in daemon whose shell died before it could watch.
var errShellGone = errors.New("the server script's shell is gone")
