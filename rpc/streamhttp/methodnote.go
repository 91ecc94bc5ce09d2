package streamhttp

import (
	"context"
	"net/http"
)

// The access log sits outside the handler and sees only the request's
// headers; the JSON-RPC method is in the body, which the handler reads.
// WithMethodNote gives a request a note the handler fills in once it has
// parsed the body, for the access log to read after ServeHTTP.

type methodNoteKey struct{}

// WithMethodNote returns r carrying a note, and the note: after the
// handler served r it holds the request's JSON-RPC method ("" when the
// body was not read or not a request: a GET, a rejection, a client's
// response; "batch" for a JSON-RPC batch).
func WithMethodNote(r *http.Request) (*http.Request, *string) {
	note := new(string)
	return r.WithContext(context.WithValue(r.Context(), methodNoteKey{}, note)), note
}

// noteMethod fills r's note, when it has one.
func noteMethod(r *http.Request, method string) {
	if note, ok := r.Context().Value(methodNoteKey{}).(*string); ok {
		*note = method
	}
}
