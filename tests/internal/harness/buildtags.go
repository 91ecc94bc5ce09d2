//go:build !portable

package harness

// buildTags are the tags the daemon under test is built with: this test
// binary's own.
const buildTags = ""
