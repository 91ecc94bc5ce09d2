package supervisor

import "strings"

// Bash before 5.3 prints a read-write redirection of standard output
// without its number: `f() { echo x 1<>F; }; declare -f f` shows
// `echo x <> F`, and bash reads that back as standard input (print_cmd.c
// has left the number out when it was 1, the default of the output
// operators, since bash 2 at least; 5.3-rc1 made it 0, the default of <>). Every other form keeps what it
// means: fd 0 prints as `0<>`, others as `2<>`, `{fd}<>`. So in a snapshot
// from such a bash, a bare `<>` that bash printed can only have been `1<>`,
// and the pass puts the 1 back; a tool that wrote to a file through
// `1<>` writes there again instead of into its result.
//
// Only the text bash printed is changed: the code of the function bodies,
// outside quotes, here-document bodies, comments, arithmetic, ${…} and
// command and process substitutions. The text of the last is the script's
// as written in bash before 5.2 (a bare `<>` there is fd 0), and bash 5.2
// reprints it through the same printer every time it parses it, the
// running script's shell included, so a `1<>` inside $(…) is stdin there
// under the bash SDK too; the snapshot keeps what the shell had.
//
// Whether the snapshot's bash has the quirk, the shim asks it: the #rdwr
// line is how it printed a probe function `{ : 1<>/dev/null; }`, flattened
// to one line. No #rdwr line (a shim of another version): nothing changes.
//
// The pass reads function by function (a #def line where the lexer is
// back at the top level starts the next): a function the lexer does not
// end cleanly (an unterminated quote, a here-document without its end, a
// construct it misreads) is written as it was, and so are the functions
// after it.

// snapRdwr is the #rdwr line's prefix.
const snapRdwr = "#rdwr "

// rdwrQuirk reports whether a #rdwr line shows the bash printing `1<>` as a
// bare `<>` (bash 2 printed no blank after it; 3.0 to 5.2 print one).
func rdwrQuirk(probe string) bool { return strings.Contains(probe, ": <>") }

// rdwrFix is the pass's part for the function section: it buffers one
// function at a time, as read and as rewritten, and writes one of the two.
type rdwrFix struct {
	on          bool // the snapshot's bash has the quirk
	lx          rdwrLexer
	orig, fixed []byte
}

// add takes one line of the function section (text without its newline,
// raw with it).
func (f *rdwrFix) add(w *snapshotWriter, text string, raw []byte) {
	if !f.on {
		w.Write(raw)
		return
	}
	if strings.HasPrefix(text, snapDef) && f.lx.clean() {
		f.flush(w)
	}
	f.orig = append(f.orig, raw...)
	out := f.lx.line(text)
	f.fixed = append(append(f.fixed, out...), raw[len(text):]...)
}

// flush writes the buffered function: rewritten if the lexer read it to a
// clean end, as it was otherwise.
func (f *rdwrFix) flush(w *snapshotWriter) {
	if f.lx.clean() {
		w.Write(f.fixed)
	} else {
		w.Write(f.orig)
	}
	f.orig, f.fixed = f.orig[:0], f.fixed[:0]
	f.lx.reset()
}

// The contexts the lexer tells apart.
type frameKind uint8

const (
	frameCode   frameKind = iota // commands: a function body, ( ), $( ), <( ), >( )
	frameDouble                  // "…"
	frameSingle                  // '…'
	frameANSI                    // $'…'
	frameBack                    // `…`: kept as written, never changed
	frameParam                   // ${…}
	frameRaw                     // $(( )), (( )), extglob @( ): parentheses counted
)

// The place in a case command of a code frame.
type caseState uint8

const (
	caseWantIn  caseState = iota // after "case WORD"
	casePattern                  // before a pattern's ")"
	caseBody                     // a clause's commands, up to ;; or esac
)

type lexFrame struct {
	kind   frameKind
	fix    bool        // code: bash printed this text (the function's own code)
	closes bool        // code: its ")" ends it
	depth  int         // raw: open parentheses; param: open braces
	dq     bool        // param: inside double quotes (a ' is a character)
	cmd    bool        // code: the next word is in command position
	cases  []caseState // code: the case commands open in it
}

type heredoc struct {
	delim string
	strip bool // <<-: the end line may start with tabs
}

// rdwrLexer follows the quoting of the function section line by line, as
// far as finding the bare <> of bash's printed code needs.
type rdwrLexer struct {
	stack   []lexFrame
	pending []heredoc // bodies that start with the next line
	body    []heredoc // bodies being read, the current first
	cont    bool      // the last line ended in a backslash
	word    bool      // code: at a word's start (after a blank or an operator)
}

func (l *rdwrLexer) reset() {
	l.stack = append(l.stack[:0], lexFrame{kind: frameCode, fix: true, cmd: true})
	l.pending, l.body, l.cont = l.pending[:0], l.body[:0], false
}

