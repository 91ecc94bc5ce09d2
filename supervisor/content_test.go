package supervisor

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A content record can name only a copy in the call's root, and only a
// regular file is read: a record pointing at the daemon's stdin, a FIFO, a
// device or a file elsewhere is refused at once (a blocking open would
// hang this test), and the copies share the budget with the records.
func TestReadContentReadsOnlyCopies(t *testing.T) {
	dir := t.TempDir()
	root := callRoot(dir)
	write := func(name, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("out", "secret")
	write("content.0", "png\x00bytes")
	write("content.5", "cat failed half way")
	write("content.6", strings.Repeat("z", 200))
	if err := os.Symlink("/dev/stdin", filepath.Join(dir, "content.1")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "content.2"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "content.3"), 0o700); err != nil {
		t.Fatal(err)
	}
	records := []string{
		"image\timage/png\t/dev/stdin\t0\tx",
		"image\timage/png\t../out\t0\tx",
		"image\timage/png\tout\t0\tx",
		"image\timage/png\tcontent.\t0\tx",
		"image\timage/png\tcontent.1\t0\t/dev/stdin",
		"image\timage/png\tcontent.2\t0\tfifo",
		"image\timage/png\tcontent.3\t0\tdir",
		"audio\taudio/wav\tcontent.4\t0\tmissing",
		"image\timage/png\tcontent.5\t1\tunreadable",
		"text\tline\\none",
		"image\timage/png\tcontent.0\t0\tpic\\tname.png",
		"image\timage/png\tcontent.6\t0\ttoo big",
		"text\tafter the budget",
	}
	write("content", strings.Join(records, "\n")+"\n")
	recordBytes := int64(len(strings.Join(records, "\n")) + 1)

	items, _, _, problems := readContent(root, recordBytes+int64(len("png\x00bytes"))+100)
	if len(items) != 2 || items[0].Text != "line\none" || string(items[1].Data) != "png\x00bytes" || items[1].MIME != "image/png" {
		t.Errorf("items %+v, want the text and the one copy", items)
	}
	want := []string{"/dev/stdin", "../out", `"out"`, `"content."`, "content.1", "content.2", "content.3", "missing", "unreadable", "content larger than the output cap"}
	if len(problems) != len(want) {
		t.Fatalf("problems:\n%s", strings.Join(problems, "\n"))
	}
	for i, w := range want {
		if !strings.Contains(problems[i], w) {
			t.Errorf("problem %d: %q does not mention %q", i, problems[i], w)
		}
	}

	// Records past the budget are not read, and the cut is said first.
	items, _, _, problems = readContent(root, recordBytes-5)
	if len(problems) == 0 || problems[0] != "content larger than the output cap" {
		t.Errorf("budget inside the records: problems %q", problems)
	}
	for _, it := range items {
		if it.Text == "after the budget" {
			t.Errorf("budget inside the records: the record past it was read")
		}
	}
	// No cap.
	items, _, _, _ = readContent(root, -1)
	if len(items) != 4 {
		t.Errorf("no cap: %d items, want 4", len(items))
	}
}

// A swapped content file (a symlink to the daemon's stdin, a FIFO) is not
// read.
func TestReadContentSwappedFile(t *testing.T) {
	for name, make := range map[string]func(string) error{
		"symlink": func(p string) error { return os.Symlink("/dev/stdin", p) },
		"fifo":    func(p string) error { return syscall.Mkfifo(p, 0o600) },
	} {
		root := callRoot(t.TempDir())
		if err := make(root.Content()); err != nil {
			t.Fatal(err)
		}
		items, _, _, problems := readContent(root, -1)
		if len(items) != 0 || len(problems) != 1 {
			t.Errorf("%s: items %+v, problems %q", name, items, problems)
		}
	}
}
