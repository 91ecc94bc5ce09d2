//go:build !portable

package tests

// buildTags are the tags the daemon under test is built with: this test
// binary's own.
const buildTags = ""