// clean reports whether the lexer is at the top level of the section.
func (l *rdwrLexer) clean() bool {
	return len(l.stack) <= 1 && len(l.pending) == 0 && len(l.body) == 0 && !l.cont &&
		(len(l.stack) == 0 || len(l.stack[0].cases) == 0)
}

func (l *rdwrLexer) top() *lexFrame {
	if len(l.stack) == 0 {
		l.reset()
	}
	return &l.stack[len(l.stack)-1]
}

func (l *rdwrLexer) push(f lexFrame) {
	l.stack = append(l.stack, f)
	if f.kind == frameCode {
		l.word = true
	}
}

func (l *rdwrLexer) pop() {
	if len(l.stack) > 1 {
		l.stack = l.stack[:len(l.stack)-1]
	}
}

// line reads one line (without its newline) and returns it with a 1 put
// before every bare <> of printed code.
func (l *rdwrLexer) line(s string) string {
	if len(l.body) > 0 {
		end := s
		if l.body[0].strip {
			end = strings.TrimLeft(s, "\t")
		}
		if end == l.body[0].delim {
			l.body = l.body[1:]
		}
		return s
	}
	var out strings.Builder
	done := 0 // s[:done] is in out
	l.cont, l.word = false, true
	for i := 0; i < len(s); i++ {
		switch f := l.top(); f.kind {
		case frameSingle:
			if s[i] == '\'' {
				l.pop()
			}
		case frameANSI, frameBack:
			if s[i] == '\\' {
				i++
			} else if (f.kind == frameANSI && s[i] == '\'') || (f.kind == frameBack && s[i] == '`') {
				l.pop()
			}
		case frameDouble, frameParam, frameRaw:
			i = l.inWord(f, s, i)
		case frameCode:
			var fix bool
			if i, fix = l.inCode(f, s, i); fix {
				out.WriteString(s[done:i])
				out.WriteString("1")
				done = i
				i++ // the >
			}
		}
	}
	if f := l.top(); f.kind == frameCode && !l.cont {
		f.cmd = true
		l.body = append(l.body, l.pending...)
		l.pending = l.pending[:0]
	}
	if out.Len() == 0 {
		return s
	}
	out.WriteString(s[done:])
	return out.String()
}

// inCode reads byte i of s in a code frame and returns the index of the
// last byte it took, or i and true at a bare <> that bash printed for 1<>.
func (l *rdwrLexer) inCode(f *lexFrame, s string, i int) (int, bool) {
	c, next := s[i], byte(0)
	if i+1 < len(s) {
		next = s[i+1]
	}
	wasWord := l.word
	l.word = false
	switch {
	case c == ' ' || c == '\t':
		l.word = true
	case c == '\\':
		l.cont = i+1 == len(s)
		f.cmd = false
		return i + 1, false
	case c == '#' && wasWord:
		return len(s), false // a comment
	case c == '<' && strings.HasPrefix(s[i:], "<<<"):
		return i + 2, false
	case c == '<' && next == '<':
		return l.heredoc(s, i), false
	case c == '<' && next == '>':
		if f.fix && (i == 0 || s[i-1] == ' ' || s[i-1] == '\t') {
			return i, true
		}
		return i + 1, false
	case (c == '<' || c == '>') && next == '(':
		l.push(lexFrame{kind: frameCode, closes: true, cmd: true})
		return i + 1, false
	case c == '(':
		i = l.openParen(f, s, i, wasWord)
		l.word = true
	case c == ')':
		if n := len(f.cases); n > 0 && f.cases[n-1] == casePattern {
			f.cases[n-1], f.cmd = caseBody, true
		} else if f.closes {
			l.pop()
		}
		l.word = true
	case c == ';':
		if next == ';' || next == '&' { // ;; ;& ;;&: the next pattern
			if n := len(f.cases); n > 0 && f.cases[n-1] == caseBody {
				f.cases[n-1] = casePattern
			}
			i++
			if next == ';' && i+1 < len(s) && s[i+1] == '&' {
				i++
			}
		}
		f.cmd, l.word = true, true
	case c == '&' || c == '|':
		if n := len(f.cases); n == 0 || f.cases[n-1] != casePattern {
			f.cmd = true
		}
		l.word = true
	case wasWord && isNameByte(c):
		return l.reserved(f, s, i), false
	case wasWord && (c == '{' || c == '!') && (next == 0 || next == ' ' || next == '\t'):
		// Reserved words a command follows: the position stays.
	default:
		return l.wordByte(f, s, i, false), false
	}
	return i, false
}

