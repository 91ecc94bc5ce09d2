package mcp

import (
	"encoding/base64"
	"unicode/utf8"

	"github.com/mcp-bashd/mcp-bashd/rpc/wire"
)

// body is a tool result assembled from parts that are rendered only when
// the line carrying it is written (it is a wire.Body): JSON text the server
// wrote, strings escaped as jq escapes them, bytes in base64. Its length is
// known as it is built, so the line is allocated once at its final size:
// a tool's output of megabytes is held once as the tool wrote it and once
// as the line, never escaped into a buffer of its own first.
type body struct {
	parts []part
	n     int // rendered length
}

type partKind uint8

const (
	partJSON   partKind = iota // raw: JSON text, written as is
	partString                 // text: a string's body (no quotes), escaped
	partBase64                 // raw: bytes, base64-encoded
)

type part struct {
	kind partKind
	raw  []byte
	text string
}

// json appends JSON text the server wrote.
func (b *body) json(s string) { b.jsonBytes([]byte(s)) }

func (b *body) jsonBytes(p []byte) {
	b.parts = append(b.parts, part{kind: partJSON, raw: p})
	b.n += len(p)
}

// textBody appends s as (part of) the body of a JSON string, no quotes.
func (b *body) textBody(s string) {
	b.parts = append(b.parts, part{kind: partString, text: s})
	b.n += wire.StringBodyLen(s)
}

// str appends s as a JSON string.
func (b *body) str(s string) {
	b.json(`"`)
	b.textBody(s)
	b.json(`"`)
}

// base64 appends p as a JSON string of its base64 encoding.
func (b *body) base64(p []byte) {
	b.json(`"`)
	b.parts = append(b.parts, part{kind: partBase64, raw: p})
	b.n += base64.StdEncoding.EncodedLen(len(p))
	b.json(`"`)
}

// Len is the rendered length (wire.Body).
func (b *body) Len() int { return b.n }

// AppendTo renders the body (wire.Body).
func (b *body) AppendTo(dst []byte) []byte {
	for _, p := range b.parts {
		switch p.kind {
		case partJSON:
			dst = append(dst, p.raw...)
		case partString:
			dst = wire.AppendStringBody(dst, p.text)
		case partBase64:
			dst = base64.StdEncoding.AppendEncode(dst, p.raw)
		}
	}
	return dst
}

// validUTF8 says whether the rendered body is valid UTF-8: strings are
// repaired as they are escaped and base64 is ASCII, so only JSON a tool
// wrote (structuredContent) can make it invalid.
func (b *body) validUTF8() bool {
	for _, p := range b.parts {
		if p.kind == partJSON && !utf8.Valid(p.raw) {
			return false
		}
	}
	return true
}

// insertMembers adds members (`"k":v,...`, no braces) to the object the
// body is, before its closing brace.
func (b *body) insertMembers(members []byte) {
	if len(members) == 0 {
		return
	}
	last := b.parts[len(b.parts)-1] // the closing brace, as every result here ends
	b.parts = append(b.parts[:len(b.parts)-1], part{kind: partJSON, raw: []byte(",")}, part{kind: partJSON, raw: members}, last)
	b.n += 1 + len(members)
}
