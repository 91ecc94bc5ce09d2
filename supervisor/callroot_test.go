package supervisor

import (
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/mcp-bashd/mcp-bashd/scripts"
)

// Go names the files of a call's root once (callroot.go); bash names them
// as literals. A rename on either side must fail here, not in production.
func TestCallRootNamesInScripts(t *testing.T) {
	// How bash reaches each file: "worker" (worker.sh opens
	// "$__mcpbashd_root/NAME"), "env" (through the variable root.env()
	// sets), "fd" (handed over as a descriptor; bash never names it).
	how := map[string]string{
		"args": "worker", "phase": "worker", "hook": "worker", "opts": "worker",
		"events": "env", "content": "env", "tmp": "env", "values": "env",
		"out": "fd", "stderr": "fd",
	}
	const dir = "/R"
	root := callRoot(dir)
	byFile := map[string]string{} // file name → environment variable
	for _, kv := range root.env(1) {
		k, v, _ := strings.Cut(kv, "=")
		if !strings.Contains(scripts.Worker, k) && !strings.Contains(scripts.Shim, k) {
			t.Errorf("the scripts never use %s, which the daemon sets for every call", k)
		}
		if name, ok := strings.CutPrefix(v, dir+"/"); ok {
			byFile[name] = k
		}
	}
	defined := map[string]bool{}
	rv := reflect.ValueOf(root)
	for i := 0; i < rv.NumMethod(); i++ {
		m := rv.Method(i)
		if m.Type().NumIn() != 0 || m.Type().NumOut() != 1 || m.Type().Out(0).Kind() != reflect.String {
			continue
		}
		name, ok := strings.CutPrefix(m.Call(nil)[0].String(), dir+"/")
		if !ok {
			t.Errorf("callRoot.%s is not a file of the root", rv.Type().Method(i).Name)
			continue
		}
		defined[name] = true
		switch how[name] {
		case "worker":
			if !strings.Contains(scripts.Worker+scripts.WorkerCall, `"$__mcpbashd_root/`+name+`"`) {
				t.Errorf("worker.sh never names the root's %q file", name)
			}
		case "env":
			if v := byFile[name]; v == "" || !strings.Contains(scripts.Shim, v) {
				t.Errorf("the root's %q file reaches the shim through no variable it uses (%q)", name, v)
			}
		case "fd":
		default:
			t.Errorf("callRoot.%s names %q: say in this test how bash reaches it", rv.Type().Method(i).Name, name)
		}
	}
	for _, m := range regexp.MustCompile(`\$__mcpbashd_root/([A-Za-z0-9_.-]+)`).FindAllStringSubmatch(scripts.Worker+scripts.WorkerCall, -1) {
		if !defined[m[1]] {
			t.Errorf("worker.sh uses the root's %q file, which callRoot does not define", m[1])
		}
	}
	// What the phase file says, as worker.sh writes it and readPhase reads it.
	for _, w := range []string{"printf " + phaseHook + " >|", "'" + phaseRefused + " %d'", "printf " + phaseTool + " >|"} {
		if !strings.Contains(scripts.WorkerCall, w) {
			t.Errorf("worker_call.sh does not write the phase as %q", w)
		}
	}
}
