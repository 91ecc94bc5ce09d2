package supervisor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"
)

// A tool asks the client something (elicitation, sampling, roots) through
// the shim's mcp_ask family, from its shell or any child it starts:
//
//  1. the helper makes a reply FIFO in the call's root, events.N (taken
//     with mkfifo's O_EXCL-like create, so concurrent helpers never share
//     one), outside the tool's MCP_CALL_TMPDIR;
//  2. appends one ask record to the events file:
//
//     ask  events.N  one     METHOD   PARAMS     (mcp_ask, mcp_sample, mcp_roots)
//     ask  events.N  all     UNIT                (mcp_ask_all: {KEY: {method, params}, …})
//     ask  events.N  elicit  MESSAGE  SCHEMA     (mcp_elicit: Go builds the params)
//
//  3. blocks reading the FIFO to its EOF. The daemon answers "0\n" and the
//     result JSON, compact (for "all": {KEY: result, …}); or "1\n" and a
//     message the helper prints on stderr before it returns 1; or, for an
//     elicitation the user did not accept, "2\n", a one-line message and
//     the result: the helper prints both and returns 1, so `answer=$(
//     mcp_elicit …) || …` reads as "unless the user said yes".
//
// Each record is served on its own goroutine through Request.Ask; the
// goroutines end before Call returns. The daemon opens a FIFO only without
// blocking and without following a symlink, and a reply write cannot
// outlive the call: once its group is gone the write is abandoned.

// AskItem is one request a tool asks the client: Key is "" for a single
// mcp_ask and the unit's key for mcp_ask_all; Params may be nil (none).
type AskItem struct {
	Key, Method string
	Params      json.RawMessage
}

// ErrEndCall, wrapped in the error Request.Ask returns, ends the call at
// once: its process group is SIGKILLed (no cancel hook: the tool is run
// again from the start later) and the Outcome ends EndedToAsk, so the caller can
// answer something other than a tool result (2026's input_required).
var ErrEndCall = errors.New("the call ends to ask the client")

// Why a helper's question is left unanswered as its call ends.
var (
	errCallOver     = errors.New("the call is over")
	errCallTimedOut = errors.New("the call timed out")
)

// errNoAsk: the call's Request has no Ask.
var errNoAsk = errors.New("this call cannot ask the client")

// askRecord is one parsed ask record; problem, when set, is why it cannot
// be asked (the helper gets it as its error).
type askRecord struct {
	reply   string // the FIFO's name in the root
	all     bool
	elicit  bool // mcp_elicit: an answer other than "accept" fails the helper
	items   []AskItem
	problem string
}

// parseAsk reads an ask record's fields after "ask" (unescaped here).
func parseAsk(f []string, cut bool) askRecord {
	rec := askRecord{reply: f[0]}
	field := func(i int) string {
		if i < len(f) {
			return unescape(f[i])
		}
		return ""
	}
	switch form := field(1); {
	case cut:
		rec.problem = fmt.Sprintf("the request is larger than %d bytes", recordCap)
	case form == "one":
		params, err := paramsObject(field(3))
		if err != nil {
			rec.problem = err.Error()
		}
		if field(2) == "" {
			rec.problem = "no method given"
		}
		rec.items = []AskItem{{Method: field(2), Params: params}}
	case form == "elicit":
		rec.elicit = true
		rec.items, rec.problem = elicitItem(field(2), field(3))
	case form == "all":
		rec.all = true
		rec.items, rec.problem = unitItems(field(2))
	default:
		rec.problem = fmt.Sprintf("unknown ask form %q", form)
	}
	return rec
}

// paramsObject checks a request's params: empty means none, anything
// else must be a JSON object.
func paramsObject(s string) (json.RawMessage, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &obj); err != nil || obj == nil {
		return nil, errors.New("the params are not a JSON object")
	}
	return json.RawMessage(s), nil
}

// elicitItem builds elicitation/create's params from mcp_elicit's raw
// fields: {"message": MESSAGE, "requestedSchema": SCHEMA}.
func elicitItem(message, schema string) ([]AskItem, string) {
	s, err := paramsObject(schema)
	if err != nil || s == nil {
		return nil, "the requested schema is not a JSON object"
	}
	params, err := json.Marshal(struct {
		Message string          `json:"message"`
		Schema  json.RawMessage `json:"requestedSchema"`
	}{message, s})
	if err != nil {
		return nil, "the requested schema is not valid JSON"
	}
	return []AskItem{{Method: "elicitation/create", Params: params}}, ""
}

