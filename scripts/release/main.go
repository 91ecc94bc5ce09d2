// Command release builds a release of mcp-bashd into one directory, offline
// (the Go toolchain and the modules go.mod pins are all it needs):
//
//	go run ./scripts/release -version 1.2.0 [-out dist]
//
// For linux/amd64 and linux/arm64 it builds the static binary
// (CGO_ENABLED=0, -trimpath, the version stamped into main.version) and
// writes
//
//	mcp-bashd_VERSION_linux_ARCH.tar.gz   binary, shim, README.md, LICENSE
//	mcp-bashd_VERSION_ARCH.deb            Debian, Ubuntu (dpkg -i)
//	mcp-bashd_VERSION_APKARCH.apk         Alpine (apk add --allow-untrusted)
//
// and for darwin/arm64 and darwin/amd64 (cross-compiled the same way: no
// cgo, so no Mac is needed to build it)
//
//	mcp-bashd_VERSION_darwin_ARCH.tar.gz  binary, shim, README.md, LICENSE
//	mcp-bashd.rb                          the Homebrew formula of these two
//	                                      archives (URLs and digests)
//	SHA256SUMS                            for all of them (sha256sum -c)
//
// The packages are made by nfpm, used as a library: they install
// /usr/bin/mcp-bashd, the shim as /usr/share/mcp-bashd/mcpserver_core.sh, the
// README and the LICENSE (MIT; the .deb also its copyright file, the .apk
// its license field), and depend on bash. Every file's time is the commit's
// (SOURCE_DATE_EPOCH overrides it), so two runs on one commit with one
// toolchain give the same bytes.
//
// Without -version, HEAD's tag vX.Y.Z names the version.
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/goreleaser/nfpm/v2"
	"github.com/goreleaser/nfpm/v2/apk"
	"github.com/goreleaser/nfpm/v2/deb"
	"github.com/goreleaser/nfpm/v2/files"
)

// arches are the GOARCH values released.
var arches = []string{"amd64", "arm64"}

