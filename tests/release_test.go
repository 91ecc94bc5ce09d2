// Issue 12, item 10: one command makes a release. `go run ./scripts/release`
// runs into a temporary directory; its archives (Linux and darwin, issue
// 22), the Homebrew formula of the darwin ones, SHA256SUMS, .deb (unpacked
// with dpkg-deb -x into a throwaway root, no root needed) and .apk (read as
// its gzip segments here) hold what the README says they hold, and the
// unpacked binary answers a real session through the packaged shim.
// .ci/run installs the .deb for real with dpkg -i.

package tests

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"debug/elf"
	"debug/macho"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-bashd/mcp-bashd/tests/internal/harness"
)

// rlVersion is the version the test releases: a prerelease, so the
// packages' own spellings of it (1.2.3~rc4, 1.2.3_rc4) are checked too.
const rlVersion = "1.2.3-rc4"

// rlArches maps GOARCH to the ELF machine and the .deb's and .apk's
// names for it.
var rlArches = map[string]struct {
	machine  elf.Machine
	deb, apk string
}{
	"amd64": {elf.EM_X86_64, "amd64", "x86_64"},
	"arm64": {elf.EM_AARCH64, "arm64", "aarch64"},
}

// rlFiles are the release's file names for goarch.
func rlFiles(goarch string) (tarball, tarPrefix, deb, apk string) {
	a := rlArches[goarch]
	base := "mcp-bashd_" + rlVersion + "_linux_" + goarch
	return base + ".tar.gz", base + "/", "mcp-bashd_1.2.3~rc4_" + a.deb + ".deb", "mcp-bashd_1.2.3_rc4_" + a.apk + ".apk"
}

// rlPayload is what every archive and package installs, relative to /.
var rlPayload = map[string]struct {
	mode fs.FileMode
	repo string // the repository file it must equal; "" for the binary
}{
	"usr/bin/mcp-bashd":                     {0o755, ""},
	"usr/share/mcp-bashd/mcpserver_core.sh": {0o644, "scripts/mcpserver_core.sh"},
	"usr/share/doc/mcp-bashd/README.md":     {0o644, "README.md"},
	"usr/share/doc/mcp-bashd/LICENSE":       {0o644, "LICENSE"},
}

