package supervisor

import "strings"

// Resources, prompts and completions run bash functions the way tools do —
// the same call path, root, process group, lifeline, before-call hook,
// cancel hook, timeout and content helpers — with three differences a
// Request with Func set makes:
//
//   - the function is Func itself (resource_NAME, prompt_NAME,
//     complete_NAME), called with several positional arguments (Argv),
//     written to the root's args file NUL-terminated, one after another;
//   - its cancel hook is Func_cancel;
//   - its stderr is kept apart from its stdout (logged, and joined to the
//     text of a failure), as for a tools-directory executable: what a
//     resource prints is the resource's content, and a warning on stderr
//     must not become part of it.
//
// The before-call hook (mcp_before_tool_call) gets Func as the name and
// Func's first argument (the URI, the prompt's arguments, the completed
// argument's name), so a hook that gates tools gates these too.

// values is what the root's values file holds for req: a tool's
// arguments decoded for mcp_arg (nil for a resource, prompt or completion
// function, and for a tools-dir executable, which has no mcp_arg).
func (req Request) values() []byte {
	if req.Kind != ToolFunc {
		return nil
	}
	return argValues(req.Args)
}

// argsFile is what the root's args file holds for req.
func (req Request) argsFile() []byte {
	if req.Kind != DeclaredFunc {
		return req.Args
	}
	var b strings.Builder
	for _, a := range req.Argv {
		b.WriteString(a)
		b.WriteByte(0)
	}
	return []byte(b.String())
}

// cancelHook is the function the cancel path runs first, when defined.
func (req Request) cancelHook() string {
	if req.Kind == DeclaredFunc {
		return req.Func + "_cancel"
	}
	return "tool_" + req.Tool + "_cancel"
}

// splitsStderr says whether stderr goes to its own file rather than
// joining stdout: a tools-directory executable prints its result on
// stdout and diagnostics on stderr, as in the system it comes from, and so
// does a function whose stdout is a resource's or a prompt's content.
func (req Request) splitsStderr() bool { return req.Kind != ToolFunc }
