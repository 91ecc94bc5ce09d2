//go:build !linux

package stdio

import "os"

// watchHangup has no portable way to learn that the reader went away
// without writing; elsewhere the next write's EPIPE is how it is noticed.
func watchHangup(*os.File, func()) {}
