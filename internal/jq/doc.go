// Package jq reads and prints JSON values exactly as jq 1.7 does. The daemon
// promises byte-exact compatibility with a bash SDK that passed every JSON
// value through jq 1.7, so every place that prints JSON in jq's manner goes
// through this one package; a fix made here reaches all of them.
//
// # What it owns
//
//   - Numbers: a literal printed as jq/decNumber prints it (Number): 1e2 is
//     1E+2, 1.50 stays 1.50, 100e-2 is 1.00, 1e-7 is 1E-7, -0 stays -0,
//     exponents clamped and rounded to decNumber's range as jq's context
//     sets it, and a value past that range printed as DBL_MAX the way jq's
//     dtoa prints it.
//   - Strings: jq's escapes (AppendString, AppendStringBody): \" \\ \b \f
//     \n \r \t, \u00xx for the other control characters and DEL, everything
//     else literal ("<", "/", U+2028 included); and jq's repair of invalid
//     UTF-8 (ValidUTF8): one U+FFFD for each bad sequence as jq's decoder
//     delimits it (a bad lead or stray continuation byte, a sequence cut
//     short, an overlong, surrogate or out-of-range one), not Go's one per
//     byte.
//   - Values: an ordered tree (Value) as jq holds one: object members in
//     first-seen order, a repeated key kept at its first position with its
//     last value. It is read from bytes the way jq's parser reads them
//     (Scan, Parse, Members), with the nesting bounded by MaxDepth on the
//     heap rather than the goroutine stack, and printed compact (jq -c) or
//     indented (jq's default), or in jq -r's raw form (Append, Raw).
//
// What a caller's SDK did with those texts (which fields it read, how often
// a value went through jq, which gate answered what) belongs to the caller.
//
// # Dependencies
//
// The standard library only. It must never import a package of this module:
// it sits below everything that prints JSON, and anything it imported would
// be unable to use it.
//
// # Checked against jq
//
// jq_test.go compares every rule above with the output of a real jq 1.7
// binary when one is on PATH, and with a golden table produced by jq 1.7
// when none is.
package jq