// unitItems reads mcp_ask_all's unit, {KEY: {"method": …, "params": …}},
// in key order.
func unitItems(unit string) ([]AskItem, string) {
	var m map[string]struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal([]byte(unit), &m); err != nil || len(m) == 0 {
		return nil, `the requests are not a non-empty JSON object {KEY: {"method": …, "params": …}}`
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	items := make([]AskItem, 0, len(keys))
	for _, k := range keys {
		r := m[k]
		params, err := paramsObject(string(r.Params))
		if string(r.Params) == "null" {
			params, err = nil, nil
		}
		if r.Method == "" || err != nil {
			return nil, fmt.Sprintf("request %q needs a method and params that are a JSON object", k)
		}
		items = append(items, AskItem{Key: k, Method: r.Method, Params: params})
	}
	return items, ""
}

// asker serves one call's ask records.
type asker struct {
	ctx    context.Context
	cancel context.CancelCauseFunc // why the call is ending
	ask    func(context.Context, []AskItem) ([]json.RawMessage, error)
	root   callRoot
	log    *zap.Logger
	gone   chan struct{} // closed once the call's group is gone
	wg     sync.WaitGroup

	waiting atomic.Int32 // requests being asked (MaxAsks)
	refused atomic.Int64 // records refused at once (refuse)

	endOnce sync.Once
	ended   chan struct{} // closed when an Ask said ErrEndCall
}

func newAsker(ctx context.Context, req Request, root callRoot, log *zap.Logger) *asker {
	a := &asker{ask: req.Ask, root: root, log: log, gone: make(chan struct{}), ended: make(chan struct{})}
	a.ctx, a.cancel = context.WithCancelCause(ctx)
	return a
}

// MaxAsks is how many requests one call may have waiting for the client
// at once — an mcp_ask_all unit counts one per key; past it a helper fails
// at once. A tool that writes ask records in a loop, or a unit of
// thousands of keys, must not turn into as many requests to the client
// and as many goroutines here.
const MaxAsks = 16

// serve answers rec on its own goroutine, or refuses it at once: a record
// that cannot be asked (malformed, or past MaxAsks) costs a few system
// calls here and nothing after (refuse), however many a tool writes.
func (a *asker) serve(rec askRecord) {
	n := int32(len(rec.items))
	switch {
	case rec.problem != "":
	case !a.hasReply(rec):
		rec.problem = "the record names no reply FIFO of the call" // nobody waits: the client is not asked
	case n > MaxAsks:
		rec.problem = fmt.Sprintf("at most %d requests can wait for the client at once, and this asks %d", MaxAsks, n)
	case a.waiting.Add(n) > MaxAsks:
		a.waiting.Add(-n)
		rec.problem = fmt.Sprintf("this call already has %d questions waiting for the client", MaxAsks)
	default:
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			defer a.waiting.Add(-n)
			a.answer(rec)
		}()
		return
	}
	a.refuse(rec)
}

// refuse gives a helper its refusal without waiting for it. The reply
// FIFO is opened read-write (which never blocks) and the refusal written
// into it (one short write: it fits the empty pipe); then a regular file
// holding the same is renamed over the FIFO's name, and the FIFO closed.
// A helper that opened the FIFO before the rename reads the refusal and
// EOF; one that opens the name after it reads the file. Either way
// nothing waits, here or in the helper. Only the first refusal of a call
// is logged; close counts the rest.
func (a *asker) refuse(rec askRecord) {
	if a.refused.Add(1) == 1 {
		a.log.Warn("ask refused", zap.String("reply", rec.reply), zap.String("why", rec.problem))
	}
	path, ok := a.root.replyFile(rec.reply)
	if !ok {
		return
	}
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return // no FIFO: nobody waits
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
		return
	}
	msg := []byte("1\n" + rec.problem)
	_, _ = unix.Write(fd, msg)
	// The helper may run as another user (a root daemon's sandboxed call):
	// its directory is its own and private, the file may be readable.
	tmp := path + ".refused"
	f, err := unix.Open(tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
	if err != nil {
		_ = unix.Unlink(path) // a helper not yet there fails to open it
		return
	}
	_, werr := unix.Write(f, msg)
	unix.Close(f)
	if werr != nil || unix.Rename(tmp, path) != nil {
		_ = unix.Unlink(tmp)
		_ = unix.Unlink(path)
	}
}