func TestReleaseOutputs(t *testing.T) {
	if _, err := exec.LookPath("dpkg-deb"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("dpkg-deb is missing")
		}
		t.Skip("dpkg-deb is missing")
	}
	out := t.TempDir()
	cmd := exec.Command("go", "run", "./scripts/release", "-version", rlVersion, "-out", out)
	cmd.Dir = shRoot(t)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go run ./scripts/release: %v\n%s", err, stderr.String())
	}

	// It prints what it wrote, and wrote nothing else.
	want := []string{"SHA256SUMS", "mcp-bashd.rb"}
	for goarch := range rlArches {
		tarball, _, deb, apk := rlFiles(goarch)
		want = append(want, tarball, deb, apk)
	}
	for goarch := range rlDarwin {
		want = append(want, "mcp-bashd_"+rlVersion+"_darwin_"+goarch+".tar.gz")
	}
	slices.Sort(want)
	var printed []string
	for _, line := range strings.Fields(stdout.String()) {
		printed = append(printed, filepath.Base(line))
	}
	slices.Sort(printed)
	ents, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	var written []string
	for _, e := range ents {
		written = append(written, e.Name())
	}
	if !slices.Equal(printed, want) || !slices.Equal(written, want) {
		t.Fatalf("release printed %v and wrote %v, want %v", printed, written, want)
	}
	rlCheckSums(t, out, want)
	for goarch := range rlDarwin {
		t.Run("darwin_"+goarch, func(t *testing.T) { rlCheckDarwin(t, out, goarch) })
	}

	for goarch, a := range rlArches {
		t.Run(goarch, func(t *testing.T) {
			tarball, tarPrefix, debFile, apkFile := rlFiles(goarch)
			bins := map[string][]byte{}
			files, modes := rlReadTarball(t, filepath.Join(out, tarball), tarPrefix)
			bins["tar.gz"] = rlCheckPayload(t, tarball, files, modes, true)

			root := t.TempDir()
			if b, err := exec.Command("dpkg-deb", "-x", filepath.Join(out, debFile), root).CombinedOutput(); err != nil {
				t.Fatalf("dpkg-deb -x: %v\n%s", err, b)
			}
			files, modes = rlReadTree(t, root)
			// Debian's license file, the LICENSE's text under Expat (MIT).
			copyright := string(files["usr/share/doc/mcp-bashd/copyright"])
			delete(files, "usr/share/doc/mcp-bashd/copyright")
			if !strings.HasPrefix(copyright, "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n") ||
				!strings.Contains(copyright, "\nLicense: Expat\n MIT License\n .\n Copyright (c) ") || !strings.Contains(copyright, "\n SOFTWARE.\n") {
				t.Errorf("%s copyright file:\n%s", debFile, copyright)
			}
			bins["deb"] = rlCheckPayload(t, debFile, files, modes, false)
			fields, err := exec.Command("dpkg-deb", "-f", filepath.Join(out, debFile), "Package", "Version", "Architecture", "Depends").Output()
			if err != nil {
				t.Fatal(err)
			}
			if got, wantF := string(fields), "Package: mcp-bashd\nVersion: 1.2.3~rc4\nArchitecture: "+a.deb+"\nDepends: bash\n"; got != wantF {
				t.Errorf("%s control fields:\n%s\nwant:\n%s", debFile, got, wantF)
			}
			// A maintainer is a name and a mail address, not a web page.
			if m, _ := exec.Command("dpkg-deb", "-f", filepath.Join(out, debFile), "Maintainer").Output(); !regexp.MustCompile(`^[^<>]+ <[^<>@/]+@[^<>/]+>\n$`).Match(m) {
				t.Errorf("%s %q", debFile, m)
			}

			info, files, modes := rlReadApk(t, filepath.Join(out, apkFile))
			bins["apk"] = rlCheckPayload(t, apkFile, files, modes, false)
			for _, kv := range []string{"pkgname = mcp-bashd", "pkgver = 1.2.3_rc4", "arch = " + a.apk, "depend = bash", "license = MIT"} {
				if !slices.Contains(info, kv) {
					t.Errorf("%s .PKGINFO lacks %q:\n%s", apkFile, kv, strings.Join(info, "\n"))
				}
			}

			// One build: the same binary everywhere, static, for its machine.
			if !bytes.Equal(bins["tar.gz"], bins["deb"]) || !bytes.Equal(bins["tar.gz"], bins["apk"]) {
				t.Error("the archive's, the .deb's and the .apk's binaries differ")
			}
			exe := filepath.Join(root, "usr/bin/mcp-bashd")
			f, err := elf.Open(exe)
			if err != nil {
				t.Fatal(err)
			}
			if f.Machine != a.machine {
				t.Errorf("%s binary is for %v, want %v", goarch, f.Machine, a.machine)
			}
			f.Close()
			if why, err := shDynamic(exe); err != nil || len(why) > 0 {
				t.Errorf("%s binary is not static: %v %v", goarch, why, err)
			}
			if goarch == runtime.GOARCH {
				rlRunUnpacked(t, root)
			}
		})
	}
}

// rlDarwin maps the released darwin GOARCH values to their Mach-O CPU and
// Homebrew's name for the architecture.
var rlDarwin = map[string]struct {
	cpu  macho.Cpu
	brew string
}{
	"arm64": {macho.CpuArm64, "arm"},
	"amd64": {macho.CpuAmd64, "intel"},
}

