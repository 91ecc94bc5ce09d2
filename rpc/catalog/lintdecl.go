package catalog

import (
	"fmt"
	"mime"
	"sort"
	"strconv"
	"strings"
)

// DeclInput is what LintDeclarations checks: resources.json and
// prompts.json, and the functions the loaded script defines (nil when it
// could not be loaded: then declarations and functions are not compared).
type DeclInput struct {
	ResourcesFile, PromptsFile, Script string
	Functions                          map[string]bool
}

// DeclCounts says what the declaration files declare.
type DeclCounts struct {
	Resources, Templates, Prompts int
	Present                       bool // either file exists
}

// LintDeclarations checks resources.json and prompts.json: each parses and
// holds usable entries (a string name, a uri or a uriTemplate of levels 1
// to 3), names are bash function suffixes, mimeTypes are media types,
// every declaration has its resource_/prompt_ function and every
// resource_, prompt_ and complete_ function is declared. Absent files are
// fine: the server then offers no resources or prompts.
func LintDeclarations(in DeclInput) ([]Problem, DeclCounts) {
	var ps []Problem
	report := func(file string, line int, format string, a ...any) {
		ps = append(ps, Problem{File: file, Line: line, Msg: fmt.Sprintf(format, a...)})
	}
	rf, pf := LoadResources(in.ResourcesFile), LoadPrompts(in.PromptsFile)
	counts := DeclCounts{Present: !rf.Missing || !pf.Missing}
	fileErr := func(path string, err error) {
		line := 0
		if m := lineRE.FindStringSubmatch(err.Error()); m != nil {
			line, _ = strconv.Atoi(m[1])
		}
		report(path, line, "%v", err)
	}
	// Names a function may serve: resources and templates by name,
	// prompts by name; completions for prompts and templates.
	served := map[string]bool{}
	completes := map[string]bool{}
	if rf.Err != nil {
		fileErr(rf.Path, rf.Err)
	} else if !rf.Missing {
		for _, p := range rf.Problems {
			report(rf.Path, 0, "%s", p)
		}
		counts.Resources, counts.Templates = len(rf.Resources), len(rf.Templates)
		for _, r := range rf.Resources {
			lintEntry(report, rf.Path, "resource", r.URI, r.Name, r.MIME, r.Problem)
			served["resource_"+r.Name] = true
		}
		for _, t := range rf.Templates {
			lintEntry(report, rf.Path, "resource template", t.URITemplate, t.Name, t.MIME, t.Problem)
			served["resource_"+t.Name] = true
			completes["complete_"+t.Name] = true
		}
	}
	if pf.Err != nil {
		fileErr(pf.Path, pf.Err)
	} else if !pf.Missing {
		for _, p := range pf.Problems {
			report(pf.Path, 0, "%s", p)
		}
		counts.Prompts = len(pf.Prompts)
		for _, p := range pf.Prompts {
			if p.Problem != "" {
				report(pf.Path, 0, "%s", p.Problem)
			}
			served["prompt_"+p.Name] = true
			completes["complete_"+p.Name] = true
		}
	}
	if in.Functions == nil {
		return ps, counts
	}
	lintFunctions(report, in, rf, pf, served, completes, counts.Present)
	return ps, counts
}

// lintFunctions checks the declarations against the script's functions:
// each declared name has its function, and each resource_, prompt_ and
// complete_ function (and its _cancel hook) serves a declaration.
func lintFunctions(report func(string, int, string, ...any), in DeclInput, rf *ResourcesFile, pf *PromptsFile, served, completes map[string]bool, present bool) {
	var missing []string
	for fn := range served {
		if !in.Functions[fn] && ValidName.MatchString(strings.SplitN(fn, "_", 2)[1]) {
			missing = append(missing, fn)
		}
	}
	sort.Strings(missing)
	for _, fn := range missing {
		file := rf.Path
		if strings.HasPrefix(fn, "prompt_") {
			file = pf.Path
		}
		report(file, 0, "%s is declared but %s defines no function %s", strings.SplitN(fn, "_", 2)[1], in.Script, fn)
	}
	for _, fn := range sortedKeys(in.Functions) {
		prefix, _, _ := strings.Cut(fn, "_")
		switch prefix {
		case "resource", "prompt", "complete":
		default:
			continue
		}
		base, isHook := strings.CutSuffix(fn, "_cancel")
		switch {
		case served[fn] || completes[fn]:
		case isHook && (served[base] || completes[base]):
		case prefix == "complete" && present:
			report(in.Script, 0, "function %s completes no declared prompt or resource template (it can never be called)", fn)
		case prefix == "resource" && !rf.Missing && rf.Err == nil:
			report(in.Script, 0, "function %s is not declared in %s (it can never be called)", fn, rf.Path)
		case prefix == "prompt" && !pf.Missing && pf.Err == nil:
			report(in.Script, 0, "function %s is not declared in %s (it can never be called)", fn, pf.Path)
		}
	}
}

// lintEntry checks what is left of one resource or template once parsed.
func lintEntry(report func(string, int, string, ...any), path, kind, uri, name, mimeType, problem string) {
	if problem != "" {
		report(path, 0, "%s %s: %s", kind, uri, problem)
	}
	if mimeType == "" {
		return
	}
	if _, _, err := mime.ParseMediaType(mimeType); err != nil || !strings.Contains(mimeType, "/") {
		report(path, 0, "%s %s: mimeType %q is not a media type (type/subtype)", kind, uri, mimeType)
	}
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
