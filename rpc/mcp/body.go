package mcp

import (
	"encoding/base64"
	"unicode/utf8"

	"github.com/mcp-bashd/mcp-bashd/rpc/wire"
	"github.com/mcp-bashd/mcp-bashd/supervisor"
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

// The content encoder: every content item the server writes — a tool
// result's content, a prompt message's content, a resource's contents —
// is written here, so each shape is spelled once.

// contentItem appends one ContentBlock: text, image or audio, or an
// embedded text resource (what the shim's content helpers make); false
// for a kind that is no ContentBlock (blob, notfound), nothing written.
func (b *body) contentItem(it supervisor.Item) bool {
	switch it.Kind {
	case "text", "image", "audio", "resource":
	default:
		return false
	}
	b.json(`{"type":"` + it.Kind + `",`)
	switch it.Kind {
	case "text":
		b.json(`"text":`)
		b.str(it.Text)
	case "image", "audio":
		b.json(`"data":`)
		b.base64(it.Data)
		b.json(`,"mimeType":`)
		b.str(it.MIME)
	case "resource":
		b.json(`"resource":`)
		b.resourceText(it.URI, it.MIME, true, it.Text)
	}
	b.json("}")
	return true
}

// resourceText appends text ResourceContents; mimeType is left out when
// empty unless always (an embedded resource carries it as written).
func (b *body) resourceText(uri, mime string, always bool, text string) {
	b.resourceEntry(uri, mime, always)
	b.json(`,"text":`)
	b.str(text)
	b.json("}")
}

// resourceBlob appends blob ResourceContents: data in base64.
func (b *body) resourceBlob(uri, mime string, data []byte) {
	b.resourceEntry(uri, mime, false)
	b.json(`,"blob":`)
	b.base64(data)
	b.json("}")
}

func (b *body) resourceEntry(uri, mime string, always bool) {
	b.json(`{"uri":`)
	b.str(uri)
	if mime != "" || always {
		b.json(`,"mimeType":`)
		b.str(mime)
	}
}
