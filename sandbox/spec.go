package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Spec is what a tool (or the daemon, as the default of every tool)
// declares. A zero field is "not limited"; Read and Write restrict only
// when their Restrict flag is set, so `"write": []` (nothing but the
// call's own directory) differs from no "write" key at all.
//
// In tools.json it is three keys of the tool's x-mcp-bashd entry:
//
//	"limits":     {"memory": "256MiB", "cpu": "10s", "processes": 64,
//	               "fileSize": "100MiB", "openFiles": 256}
//	"filesystem": {"read": ["/usr", "/etc"], "write": ["$MCP_CALL_TMPDIR"]}
//	"network":    false
type Spec struct {
	Memory    int64         // bytes, for the whole call (cgroup) or per process (RLIMIT_DATA)
	CPU       time.Duration // CPU time per process (RLIMIT_CPU), whole seconds
	Processes int64         // processes and threads of the call at once (pids cgroup)
	FileSize  int64         // largest file a process may write (RLIMIT_FSIZE)
	OpenFiles int64         // descriptors per process (RLIMIT_NOFILE)

	RestrictRead  bool     // Read applies: nothing else may be read or executed
	Read          []string // absolute, or under $MCP_CALL_TMPDIR
	RestrictWrite bool     // Write applies: nothing else may be written
	Write         []string

	NoNetwork bool // a new network namespace: no interface but a down loopback

	// set records which keys were given, so a tool's entry overrides the
	// daemon's default key by key (Merge).
	set map[string]bool
}

// The keys of Spec, as written in tools.json and named in messages.
const (
	KeyMemory    = "memory"
	KeyCPU       = "cpu"
	KeyProcesses = "processes"
	KeyFileSize  = "fileSize"
	KeyOpenFiles = "openFiles"
	KeyRead      = "read"
	KeyWrite     = "write"
	KeyNetwork   = "network"
)

// CallTmpVar is the one variable a filesystem path may start with: the
// call's own scratch directory, expanded per call.
const CallTmpVar = "$MCP_CALL_TMPDIR"

// Empty reports whether s asks for nothing: such a call runs exactly as
// it would without this package (no helper, no cgroup).
func (s *Spec) Empty() bool { return s == nil || len(s.set) == 0 }

func (s *Spec) mark(key string) {
	if s.set == nil {
		s.set = map[string]bool{}
	}
	s.set[key] = true
}

// Has reports whether key was given.
func (s *Spec) Has(key string) bool { return s != nil && s.set[key] }

// Merge is def overridden by s key by key: the daemon's defaults with a
// tool's own entry on top.
func Merge(def, s *Spec) *Spec {
	if def.Empty() {
		return s
	}
	if s.Empty() {
		return def
	}
	out := *def
	out.set = map[string]bool{}
	for k := range def.set {
		out.set[k] = true
	}
	for k := range s.set {
		out.set[k] = true
		switch k {
		case KeyMemory:
			out.Memory = s.Memory
		case KeyCPU:
			out.CPU = s.CPU
		case KeyProcesses:
			out.Processes = s.Processes
		case KeyFileSize:
			out.FileSize = s.FileSize
		case KeyOpenFiles:
			out.OpenFiles = s.OpenFiles
		case KeyRead:
			out.RestrictRead, out.Read = s.RestrictRead, s.Read
		case KeyWrite:
			out.RestrictWrite, out.Write = s.RestrictWrite, s.Write
		case KeyNetwork:
			out.NoNetwork = s.NoNetwork
		}
	}
	return &out
}

