package mcp

import (
	"sort"
	"strings"
	"testing"
)

// The method table answers "which methods does era X have, and which of
// them run bash" from one place: this is that answer, pinned.
func TestMethodTableByEra(t *testing.T) {
	var legacy, modern, bash []string
	for _, m := range Methods() {
		if m.Legacy {
			legacy = append(legacy, m.Name)
		}
		if m.Modern {
			modern = append(modern, m.Name)
		}
		if m.RunsBash {
			bash = append(bash, m.Name)
		}
	}
	for _, l := range [][]string{legacy, modern, bash} {
		sort.Strings(l)
	}
	want := map[string]string{
		"legacy": "completion/complete initialize logging/setLevel ping prompts/get prompts/list resources/list resources/read resources/subscribe resources/templates/list resources/unsubscribe tasks/cancel tasks/get tasks/list tasks/result tools/call tools/list",
		"modern": "completion/complete prompts/get prompts/list resources/list resources/read resources/templates/list server/discover subscriptions/listen tasks/cancel tasks/get tasks/update tools/call tools/list",
		"bash":   "completion/complete prompts/get resources/read tools/call",
	}
	for name, got := range map[string][]string{"legacy": legacy, "modern": modern, "bash": bash} {
		if g := strings.Join(got, " "); g != want[name] {
			t.Errorf("%s methods:\n got %s\nwant %s", name, g, want[name])
		}
	}
}

// Admission: when every slot is kept by an answer a batch has not
// written, a batch member waiting for a slot is refused (it would wait
// for its own batch), while any other waiter keeps waiting; a freed slot
// goes to the oldest waiter.
func TestAdmissionRefusesBatchWaitersWhenAnswersHoldEverySlot(t *testing.T) {
	st := flightState{slots: 2, maxPending: 8}
	plain := &slotWait{ch: make(chan bool, 1)}
	batch := &slotWait{ch: make(chan bool, 1), batch: true}
	st.used, st.held = 2, 1
	st.queue = []*slotWait{plain, batch}
	st.settle()
	if len(st.queue) != 2 {
		t.Fatalf("with one slot still running, %d waiters left, want both waiting", len(st.queue))
	}
	st.held = 2
	st.settle()
	if len(st.queue) != 1 || st.queue[0] != plain {
		t.Fatalf("every slot held by batch answers: queue %v, want the plain waiter only", st.queue)
	}
	if ok := <-batch.ch; ok {
		t.Error("the batch member was granted a slot, want refused")
	}
	st.used, st.held = 1, 1
	st.settle()
	if ok := <-plain.ch; !ok || st.used != 2 || len(st.queue) != 0 {
		t.Errorf("a freed slot: granted %v, used %d, queue %d; want the plain waiter granted", ok, st.used, len(st.queue))
	}
}
