package supervisor

import (
	"strings"
	"testing"
)

// Nested paths stop at the budget, and the catch-all then says so (3)
// instead of "absent" (1); the top level is always whole.
func TestArgValuesBudget(t *testing.T) {
	small := string(argValues([]byte(`{"a":{"b":"c"}}`)))
	if !strings.Contains(small, `'a.b') __mcpbashd_v='sc' ;;`) || !strings.HasSuffix(small, "*) return 1 ;; esac; }\n") {
		t.Fatalf("small arguments: %q", small)
	}
	// Deep nesting: every level repeats what is below it.
	deep := `"` + strings.Repeat("x", 1<<20) + `"`
	for i := 0; i < 12; i++ {
		deep = `{"k":` + deep + `}`
	}
	big := string(argValues([]byte(`{"top":` + deep + `}`)))
	if !strings.HasPrefix(big, "__mcpbashd_av() { case $1 in\n'top') __mcpbashd_v='o{") || !strings.HasSuffix(big, "*) return 3 ;; esac; }\n") {
		t.Fatalf("large arguments: %d bytes, ending %q", len(big), big[len(big)-40:])
	}
	if len(big) > 4*len(deep)+3<<20 {
		t.Fatalf("values file of %d bytes for %d bytes of arguments", len(big), len(deep))
	}
	if got := string(argValues([]byte(`{"a\u0000b":{"c":1},"ok":"x"}`))); strings.IndexByte(got, 0) >= 0 || !strings.Contains(got, `'ok') __mcpbashd_v='sx' ;;`) {
		t.Fatalf("a key holding NUL: %q", got)
	}
	if got := string(argValues([]byte(`[1,2]`))); got != "__mcpbashd_av() { return 1; }\n" {
		t.Fatalf("arguments that are not an object: %q", got)
	}
}