// close is called once the call's group is gone: it ends every Ask still
// waiting, abandons reply writes nobody reads, and waits for them all.
func (a *asker) close() {
	a.cancel(errCallOver)
	close(a.gone)
	a.wg.Wait()
	if n := a.refused.Load(); n > 1 {
		a.log.Warn("ask records refused", zap.Int64("count", n))
	}
}

// hasReply reports whether rec names a reply FIFO of the call.
func (a *asker) hasReply(rec askRecord) bool {
	path, ok := a.root.replyFile(rec.reply)
	var st unix.Stat_t
	return ok && unix.Lstat(path, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFIFO
}

func (a *asker) answer(rec askRecord) {
	path, _ := a.root.replyFile(rec.reply)
	body, err := a.results(rec)
	if errors.Is(err, ErrEndCall) {
		a.endOnce.Do(func() { close(a.ended) })
		return
	}
	var reply string
	switch {
	case err != nil:
		reply = "1\n" + a.message(err)
	case rec.elicit && elicitAction(body) != "accept":
		reply = "2\nthe user did not accept (action: " + elicitAction(body) + ")\n" + string(body)
	default:
		reply = "0\n" + string(body)
	}
	if err := a.write(path, reply); err != nil {
		a.log.Debug("ask reply not delivered", zap.String("reply", rec.reply), zap.Error(err))
	}
}

// results asks and shapes the answer the helper prints.
func (a *asker) results(rec askRecord) ([]byte, error) {
	switch {
	case rec.problem != "":
		return nil, errors.New(rec.problem)
	case a.ask == nil:
		return nil, errNoAsk
	case a.ctx.Err() != nil:
		return nil, a.ctx.Err()
	}
	res, err := a.ask(a.ctx, rec.items)
	if err != nil {
		return nil, err
	}
	if len(res) != len(rec.items) {
		return nil, fmt.Errorf("%d answers to %d requests", len(res), len(rec.items))
	}
	if !rec.all {
		return compact(res[0])
	}
	out := make(map[string]json.RawMessage, len(res))
	for i, it := range rec.items {
		out[it.Key] = res[i]
	}
	return json.Marshal(out) // compacts the results too
}

// compact is a result on one line, as the helper prints it.
func compact(raw json.RawMessage) ([]byte, error) {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return nil, fmt.Errorf("the answer is not JSON: %w", err)
	}
	return b.Bytes(), nil
}

// elicitAction is an elicitation result's action, printable on one line.
func elicitAction(result []byte) string {
	var r struct {
		Action string `json:"action"`
	}
	_ = json.Unmarshal(result, &r)
	q := strconv.Quote(r.Action)
	return q[1 : len(q)-1]
}

// message is the helper's error text: a call that ended says so rather
// than "context canceled".
func (a *asker) message(err error) string {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		if cause := context.Cause(a.ctx); cause != nil && !errors.Is(cause, context.Canceled) {
			return "the call ended before the client answered: " + cause.Error()
		}
		return "the call ended before the client answered"
	}
	return err.Error()
}

// openReply opens the reply FIFO for writing without blocking. The helper
// opens its end just after it appended the record, so an answer ready
// sooner finds no reader yet (ENXIO): it looks again, less and less often,
// until the helper is there or the call's group is gone.
func (a *asker) openReply(path string) (int, error) {
	for delay := 100 * time.Microsecond; ; delay = min(2*delay, 50*time.Millisecond) {
		fd, err := unix.Open(path, unix.O_WRONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if !errors.Is(err, unix.ENXIO) {
			return fd, err
		}
		t := time.NewTimer(delay)
		select {
		case <-a.gone:
			t.Stop()
			return -1, err
		case <-t.C:
		}
	}
}

// write removes the FIFO at path and delivers reply to the helper
// reading it. Opening without blocking fails (ENXIO) when no helper
// is reading; a helper that stops reading holds the write only until the
// call's group is gone.
func (a *asker) write(path, reply string) error {
	fd, err := a.openReply(path)
	if err != nil {
		return fmt.Errorf("open reply: %w", err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
		unix.Close(fd)
		return errors.New("reply is not a FIFO")
	}
	// The helper has it open (or is in open(2), which now completes): the
	// name can go before the reply is written, so it is free again by
	// the time the helper reads EOF and may ask once more.
	_ = os.Remove(path)
	f := os.NewFile(uintptr(fd), path) // non-blocking: a pollable file, deadlines work
	defer f.Close()
	wrote, watched := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case <-a.gone:
			_ = f.SetWriteDeadline(time.Unix(1, 0))
		case <-wrote:
		}
	}()
	_, err = f.WriteString(reply)
	close(wrote)
	<-watched
	return err
}