// rlCheckDarwin checks a release's darwin archive for goarch — the payload
// of the Linux archives, its binary a Mach-O for that CPU — and the
// release's Homebrew formula: for that architecture it fetches this
// archive, by the release's URL and with its digest, and installs the
// binary, the shim and the README it holds.
func rlCheckDarwin(t *testing.T, out, goarch string) {
	base := "mcp-bashd_" + rlVersion + "_darwin_" + goarch
	files, modes := rlReadTarball(t, filepath.Join(out, base+".tar.gz"), base+"/")
	bin := rlCheckPayload(t, base+".tar.gz", files, modes, true)
	f, err := macho.NewFile(bytes.NewReader(bin))
	if err != nil {
		t.Fatalf("%s: the binary is not Mach-O: %v", base, err)
	}
	if f.Cpu != rlDarwin[goarch].cpu || f.Type != macho.TypeExec {
		t.Errorf("%s: binary for %v (type %v), want an executable for %v", base, f.Cpu, f.Type, rlDarwin[goarch].cpu)
	}
	r := brewLoad(t, filepath.Join(out, "mcp-bashd.rb"), rlDarwin[goarch].brew)
	b, err := os.ReadFile(filepath.Join(out, base+".tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	wantURL := "https://github.com/mcp-bashd/mcp-bashd/releases/download/v" + rlVersion + "/" + base + ".tar.gz"
	if r.Version != rlVersion || !slices.Equal(r.URLs, []string{wantURL}) || !slices.Equal(r.SHA256, []string{hex.EncodeToString(sum[:])}) {
		t.Errorf("formula for %s: version %q, urls %q, sha256 %q; want %q, %q, %x", goarch, r.Version, r.URLs, r.SHA256, rlVersion, wantURL, sum)
	}
	wantInstalls := [][2]string{{"bin", "mcp-bashd"}, {"pkgshare", "mcpserver_core.sh"}, {"doc", "README.md"}}
	if !slices.Equal(r.Installs, wantInstalls) || !r.Test {
		t.Errorf("formula installs %q (test block %v), want %q", r.Installs, r.Test, wantInstalls)
	}
	for _, in := range r.Installs {
		if _, ok := files[in[1]]; !ok {
			t.Errorf("formula installs %s, which %s lacks", in[1], base)
		}
	}
}

// rlCheckSums checks SHA256SUMS names every other file with its digest.
func rlCheckSums(t *testing.T, out string, files []string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]string{}
	for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		sum, name, ok := strings.Cut(line, "  ")
		if !ok {
			t.Fatalf("SHA256SUMS: bad line %q", line)
		}
		listed[name] = sum
	}
	for _, f := range files {
		if f == "SHA256SUMS" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(out, f))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		if listed[f] != hex.EncodeToString(sum[:]) {
			t.Errorf("SHA256SUMS says %q for %s, its digest is %x", listed[f], f, sum)
		}
		delete(listed, f)
	}
	if len(listed) > 0 {
		t.Errorf("SHA256SUMS lists files the release did not write: %v", listed)
	}
}

// rlCheckPayload checks files (path -> content) and modes hold exactly the
// payload, with its modes, the shim and README equal to the repository's;
// flat: the archive's layout (one directory of base names). It returns the
// binary.
func rlCheckPayload(t *testing.T, what string, files map[string][]byte, modes map[string]fs.FileMode, flat bool) []byte {
	t.Helper()
	var got, want []string
	for p := range files {
		got = append(got, p)
	}
	for p := range rlPayload {
		if flat {
			p = filepath.Base(p)
		}
		want = append(want, p)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("%s holds %v, want %v", what, got, want)
	}
	var bin []byte
	for p, e := range rlPayload {
		key := p
		if flat {
			key = filepath.Base(p)
		}
		if modes[key] != e.mode {
			t.Errorf("%s: %s has mode %v, want %v", what, p, modes[key], e.mode)
		}
		if e.repo == "" {
			bin = files[key]
			continue
		}
		repo, err := os.ReadFile(harness.RepoPath(e.repo))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(files[key], repo) {
			t.Errorf("%s: %s is not the repository's %s", what, p, e.repo)
		}
	}
	return bin
}

// rlReadTarball reads a .tar.gz whose every entry is under prefix.
func rlReadTarball(t *testing.T, path, prefix string) (map[string][]byte, map[string]fs.FileMode) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	files, modes := map[string][]byte{}, map[string]fs.FileMode{}
	if err := rlReadTar(tar.NewReader(z), func(h *tar.Header, data []byte) {
		name, ok := strings.CutPrefix(h.Name, prefix)
		if !ok {
			t.Errorf("%s: entry %s outside %s", filepath.Base(path), h.Name, prefix)
		}
		files[name], modes[name] = data, fs.FileMode(h.Mode).Perm()
	}); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return files, modes
}

// rlReadTar calls fn for every regular file; directories are skipped.
func rlReadTar(tr *tar.Reader, fn func(*tar.Header, []byte)) error {
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		switch h.Typeflag {
		case tar.TypeDir:
			continue
		case tar.TypeReg:
		default:
			return fmt.Errorf("entry %s of type %c", h.Name, h.Typeflag)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return err
		}
		fn(h, data)
	}
}