// versionRE is what every format agrees on: semver that dpkg orders right
// (1.2.0-rc1 becomes 1.2.0~rc1) and apk accepts (1.2.0_rc1).
var versionRE = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+(-(alpha|beta|pre|rc)[0-9]*)?$`)

const (
	name     = "mcp-bashd"
	homepage = "https://github.com/mcp-bashd/mcp-bashd"
	// The Maintainer field is a name and a mail address (Debian policy
	// 5.6.2), not a web page; -maintainer sets the releaser's own.
	defaultMaintainer = "mcp-bashd developers <mcp-bashd@users.noreply.github.com>"
	license           = "MIT"
	summary           = "Serve MCP tools written as bash functions"
	longDesc          = "mcp-bashd serves Model Context Protocol tools written as bash\n" +
		"functions (tool_NAME beside a tools.json) over stdio and Streamable\n" +
		"HTTP: one bash process group per call, cancellation, reaping, a\n" +
		"lifeline that kills calls when the daemon dies. Includes the drop-in\n" +
		"shim for bash-mcp-sdk servers (/usr/share/mcp-bashd/mcpserver_core.sh)."
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("release", flag.ContinueOnError)
	version := fs.String("version", "", "the version, X.Y.Z or X.Y.Z-rcN (default: HEAD's vX.Y.Z tag)")
	out := fs.String("out", "dist", "the directory the release is written to")
	maint := fs.String("maintainer", defaultMaintainer, "the packages' Maintainer, `NAME <ADDRESS>`")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if !maintainerRE.MatchString(*maint) {
		return fmt.Errorf("-maintainer %q: want NAME <ADDRESS>, a mail address", *maint)
	}
	maintainer = *maint
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	v, err := releaseVersion(root, *version)
	if err != nil {
		return err
	}
	mtime, err := sourceTime(root)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "mcp-bashd-release.")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)

	if err := debianCopyright(root, work); err != nil {
		return err
	}
	var made []string
	for _, arch := range arches {
		bin := filepath.Join(work, arch, name)
		if err := build(root, "linux", arch, v, bin); err != nil {
			return err
		}
		payload := payloadOf(root, bin)
		archive, err := writeArchive(*out, v, "linux", arch, payload, mtime)
		if err != nil {
			return err
		}
		made = append(made, archive)
		for _, format := range []string{"deb", "apk"} {
			pkg, err := writePackage(*out, format, v, arch, payload, mtime, work)
			if err != nil {
				return err
			}
			made = append(made, pkg)
		}
	}
	darwin, err := writeDarwin(root, work, *out, v, mtime)
	if err != nil {
		return err
	}
	made = append(made, darwin...)
	if err := writeSums(*out, made); err != nil {
		return err
	}
	for _, f := range append(made, "SHA256SUMS") {
		fmt.Println(filepath.Join(*out, f))
	}
	return nil
}

// moduleRoot is the directory of go.mod, so the command runs from anywhere
// in the tree.
func moduleRoot() (string, error) {
	b, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(b))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("not inside the mcp-bashd module")
	}
	return filepath.Dir(gomod), nil
}

// releaseVersion is -version, or HEAD's vX.Y.Z tag, without the v.
func releaseVersion(root, flagValue string) (string, error) {
	v := flagValue
	if v == "" {
		cmd := exec.Command("git", "describe", "--tags", "--exact-match", "--match", "v[0-9]*")
		cmd.Dir = root
		b, err := cmd.Output()
		if err != nil {
			return "", errors.New("HEAD has no vX.Y.Z tag: pass -version X.Y.Z")
		}
		v = strings.TrimSpace(string(b))
	}
	v = strings.TrimPrefix(v, "v")
	if !versionRE.MatchString(v) {
		return "", fmt.Errorf("version %q: want X.Y.Z or X.Y.Z-(alpha|beta|pre|rc)N", v)
	}
	return v, nil
}

// sourceTime is SOURCE_DATE_EPOCH, else HEAD's commit time, else now.
func sourceTime(root string) (time.Time, error) {
	s := os.Getenv("SOURCE_DATE_EPOCH")
	if s == "" {
		cmd := exec.Command("git", "log", "-1", "--format=%ct")
		cmd.Dir = root
		if b, err := cmd.Output(); err == nil {
			s = strings.TrimSpace(string(b))
		}
	}
	if s == "" {
		return time.Now().UTC().Truncate(time.Second), nil
	}
	sec, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("source time %q: %w", s, err)
	}
	return time.Unix(sec, 0).UTC(), nil
}

// payloadOf is what a release installs: the binary, the shim, the README.
func payloadOf(root, bin string) []entry {
	return []entry{
		{src: bin, dst: "/usr/bin/" + name, mode: 0o755},
		{src: filepath.Join(root, "scripts/mcpserver_core.sh"), dst: "/usr/share/mcp-bashd/mcpserver_core.sh", mode: 0o644},
		{src: filepath.Join(root, "README.md"), dst: "/usr/share/doc/mcp-bashd/README.md", mode: 0o644},
		{src: filepath.Join(root, "LICENSE"), dst: "/usr/share/doc/mcp-bashd/LICENSE", mode: 0o644},
	}
}

// build is the Dockerfiles' build line for goos/arch.
func build(root, goos, arch, version, bin string) error {
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false",
		"-ldflags", "-s -w -X main.version="+version, "-o", bin, "./cmd/mcp-bashd")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+arch)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build for %s/%s: %w", goos, arch, err)
	}
	return nil
}

// entry is one file of the release: where it comes from, where a package
// installs it, its mode.
type entry struct {
	src, dst string
	mode     os.FileMode
}

// writeArchive writes mcp-bashd_V_GOOS_ARCH.tar.gz: one directory of that
// name holding the binary, the shim and the README.
func writeArchive(out, version, goos, arch string, payload []entry, mtime time.Time) (string, error) {
	base := fmt.Sprintf("%s_%s_%s_%s", name, version, goos, arch)
	var buf bytes.Buffer
	gz, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	gz.ModTime = mtime
	tw := tar.NewWriter(gz)
	for _, e := range payload {
		data, err := os.ReadFile(e.src)
		if err != nil {
			return "", err
		}
		hdr := &tar.Header{
			Name: base + "/" + filepath.Base(e.dst), Mode: int64(e.mode), Size: int64(len(data)),
			ModTime: mtime, Typeflag: tar.TypeReg, Uname: "root", Gname: "root", Format: tar.FormatPAX,
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return "", err
		}
		if _, err := tw.Write(data); err != nil {
			return "", err
		}
	}
	if err := tw.Close(); err != nil {
		return "", err
	}
	if err := gz.Close(); err != nil {
		return "", err
	}
	file := base + ".tar.gz"
	return file, os.WriteFile(filepath.Join(out, file), buf.Bytes(), 0o644)
}

// writePackage writes the .deb or .apk for arch with nfpm.
func writePackage(out, format, version, arch string, payload []entry, mtime time.Time, work string) (string, error) {
	var packager nfpm.Packager
	switch format {
	case "deb":
		packager = deb.Default
	case "apk":
		packager = apk.Default
	}
	if format == "deb" {
		// Debian's place for the license: the machine-readable copyright file.
		payload = append(slices.Clone(payload), entry{src: filepath.Join(work, "copyright"), dst: "/usr/share/doc/mcp-bashd/copyright", mode: 0o644})
	}
	var contents files.Contents
	for _, e := range payload {
		contents = append(contents, &files.Content{
			Source: e.src, Destination: e.dst,
			FileInfo: &files.ContentFileInfo{Owner: "root", Group: "root", Mode: e.mode, MTime: mtime},
		})
	}
	info := nfpm.WithDefaults(&nfpm.Info{
		Name: name, Arch: arch, Platform: "linux", Version: version,
		Maintainer: maintainer, Homepage: homepage, Section: "net", Priority: "optional", License: license,
		Description: summary + "\n" + longDesc, MTime: mtime,
		Overridables: nfpm.Overridables{Depends: []string{"bash"}, Contents: contents},
	})
	if format == "apk" {
		// apk shows one line; the rest would end up in the package's
		// description field verbatim.
		info.Description = summary
	}
	if err := nfpm.PrepareForPackager(info, format); err != nil {
		return "", fmt.Errorf("%s for %s: %w", format, arch, err)
	}
	file := packager.ConventionalFileName(info)
	var buf bytes.Buffer
	if err := packager.Package(info, &buf); err != nil {
		return "", fmt.Errorf("%s for %s: %w", format, arch, err)
	}
	return file, os.WriteFile(filepath.Join(out, file), buf.Bytes(), 0o644)
}

// writeSums writes SHA256SUMS in sha256sum's format, sorted by name.
func writeSums(out string, made []string) error {
	sorted := append([]string(nil), made...)
	sort.Strings(sorted)
	var b strings.Builder
	for _, f := range sorted {
		fh, err := os.Open(filepath.Join(out, f))
		if err != nil {
			return err
		}
		h := sha256.New()
		_, err = io.Copy(h, fh)
		fh.Close()
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%x  %s\n", h.Sum(nil), f)
	}
	return os.WriteFile(filepath.Join(out, "SHA256SUMS"), []byte(b.String()), 0o644)
}

var maintainerRE = regexp.MustCompile(`^[^<>@]+ <[^<>@\s]+@[^<>@\s]+\.[^<>@\s]+>$`)

// maintainer is the packages' Maintainer (-maintainer).
var maintainer = defaultMaintainer

// debianCopyright writes the .deb's copyright file (DEP-5): the LICENSE's
// MIT text as Debian names it, Expat, into work.
func debianCopyright(root, work string) error {
	text, err := os.ReadFile(filepath.Join(root, "LICENSE"))
	if err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString("Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n")
	b.WriteString("Upstream-Name: " + name + "\nSource: " + homepage + "\n\nFiles: *\n")
	for _, line := range strings.Split(string(text), "\n") {
		if c, ok := strings.CutPrefix(line, "Copyright (c) "); ok {
			b.WriteString("Copyright: " + c + "\n")
			break
		}
	}
	b.WriteString("License: Expat\n")
	for _, line := range strings.Split(strings.TrimSpace(string(text)), "\n") {
		if line = strings.TrimRight(line, " "); line == "" {
			line = "."
		}
		b.WriteString(" " + line + "\n")
	}
	return os.WriteFile(filepath.Join(work, "copyright"), []byte(b.String()), 0o644)
}