// inWord reads byte i of s in a double-quoted string, a ${…} or raw
// parentheses and returns the index of the last byte it took.
func (l *rdwrLexer) inWord(f *lexFrame, s string, i int) int {
	c := s[i]
	switch {
	case c == '\\':
		return i + 1
	case f.kind == frameDouble && c == '"':
		l.pop()
		return i
	case f.kind == frameParam && c == '{':
		f.depth++
	case f.kind == frameParam && c == '}':
		if f.depth--; f.depth < 0 {
			l.pop()
		}
	case f.kind == frameRaw && c == '(':
		f.depth++
	case f.kind == frameRaw && c == ')':
		if f.depth--; f.depth == 0 {
			l.pop()
		}
	default:
		return l.wordByte(f, s, i, f.kind == frameDouble || (f.kind == frameParam && f.dq))
	}
	return i
}

// wordByte reads byte i of s as part of a word: a quote or an expansion
// opens its frame. In double quotes (dq) a ' is a character.
func (l *rdwrLexer) wordByte(f *lexFrame, s string, i int, dq bool) int {
	if f.kind == frameCode {
		f.cmd = false
	}
	switch c := s[i]; {
	case c == '"' && f.kind != frameDouble:
		l.push(lexFrame{kind: frameDouble})
	case c == '\'' && !dq:
		l.push(lexFrame{kind: frameSingle})
	case c == '`':
		l.push(lexFrame{kind: frameBack})
	case c == '$' && strings.HasPrefix(s[i:], "$(("):
		l.push(lexFrame{kind: frameRaw, depth: 2})
		return i + 2
	case c == '$' && strings.HasPrefix(s[i:], "$("):
		l.push(lexFrame{kind: frameCode, closes: true, cmd: true})
		return i + 1
	case c == '$' && strings.HasPrefix(s[i:], "${"):
		l.push(lexFrame{kind: frameParam, dq: dq})
		return i + 1
	case c == '$' && strings.HasPrefix(s[i:], "$'") && !dq:
		l.push(lexFrame{kind: frameANSI})
		return i + 1
	}
	return i
}

// openParen reads a "(" in code: (( at a word's start is arithmetic,
// @( and its kin inside a word an extended pattern, a pattern's optional
// "(" in a case nothing; anything else opens a subshell or a list that
// its ")" closes.
func (l *rdwrLexer) openParen(f *lexFrame, s string, i int, atWord bool) int {
	switch {
	case atWord && i+1 < len(s) && s[i+1] == '(':
		l.push(lexFrame{kind: frameRaw, depth: 2})
		return i + 1
	case !atWord && i > 0 && strings.IndexByte("@!+*?", s[i-1]) >= 0:
		l.push(lexFrame{kind: frameRaw, depth: 1})
	case atWord && len(f.cases) > 0 && f.cases[len(f.cases)-1] == casePattern:
	default:
		l.push(lexFrame{kind: frameCode, fix: f.fix, closes: true, cmd: true})
	}
	return i
}

// reserved reads the word starting at s[i] when it is case, in or esac
// where they count, or another reserved word after which a command comes;
// any other word goes byte by byte.
func (l *rdwrLexer) reserved(f *lexFrame, s string, i int) int {
	j := i
	for j < len(s) && isNameByte(s[j]) {
		j++
	}
	if j < len(s) && strings.IndexByte(" \t;&|()<>", s[j]) < 0 {
		return l.wordByte(f, s, i, false)
	}
	n := len(f.cases)
	switch w := s[i:j]; {
	case w == "case" && f.cmd:
		f.cases = append(f.cases, caseWantIn)
		f.cmd = false
	case w == "in" && n > 0 && f.cases[n-1] == caseWantIn:
		f.cases[n-1] = casePattern
	case w == "esac" && n > 0 && (f.cases[n-1] == casePattern || f.cmd):
		f.cases = f.cases[:n-1]
		f.cmd = false
	case f.cmd && isCommandWord(w):
	default:
		f.cmd = false
	}
	return j - 1
}

// isCommandWord: the reserved words a command may follow.
func isCommandWord(w string) bool {
	switch w {
	case "if", "then", "else", "elif", "do", "while", "until", "time":
		return true
	}
	return false
}

func isNameByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// heredoc reads a here-document operator at s[i] ("<<" or "<<-", its
// delimiter word) and returns the index of the word's last byte.
func (l *rdwrLexer) heredoc(s string, i int) int {
	j := i + 2
	h := heredoc{}
	if j < len(s) && s[j] == '-' {
		h.strip = true
		j++
	}
	for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
		j++
	}
	var d strings.Builder
	for j < len(s) && strings.IndexByte(" \t;&|<>()", s[j]) < 0 {
		switch c := s[j]; c {
		case '\'', '"':
			k := strings.IndexByte(s[j+1:], c)
			if k < 0 {
				k = len(s) - j - 1
			}
			d.WriteString(s[j+1 : j+1+k])
			j += k + 2
		case '\\':
			if j+1 < len(s) {
				d.WriteByte(s[j+1])
			}
			j += 2
		default:
			d.WriteByte(c)
			j++
		}
	}
	h.delim = d.String()
	l.pending = append(l.pending, h)
	return min(j, len(s)) - 1
}
