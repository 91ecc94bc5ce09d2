package mcp

import (
	"encoding/json"

	"github.com/mcp-bashd/mcp-bashd/rpc/catalog"
	"github.com/mcp-bashd/mcp-bashd/rpc/transport"
	"github.com/mcp-bashd/mcp-bashd/rpc/wire"
)

// The method table: every request method the server answers, once, with
// the eras that have it, whether it runs bash (and so is admitted against
// the busy bound and takes a slot, admission.go), what the catalog must
// offer for it to exist, the capability the request must declare, its
// params type and its handler. Era gating, the offer and capability
// checks and "Method not found" all come from here (session.dispatch);
// adding a method is one row and one handler.

// eras is a set of protocol eras.
type eras uint8

const (
	legacyEras eras = 1 << iota // the session eras, 2024-11-05 … 2025-11-25
	modernEra                   // 2026-07-28
	allEras    = legacyEras | modernEra
)

func (e eras) has(era transport.Era) bool {
	if era == transport.Modern {
		return e&modernEra != 0
	}
	return e&legacyEras != 0
}

// offer is what a server must declare for a method to exist.
type offer uint8

const (
	always offer = iota
	// The kind's declaration file (resources.json, prompts.json; both for
	// completions): without it -32601 — except a session-era list method,
	// answered with an empty list as the bash SDKs did. An unusable file
	// is its -32603.
	offersResources
	offersPrompts
	offersCompletions
	// A listen stream could carry something (offersSubscriptions).
	offersListen
)

// method is one row of the table.
type method struct {
	eras eras
	bash bool // runs bash: admitted and run in a slot (serve returns an inFlightRun)
	// list: a list method a session-era server without the declaration
	// answers with an empty list.
	list  bool
	offer offer
	// tasksExt: a 2026 request must declare the tasks extension (-32021).
	tasksExt bool
	// config: answered from config.json, so an unusable one is the
	// file's -32603 (initialize, server/discover).
	config bool
	// serve decodes the params once into the method's type and answers
	// (bash: returns what runs in the slot; nil when already answered).
	serve func(c *session, r *request) inFlightRun
}

// methods is the table. Each row names its params type in its handler's
// signature (cheap and inFlight take the decoder of that type).
var methods map[string]method

func init() {
	methods = map[string]method{
		"initialize":       {eras: legacyEras, config: true, serve: cheap(decodeInitialize, (*session).initialize)},
		"logging/setLevel": {eras: legacyEras, serve: cheap(decodeSetLevel, (*session).setLevel)},
		"ping":             {eras: legacyEras, serve: cheap(noParams, (*session).ping)},
		"server/discover":  {eras: modernEra, config: true, serve: cheap(noParams, (*session).discover)},
		"tools/list":       {eras: allEras, serve: cheap(decodeList, (*session).toolsList)},
		"tools/call":       {eras: allEras, bash: true, serve: inFlight(decodeCall, (*session).callTool)},

		"resources/list":           {eras: allEras, list: true, offer: offersResources, serve: cheap(decodeList, (*session).listResources)},
		"resources/templates/list": {eras: allEras, list: true, offer: offersResources, serve: cheap(decodeList, (*session).listTemplates)},
		"resources/read":           {eras: allEras, bash: true, offer: offersResources, serve: inFlight(decodeRead, (*session).readResource)},
		"resources/subscribe":      {eras: legacyEras, offer: offersResources, serve: cheap(decodeURI, (*session).subscribe)},
		"resources/unsubscribe":    {eras: legacyEras, offer: offersResources, serve: cheap(decodeURI, (*session).unsubscribe)},
		"prompts/list":             {eras: allEras, list: true, offer: offersPrompts, serve: cheap(decodeList, (*session).listPrompts)},
		"prompts/get":              {eras: allEras, bash: true, offer: offersPrompts, serve: inFlight(decodePrompt, (*session).getPrompt)},
		"completion/complete":      {eras: allEras, bash: true, offer: offersCompletions, serve: inFlight(decodeComplete, (*session).complete)},
		"subscriptions/listen":     {eras: modernEra, offer: offersListen, serve: cheap(decodeListen, (*session).listen)},

		"tasks/get":    {eras: allEras, tasksExt: true, serve: cheap(decodeTask, (*session).getTask)},
		"tasks/cancel": {eras: allEras, tasksExt: true, serve: cheap(decodeTask, (*session).cancelTaskReq)},
		"tasks/update": {eras: modernEra, tasksExt: true, serve: cheap(decodeTask, (*session).updateTask)},
		"tasks/result": {eras: legacyEras, tasksExt: true, serve: cheap(decodeTask, (*session).taskResult)},
		"tasks/list":   {eras: legacyEras, tasksExt: true, serve: cheap(noParams, (*session).listTasks)},
	}
}

