package tmpdir

import (
	"os"
	"path/filepath"
	"testing"
)

// Remove's flat pass takes files and empty directories; a non-empty
// subdirectory, or one the owner cannot write, falls back to the full
// removal, which takes them too. A symlink is removed, never followed.
func TestRemove(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "keep")
	if err := os.WriteFile(outside, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, build := range map[string]func(dir string) error{
		"files and an empty dir": func(dir string) error {
			os.WriteFile(filepath.Join(dir, "a"), nil, 0o600)
			os.WriteFile(filepath.Join(dir, ".hidden"), nil, 0o600)
			return os.Mkdir(filepath.Join(dir, "tmp"), 0o700)
		},
		"a nested tree": func(dir string) error {
			return os.MkdirAll(filepath.Join(dir, "tmp", "x", "y"), 0o700)
		},
		"a read-only subdir with a file": func(dir string) error {
			sub := filepath.Join(dir, "tmp")
			os.Mkdir(sub, 0o700)
			os.WriteFile(filepath.Join(sub, "f"), nil, 0o600)
			return os.Chmod(sub, 0o500)
		},
		"a symlink out": func(dir string) error {
			return os.Symlink(outside, filepath.Join(dir, "link"))
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "root")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := build(dir); err != nil {
				t.Fatal(err)
			}
			if err := Remove(dir); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Lstat(dir); !os.IsNotExist(err) {
				t.Fatalf("%s still there: %v", dir, err)
			}
			if _, err := os.Stat(outside); err != nil {
				t.Fatalf("the symlink's target is gone: %v", err)
			}
		})
	}
}

// A root's owner record names its runtime directory; Sweep reads it
// whether it is a symlink (since issue 13) or a file (before).
func TestOwnerRecord(t *testing.T) {
	base := t.TempDir()
	rt := filepath.Join(base, RuntimePrefix+"x")
	dir, err := Create(base, CallPrefix, Owner{Runtime: rt})
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := readOwner(dir); !ok || got.Runtime != rt {
		t.Fatalf("record of a new root: %+v %v, want %s", got, ok, rt)
	}
	old := filepath.Join(base, CallPrefix+"old")
	if err := os.Mkdir(old, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(old, ownerFile), []byte(rt+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, ok := readOwner(old); !ok || got.Runtime != rt {
		t.Fatalf("record of an older daemon's root: %+v %v, want %s", got, ok, rt)
	}
	// The runtime is gone (never made): Sweep removes both.
	removed, err := Sweep(base)
	if err != nil || len(removed) != 2 {
		t.Fatalf("Sweep: %v %v", removed, err)
	}
}
