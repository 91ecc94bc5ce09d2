package supervisor

// TEMPORARY (h15b): the shared ask interface until h15a-asks is merged.

import (
	"context"
	"encoding/json"
	"errors"
)

type AskItem struct {
	Key, Method string
	Params      json.RawMessage
}

var ErrEndCall = errors.New("the call ends here")

type askStub = func(ctx context.Context, reqs []AskItem) ([]json.RawMessage, error)