// ParseSettings reads the sandbox keys of an x-mcp-bashd entry (limits,
// filesystem, network; its other keys are not this package's). It returns
// nil when the entry declares none of them. An unknown key inside limits
// or filesystem, a bad size, duration, count or path is an error naming
// the key: a limit the author believes in must never be silently dropped.
func ParseSettings(raw json.RawMessage) (*Spec, error) {
	var p struct {
		Limits     json.RawMessage `json:"limits"`
		Filesystem json.RawMessage `json:"filesystem"`
		Network    json.RawMessage `json:"network"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, nil // not an object: the entry's other parsers say so
	}
	s := &Spec{}
	if p.Limits != nil {
		if err := s.parseLimits(p.Limits); err != nil {
			return nil, fmt.Errorf("limits: %w", err)
		}
		s.mark("limits")
	}
	if p.Filesystem != nil {
		if err := s.parseFilesystem(p.Filesystem); err != nil {
			return nil, fmt.Errorf("filesystem: %w", err)
		}
		s.mark("filesystem")
	}
	if p.Network != nil {
		var on bool
		if err := json.Unmarshal(p.Network, &on); err != nil {
			return nil, fmt.Errorf("network: %s is not true or false", p.Network)
		}
		s.NoNetwork = !on
		s.mark(KeyNetwork)
	}
	if s.Empty() {
		return nil, nil
	}
	return s, nil
}

// members is a JSON object's members in order, each key once.
func objectMembers(raw json.RawMessage) ([]string, map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if bytes.HasPrefix(bytes.TrimSpace(raw), []byte("null")) || json.Unmarshal(raw, &m) != nil || m == nil {
		return nil, nil, fmt.Errorf("%s is not an object", raw)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys, m, nil
}

func (s *Spec) parseLimits(raw json.RawMessage) error {
	keys, m, err := objectMembers(raw)
	if err != nil {
		return err
	}
	for _, k := range keys {
		v := m[k]
		var err error
		switch k {
		case KeyMemory:
			s.Memory, err = parseSize(v)
		case KeyFileSize:
			s.FileSize, err = parseSize(v)
		case KeyCPU:
			s.CPU, err = parseCPU(v)
		case KeyProcesses:
			s.Processes, err = parseCount(v)
		case KeyOpenFiles:
			s.OpenFiles, err = parseCount(v)
		default:
			return fmt.Errorf("unknown key %q (known: %s, %s, %s, %s, %s)", k, KeyMemory, KeyCPU, KeyProcesses, KeyFileSize, KeyOpenFiles)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		s.mark(k)
	}
	return nil
}

func (s *Spec) parseFilesystem(raw json.RawMessage) error {
	keys, m, err := objectMembers(raw)
	if err != nil {
		return err
	}
	for _, k := range keys {
		var list *[]string
		switch k {
		case KeyRead:
			s.RestrictRead, list = true, &s.Read
		case KeyWrite:
			s.RestrictWrite, list = true, &s.Write
		default:
			return fmt.Errorf("unknown key %q (known: %s, %s)", k, KeyRead, KeyWrite)
		}
		paths, err := parsePaths(m[k])
		if err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		*list = paths
		s.mark(k)
	}
	return nil
}

func parsePaths(raw json.RawMessage) ([]string, error) {
	var paths []string
	if err := json.Unmarshal(raw, &paths); err != nil || paths == nil && !bytes.Equal(bytes.TrimSpace(raw), []byte("[]")) {
		return nil, fmt.Errorf("%s is not an array of paths", raw)
	}
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		if err := checkPath(p); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// checkPath accepts an absolute path, or $MCP_CALL_TMPDIR and paths under
// it; no other variable is expanded (a path is never given to a shell).
func checkPath(p string) error {
	if rest, ok := strings.CutPrefix(p, CallTmpVar); ok && (rest == "" || rest[0] == '/') {
		return nil
	}
	if strings.Contains(p, "$") {
		return fmt.Errorf("%q: only %s is expanded in a path", p, CallTmpVar)
	}
	if !filepath.IsAbs(p) {
		return fmt.Errorf("%q is not an absolute path", p)
	}
	return nil
}

// ExpandPath is p with $MCP_CALL_TMPDIR replaced by tmp.
func ExpandPath(p, tmp string) string {
	if rest, ok := strings.CutPrefix(p, CallTmpVar); ok {
		return filepath.Join(tmp, rest)
	}
	return filepath.Clean(p)
}

// The size units: IEC (KiB…TiB) and K, M, G, T are powers of 1024, as for
// ulimit and systemd; kB, KB, MB, GB, TB are powers of 1000. A bare number
// is bytes.
var sizeUnits = map[string]float64{
	"": 1, "B": 1,
	"K": 1 << 10, "KiB": 1 << 10, "kB": 1e3, "KB": 1e3,
	"M": 1 << 20, "MiB": 1 << 20, "MB": 1e6,
	"G": 1 << 30, "GiB": 1 << 30, "GB": 1e9,
	"T": 1 << 40, "TiB": 1 << 40, "TB": 1e12,
}

// parseSize reads a size: a number of bytes or a string like "256MiB".
func parseSize(raw json.RawMessage) (int64, error) {
	var n float64
	if json.Unmarshal(raw, &n) == nil {
		return positive(n, string(raw))
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return 0, fmt.Errorf("%s is not a size (bytes, or a string like \"256MiB\")", raw)
	}
	return ParseSize(s)
}

// ParseSize reads a size written as a string ("256MiB", "1G", "4096").
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	num, unit := t, ""
	if i >= 0 {
		num, unit = t[:i], strings.TrimSpace(t[i:])
	}
	mul, ok := sizeUnits[unit]
	n, err := strconv.ParseFloat(num, 64)
	if !ok || err != nil {
		return 0, fmt.Errorf("%q is not a size (a number of bytes, or with a unit: KiB, MiB, GiB, TiB or K, M, G, T (1024); kB, MB, GB, TB (1000))", s)
	}
	return positive(n*mul, strconv.Quote(s))
}

func positive(n float64, what string) (int64, error) {
	if n < 1 || n > math.MaxInt64/2 || math.IsNaN(n) {
		return 0, fmt.Errorf("%s is out of range (at least 1)", what)
	}
	return int64(n), nil
}

// parseCPU reads CPU time: seconds as a number or a Go duration ("10s",
// "1m30s"), rounded up to whole seconds (RLIMIT_CPU counts seconds).
func parseCPU(raw json.RawMessage) (time.Duration, error) {
	var secs float64
	if json.Unmarshal(raw, &secs) == nil {
		if secs <= 0 || secs > 1e9 {
			return 0, fmt.Errorf("%s is out of range (more than 0 seconds)", raw)
		}
		return roundSeconds(time.Duration(secs * float64(time.Second))), nil
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return 0, fmt.Errorf("%s is not a duration (seconds, or a string like \"10s\")", raw)
	}
	return ParseCPU(s)
}

// ParseCPU reads CPU time written as a Go duration ("10s").
func ParseCPU(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q is not a positive duration (like \"10s\" or \"1m30s\")", s)
	}
	return roundSeconds(d), nil
}

func roundSeconds(d time.Duration) time.Duration {
	return (d + time.Second - 1) / time.Second * time.Second
}

// parseCount reads a positive whole number.
func parseCount(raw json.RawMessage) (int64, error) {
	var n float64
	if json.Unmarshal(raw, &n) != nil || n != math.Trunc(n) {
		return 0, fmt.Errorf("%s is not a whole number", raw)
	}
	return positive(n, string(raw))
}

// FromFlags builds the daemon's default Spec; nil when no flag was given.
func FromFlags(memory, cpu, fileSize string, processes, openFiles int64, read, write *string, noNetwork bool) (*Spec, error) {
	s := &Spec{}
	var errs []error
	if memory != "" {
		n, err := ParseSize(memory)
		errs = append(errs, flagErr("limit-memory", err))
		s.Memory = n
		s.mark(KeyMemory)
	}
	if cpu != "" {
		d, err := ParseCPU(cpu)
		errs = append(errs, flagErr("limit-cpu", err))
		s.CPU = d
		s.mark(KeyCPU)
	}
	if fileSize != "" {
		n, err := ParseSize(fileSize)
		errs = append(errs, flagErr("limit-file-size", err))
		s.FileSize = n
		s.mark(KeyFileSize)
	}
	for _, c := range []struct {
		key, flag string
		v         int64
		dst       *int64
	}{{KeyProcesses, "limit-processes", processes, &s.Processes}, {KeyOpenFiles, "limit-open-files", openFiles, &s.OpenFiles}} {
		if c.v < 0 {
			errs = append(errs, fmt.Errorf("--%s: %d is out of range (at least 1)", c.flag, c.v))
		} else if c.v > 0 {
			*c.dst = c.v
			s.mark(c.key)
		}
	}
	for _, c := range []struct {
		key, flag string
		v         *string
		restrict  *bool
		dst       *[]string
	}{{KeyRead, "fs-read", read, &s.RestrictRead, &s.Read}, {KeyWrite, "fs-write", write, &s.RestrictWrite, &s.Write}} {
		if c.v == nil {
			continue
		}
		*c.restrict, *c.dst = true, []string{}
		for _, p := range strings.Split(*c.v, ",") {
			if p = strings.TrimSpace(p); p == "" {
				continue
			}
			if err := checkPath(p); err != nil {
				errs = append(errs, fmt.Errorf("--%s: %w", c.flag, err))
			}
			*c.dst = append(*c.dst, p)
		}
		s.mark(c.key)
	}
	if noNetwork {
		s.NoNetwork = true
		s.mark(KeyNetwork)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if s.Empty() {
		return nil, nil
	}
	return s, nil
}

func flagErr(flag string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("--%s: %w", flag, err)
}

// FormatSize writes a size for people: "256 MiB", "1.5 GiB", "100 bytes".
func FormatSize(n int64) string {
	if n < 1024 {
		return strconv.FormatInt(n, 10) + " bytes"
	}
	v, u := float64(n)/1024, "KiB"
	for _, x := range []string{"MiB", "GiB", "TiB"} {
		if v < 1024 {
			break
		}
		v, u = v/1024, x
	}
	return strings.TrimSuffix(strings.TrimRight(strconv.FormatFloat(v, 'f', 2, 64), "0"), ".") + " " + u
}