// rlReadTree reads the regular files under root (an unpacked .deb).
func rlReadTree(t *testing.T, root string) (map[string][]byte, map[string]fs.FileMode) {
	t.Helper()
	files, modes := map[string][]byte{}, map[string]fs.FileMode{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			return fmt.Errorf("%s is a %v", p, info.Mode().Type())
		}
		rel, _ := filepath.Rel(root, p)
		data, err := os.ReadFile(p)
		files[rel], modes[rel] = data, info.Mode().Perm()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files, modes
}

// rlReadApk reads an .apk: gzip members, each one tar segment — the
// signature (absent: the release is unsigned), the control segment
// (.PKGINFO), then the data. It returns .PKGINFO's lines and the data's
// files.
func rlReadApk(t *testing.T, path string) (info []string, files map[string][]byte, modes map[string]fs.FileMode) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	br := bufio.NewReader(f)
	z, err := gzip.NewReader(br)
	if err != nil {
		t.Fatal(err)
	}
	files, modes = map[string][]byte{}, map[string]fs.FileMode{}
	var segments int
	for {
		z.Multistream(false)
		segments++
		err := rlReadTar(tar.NewReader(z), func(h *tar.Header, data []byte) {
			switch {
			case segments == 1 && h.Name == ".PKGINFO":
				info = strings.Split(strings.TrimSpace(string(data)), "\n")
			case segments == 1:
				t.Errorf("%s: control segment holds %s", filepath.Base(path), h.Name)
			default:
				files[h.Name], modes[h.Name] = data, fs.FileMode(h.Mode).Perm()
			}
		})
		if err != nil {
			t.Fatalf("%s segment %d: %v", path, segments, err)
		}
		// The rest of the member (tar's end blocks and padding), so the
		// next member starts where br stands.
		if _, err := io.Copy(io.Discard, z); err != nil {
			t.Fatalf("%s segment %d: %v", path, segments, err)
		}
		if err := z.Reset(br); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	if segments != 2 || info == nil {
		t.Errorf("%s: %d segments, .PKGINFO %v; want control and data", filepath.Base(path), segments, info)
	}
	return info, files, modes
}

// rlRunUnpacked runs the unpacked package as an installed one: `version`
// prints the stamped version, and the greeter (its server.sh beside the
// packaged shim) answers through the unpacked binary, found on PATH.
func rlRunUnpacked(t *testing.T, root string) {
	t.Helper()
	exe := filepath.Join(root, "usr/bin/mcp-bashd")
	if b, err := exec.Command(exe, "version").CombinedOutput(); err != nil || string(b) != "mcp-bashd "+rlVersion+"\n" {
		t.Errorf("mcp-bashd version: %q %v, want %q", b, err, "mcp-bashd "+rlVersion+"\n")
	}
	dir := t.TempDir()
	for _, f := range []string{"server.sh", "tools.json", "config.json"} {
		b, err := os.ReadFile(harness.RepoPath("examples/greeter/" + f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(root, "usr/share/mcp-bashd/mcpserver_core.sh"), filepath.Join(dir, "mcpserver_core.sh")); err != nil {
		t.Fatal(err)
	}
	mark := shMark(t)
	env := []string{"PATH=" + filepath.Join(root, "usr/bin") + string(os.PathListSeparator) + os.Getenv("PATH"),
		"TMPDIR=" + t.TempDir(), "MCP_LOG_FILE=/dev/null", harness.MarkKey + "=" + mark}
	s := harness.Start(t, harness.Options{Exe: filepath.Join(dir, "server.sh"), Args: []string{}, Env: env})
	if r := harness.Parse(t, s.RoundTrip(harness.InitLine)); r.Result == nil {
		t.Fatal("initialize failed")
	}
	// The daemon runs beside the script's shell, as its child.
	if exeLink, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", d2DaemonOf(t, s.Cmd.Process.Pid))); err != nil || exeLink != exe {
		t.Errorf("the greeter runs %q (%v), want the unpacked %s", exeLink, err, exe)
	}
	if got := shCallText(t, s, 2, "greet", `{"name":"Ada"}`, false); got != "Hello, Ada" {
		t.Errorf("greet: %q", got)
	}
	if ee := s.CloseAndWait(); ee != nil {
		t.Fatalf("exit: %v\n%s", ee, s.Stderr.String())
	}
	harness.WaitNoneLeft(t, mark, -1, "no process left with "+mark)
}
