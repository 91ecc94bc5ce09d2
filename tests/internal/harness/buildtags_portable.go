//go:build portable

package harness

// buildTags are the tags the daemon under test is built with: this test
// binary's own (the portable build: the POSIX process logic macOS runs,
// here on Linux).
const buildTags = "portable"