// request is one request on its way through the table: the transport's
// request, the declarations it is answered from, and its _meta's client
// capabilities decoded once (2026).
type request struct {
	*transport.Request
	cat  *catalog.Catalog
	caps map[string]json.RawMessage
}

func (r *request) modern() bool { return r.Era == transport.Modern }

// fail answers r with e.
func (r *request) fail(e *wire.Error) { r.Out.Respond(transport.Response{ID: r.Msg.ID, Err: e}) }

// reply answers r with result.
func (r *request) reply(result json.RawMessage) {
	r.Out.Respond(transport.Response{ID: r.Msg.ID, Result: result})
}

// cheap is a row answered on the reader: P is its params type, decoded
// once by decode before h sees it.
func cheap[P any](decode func(*request) (P, *wire.Error), h func(*session, *request, P)) func(*session, *request) inFlightRun {
	return func(c *session, r *request) inFlightRun {
		p, err := decode(r)
		if err != nil {
			r.fail(err)
			return nil
		}
		h(c, r, p)
		return nil
	}
}

// inFlight is a row that runs bash: h checks what can be checked on the
// reader and returns what runs in the slot (nil when it answered).
func inFlight[P any](decode func(*request) (P, *wire.Error), h func(*session, *request, P) (inFlightRun, *wire.Error)) func(*session, *request) inFlightRun {
	return func(c *session, r *request) inFlightRun {
		p, err := decode(r)
		if err != nil {
			r.fail(err)
			return nil
		}
		run, err := h(c, r, p)
		if err != nil {
			r.fail(err)
			return nil
		}
		return run
	}
}

// dispatch answers one request from the table. A 2026 request's own
// checks come first (checkModern: _meta, headers, version, log level),
// then the method: unknown in the request's era is -32601; then what the
// row needs of config.json, of the catalog and of the client's
// capabilities; then the row decodes its params and answers.
func (c *session) dispatch(req *transport.Request) {
	r := &request{Request: req}
	if r.modern() {
		if e := c.checkModern(r); e != nil {
			r.fail(e)
			return
		}
	}
	m, ok := methods[req.Msg.Method]
	if !ok || !m.eras.has(req.Era) {
		r.fail(wire.MethodNotFound(req.Msg.Method))
		return
	}
	if m.config {
		if cfg := c.srv.src.Config(); cfg.Err != nil {
			r.fail(c.srv.fileError(cfg.ConfigError(), r.Era))
			return
		}
	}
	if m.offer != always {
		r.cat = c.srv.src.Declarations()
		if e := c.offered(r, m); e != nil {
			r.fail(e)
			return
		}
	}
	if m.tasksExt && r.modern() && !declaresTasks(r.caps) {
		r.fail(wire.MissingExtension(": "+req.Msg.Method+" needs the "+TasksExtension+" extension", TasksExtension))
		return
	}
	run := m.serve(c, r)
	if run != nil {
		c.startInFlight(req, run)
	}
}

// offered checks a row's offer against the declarations: -32601 when the
// server does not offer the method, the file's -32603 when its
// declaration file is unusable.
func (c *session) offered(r *request, m method) *wire.Error {
	cat, method := r.cat, r.Msg.Method
	kind := ""
	switch m.offer {
	case offersListen:
		if !offersSubscriptions(cat) {
			return wire.MethodNotFound(method)
		}
		return nil
	case offersResources:
		kind = "resources"
	case offersPrompts:
		kind = "prompts"
	case offersCompletions:
		kind = "completions"
	}
	if !cat.Offers(kind) && (r.modern() || !m.list) {
		return wire.MethodNotFound(method)
	}
	if e := declarationError(cat, kind, r.Era); e != nil {
		return c.srv.fileError(e, r.Era)
	}
	return nil
}

// Methods lists the table: each method with its eras and whether it runs
// bash (for docs and tests).
func Methods() []MethodInfo {
	out := make([]MethodInfo, 0, len(methods))
	for name, m := range methods {
		out = append(out, MethodInfo{Name: name, Legacy: m.eras&legacyEras != 0, Modern: m.eras&modernEra != 0, RunsBash: m.bash})
	}
	return out
}

// MethodInfo is one row of the method table as Methods shows it.
type MethodInfo struct {
	Name           string
	Legacy, Modern bool
	RunsBash       bool
}

// noParams is the decoder of a method whose params the server does not
// read.
func noParams(*request) (struct{}, *wire.Error) { return struct{}{}, nil }
