package main

import (
	"flag"
	"fmt"
	"sort"
	"strings"
)

const completionUsage = `Usage: mcp-bashd completion bash|zsh|fish

Prints the shell completion script for mcp-bashd: its commands, each
command's flags, file names elsewhere. The flags are the binary's own, so
the script is always in step with the version that printed it.

Examples:
  eval "$(mcp-bashd completion bash)"          # in ~/.bashrc (bash 3.2 cannot source <(...))
  source <(mcp-bashd completion zsh)           # in ~/.zshrc
  mcp-bashd completion fish > ~/.config/fish/completions/mcp-bashd.fish
`

// completionCommand prints the completion script of one shell.
func completionCommand(args []string, std streams) int {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
		fmt.Fprint(std.out, completionUsage)
		return 0
	}
	if len(args) != 1 {
		fmt.Fprintln(std.err, "mcp-bashd completion: give one shell: bash, zsh or fish (see mcp-bashd completion --help)")
		return 2
	}
	flags := commandFlags()
	switch args[0] {
	case "bash":
		fmt.Fprint(std.out, bashCompletion(flags))
	case "zsh":
		// zsh runs bash's completion functions through bashcompinit.
		fmt.Fprint(std.out, "#compdef mcp-bashd\nautoload -U +X bashcompinit && bashcompinit\n"+bashCompletion(flags))
	case "fish":
		fmt.Fprint(std.out, fishCompletion(flags))
	default:
		fmt.Fprintf(std.err, "mcp-bashd completion: no completion for %q: bash, zsh or fish\n", args[0])
		return 2
	}
	return 0
}

// commandFlags are each command's flags ("" the serving command's), as
// their own flag sets declare them.
func commandFlags() map[string][]string {
	var o options
	var cf callFlags
	var tf toolsFlags
	newFS, _, _ := newFlagSet()
	sets := map[string]*flag.FlagSet{
		"":      daemonFlags(&o),
		"tools": cliFlagSet("tools", &cliFiles{}, tf.define),
		"call":  cliFlagSet("call", &cliFiles{}, cf.define),
		"check": cliFlagSet("check", &cliFiles{}, nil),
		"new":   newFS,
	}
	out := map[string][]string{}
	for cmd, fs := range sets {
		fs.VisitAll(func(f *flag.Flag) {
			if !strings.HasPrefix(f.Usage, "internal:") {
				out[cmd] = append(out[cmd], "--"+f.Name)
			}
		})
		sort.Strings(out[cmd])
	}
	return out
}

func bashCompletion(flags map[string][]string) string {
	var b strings.Builder
	b.WriteString("# mcp-bashd completion for bash (mcp-bashd completion bash)\n_mcp_bashd() {\n")
	b.WriteString("    local cur=${COMP_WORDS[COMP_CWORD]} cmd=${COMP_WORDS[1]:-} words\n")
	b.WriteString("    case $cmd in\n")
	for _, cmd := range []string{"tools", "call", "check", "new"} {
		fmt.Fprintf(&b, "    %s) words=%q ;;\n", cmd, strings.Join(flags[cmd], " "))
	}
	b.WriteString("    help) words=" + fmt.Sprintf("%q", strings.Join(commands, " ")) + " ;;\n")
	b.WriteString("    completion) words=\"bash zsh fish\" ;;\n")
	b.WriteString("    shim|version) words= ;;\n")
	fmt.Fprintf(&b, "    *) words=%q ;;\n", strings.Join(flags[""], " "))
	b.WriteString("    esac\n")
	b.WriteString("    if [ \"$COMP_CWORD\" -eq 1 ] && [[ $cur != -* ]]; then\n")
	fmt.Fprintf(&b, "        COMPREPLY=($(compgen -W %q -- \"$cur\") $(compgen -f -- \"$cur\"))\n", strings.Join(append([]string{"help"}, commands...), " "))
	b.WriteString("    elif [[ $cur == -* ]] || [ \"$cmd\" = help ] || [ \"$cmd\" = completion ]; then\n")
	b.WriteString("        COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n")
	b.WriteString("    else\n        COMPREPLY=($(compgen -f -- \"$cur\"))\n    fi\n}\n")
	b.WriteString("complete -o filenames -F _mcp_bashd mcp-bashd\n")
	return b.String()
}

func fishCompletion(flags map[string][]string) string {
	var b strings.Builder
	b.WriteString("# mcp-bashd completion for fish (mcp-bashd completion fish)\n")
	all := append([]string{"help"}, commands...)
	fmt.Fprintf(&b, "complete -c mcp-bashd -n '__fish_use_subcommand' -a '%s'\n", strings.Join(all, " "))
	for _, f := range flags[""] {
		fmt.Fprintf(&b, "complete -c mcp-bashd -n 'not __fish_seen_subcommand_from %s' -l %s\n", strings.Join(all, " "), strings.TrimPrefix(f, "--"))
	}
	for _, cmd := range []string{"tools", "call", "check", "new"} {
		for _, f := range flags[cmd] {
			fmt.Fprintf(&b, "complete -c mcp-bashd -n '__fish_seen_subcommand_from %s' -l %s\n", cmd, strings.TrimPrefix(f, "--"))
		}
	}
	fmt.Fprintf(&b, "complete -c mcp-bashd -n '__fish_seen_subcommand_from help' -f -a '%s'\n", strings.Join(commands, " "))
	b.WriteString("complete -c mcp-bashd -n '__fish_seen_subcommand_from completion' -f -a 'bash zsh fish'\n")
	return b.String()
}
