package supervisor

import (
	"strconv"
	"strings"
)

// What the daemon itself reads off a snapshot (Snapshot.Vars and Dir): the
// MCP_* variables the server script's shell held when run_mcp_server ran —
// MCP_TOOLS_LIST_FILE, MCP_CONFIG_FILE, MCP_LOG_FILE, … whether the script
// exported them, only set them, or inherited them — and the directory it
// was in. The bash SDK opened those files from that shell, so a relative
// value means a file in that directory. They are read from the lines the
// shim wrote, before trimming drops the inherited ones.

// varPrefix selects the variables kept in Snapshot.Vars.
const varPrefix = "MCP_"

// cdLine frames the snapshot's last line, `builtin cd -- DIR 2>/dev/null`
// (DIR as printf %q writes it).
const (
	cdPrefix = "builtin cd -- "
	cdSuffix = " 2>/dev/null"
)

// noteVar records a one-line `declare -FLAGS NAME=VALUE` of an MCP_*
// scalar. Arrays, and values bash printed over several lines, are not
// names of files and are skipped.
func (p *snapshotPass) noteVar(line string) {
	rest, ok := strings.CutPrefix(line, "declare -")
	if !ok {
		return
	}
	flags, rest, ok := strings.Cut(rest, " ")
	if !ok || strings.ContainsAny(flags, "aAn") || !strings.HasPrefix(rest, varPrefix) {
		return
	}
	name, val, ok := strings.Cut(rest, "=")
	if !ok {
		return
	}
	if v, ok := unquoteWord(val); ok {
		if p.vars == nil {
			p.vars = map[string]string{}
		}
		p.vars[name] = v
	}
}

// noteDir records the directory of the cd line.
func (p *snapshotPass) noteDir(line string) {
	word, ok := strings.CutPrefix(line, cdPrefix)
	if !ok {
		return
	}
	if word, ok = strings.CutSuffix(word, cdSuffix); !ok {
		return
	}
	if dir, ok := unquoteWord(word); ok && strings.HasPrefix(dir, "/") {
		p.dir = dir
	}
}

// unquoteWord decodes one shell word as `declare -p` and printf %q write
// it: plain characters, backslash escapes, '…', "…" and $'…', in any
// sequence. false for anything else (an expansion, an unfinished quote):
// such a value is not recorded rather than misread.
func unquoteWord(w string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(w); {
		c := w[i]
		switch {
		case c == '\\':
			if i+1 >= len(w) {
				return "", false
			}
			b.WriteByte(w[i+1])
			i += 2
		case c == '\'':
			end := strings.IndexByte(w[i+1:], '\'')
			if end < 0 {
				return "", false
			}
			b.WriteString(w[i+1 : i+1+end])
			i += end + 2
		case c == '"':
			n, ok := doubleQuoted(w[i+1:], &b)
			if !ok {
				return "", false
			}
			i += n + 2
		case c == '$' && i+1 < len(w) && w[i+1] == '\'':
			n, ok := ansiQuoted(w[i+2:], &b)
			if !ok {
				return "", false
			}
			i += n + 3
		case strings.IndexByte("$`\"' \t\n;&|<>(){}*?[]~#", c) >= 0:
			return "", false
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), true
}

// doubleQuoted decodes the body of "…" up to its closing quote (backslash
// escapes only before " \ $ ` and newline) and returns the body's length.
func doubleQuoted(s string, b *strings.Builder) (int, bool) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			return i, true
		case '\\':
			if i+1 < len(s) && strings.IndexByte("\"\\$`\n", s[i+1]) >= 0 {
				i++
				if s[i] != '\n' {
					b.WriteByte(s[i])
				}
				continue
			}
			b.WriteByte(c)
		case '$', '`':
			return 0, false // an expansion: not a plain value
		default:
			b.WriteByte(c)
		}
	}
	return 0, false
}

// ansiQuoted decodes the body of $'…' up to its closing quote (bash's
// ANSI-C escapes) and returns the body's length.
func ansiQuoted(s string, b *strings.Builder) (int, bool) {
	simple := map[byte]byte{'a': '\a', 'b': '\b', 'e': 0x1b, 'E': 0x1b, 'f': '\f', 'n': '\n', 'r': '\r',
		't': '\t', 'v': '\v', '\\': '\\', '\'': '\'', '"': '"', '?': '?'}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\'' {
			return i, true
		}
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		if i+1 >= len(s) {
			return 0, false
		}
		i++
		e := s[i]
		if r, ok := simple[e]; ok {
			b.WriteByte(r)
			continue
		}
		digits, base, max := "", 0, 0
		switch {
		case e >= '0' && e <= '7':
			digits, base, max = "01234567", 8, 3
			i-- // the escape's first digit is part of the number
		case e == 'x':
			digits, base, max = "0123456789abcdefABCDEF", 16, 2
		case e == 'u':
			digits, base, max = "0123456789abcdefABCDEF", 16, 4
		case e == 'U':
			digits, base, max = "0123456789abcdefABCDEF", 16, 8
		default:
			b.WriteByte('\\')
			b.WriteByte(e)
			continue
		}
		j := i + 1
		for j < len(s) && j-(i+1) < max && strings.IndexByte(digits, s[j]) >= 0 {
			j++
		}
		if j == i+1 {
			return 0, false
		}
		n, err := strconv.ParseUint(s[i+1:j], base, 32)
		if err != nil {
			return 0, false
		}
		if e == 'u' || e == 'U' {
			b.WriteRune(rune(n))
		} else {
			b.WriteByte(byte(n))
		}
		i = j - 1
	}
	return 0, false
}
