package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/mcp-bashd/mcp-bashd/rpc/catalog"
)

// declarationsTable prints, after the tools, the resources and prompts
// resources.json and prompts.json declare (nothing when neither exists).
func declarationsTable(f *cliFiles, std streams) int {
	stdout := std.out
	rf, pf := catalog.LoadResources(f.resources), catalog.LoadPrompts(f.prompts)
	status := 0
	for _, e := range []struct {
		path string
		err  error
	}{{rf.Path, rf.Err}, {pf.Path, pf.Err}} {
		if e.err != nil {
			fmt.Fprintf(std.err, "mcp-bashd tools: %s: %v\n", e.path, e.err)
			status = 1
		}
	}
	if len(rf.Resources)+len(rf.Templates) > 0 {
		w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "\nRESOURCE\tNAME\tMIME TYPE")
		for _, r := range rf.Resources {
			fmt.Fprintf(w, "%s\t%s\t%s\n", oneLine(r.URI, 60), oneLine(r.Name, 30), r.MIME)
		}
		for _, t := range rf.Templates {
			fmt.Fprintf(w, "%s\t%s\t%s\n", oneLine(t.URITemplate, 60), oneLine(t.Name, 30), t.MIME)
		}
		w.Flush()
	}
	if len(pf.Prompts) > 0 {
		w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "\nPROMPT\tDESCRIPTION\tARGUMENTS")
		for _, p := range pf.Prompts {
			var as []string
			for _, a := range p.Args {
				s := a.Name
				if a.Required {
					s += "*"
				}
				as = append(as, s)
			}
			fmt.Fprintf(w, "%s\t%s\t%s\n", oneLine(p.Name, 40), oneLine(p.Description, 60), strings.Join(as, " "))
		}
		w.Flush()
	}
	return status
}

// declaredCounts is what check's "ok" line adds for resources.json and
// prompts.json ("" when neither exists).
func declaredCounts(c catalog.DeclCounts) string {
	if !c.Present {
		return ""
	}
	return fmt.Sprintf(", %d resources, %d resource templates, %d prompts", c.Resources, c.Templates, c.Prompts)
}
