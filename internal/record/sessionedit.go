package record

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/cloudwego/eino/adk"

	"github.com/baton-dev/baton/traces"
)

// editSession writes value under the key of s, a session stop the run was held at, as it was
// continued: decoded as the value written there was (its Go type, so that the agents reading it
// read it as they would have). It returns the session.set that records it, by the agent that
// wrote the first one, or why it could not, for the continued event to say. Callers hold r.mu.
func (r *Recorder) editSession(ctx context.Context, v *visit, s Stop, value json.RawMessage) (*traces.Event, error) {
	was, ok := adk.GetSessionValue(ctx, s.Target)
	if !ok {
		return nil, fmt.Errorf("the run's session no longer holds %s", s.Target)
	}
	now, err := decodeLike(was, value)
	if err != nil {
		return nil, err
	}
	adk.AddSessionValue(ctx, s.Target, now)
	js, _ := r.session.changedValue(s.Target, now) // seen: not recorded again as the agent's write
	if js == "" {
		js = jsonValue(now)
	}
	path := r.out.lastPath
	if v != nil {
		path = v.path
	}
	return &traces.Event{Kind: traces.KindSessionSet, Agent: s.Agent, RunPath: path,
		Session: &traces.SessionSet{Key: s.Target, Value: json.RawMessage(js), SetBy: s.Agent}}, nil
}

// decodeLike decodes value into a value of was's type; any JSON for a nil was.
func decodeLike(was any, value json.RawMessage) (any, error) {
	if was == nil {
		var out any
		return out, json.Unmarshal(value, &out)
	}
	t := reflect.TypeOf(was)
	p := reflect.New(t)
	if err := json.Unmarshal(value, p.Interface()); err != nil {
		return nil, fmt.Errorf("not a %s: %v", t, err)
	}
	return p.Elem().Interface(), nil
}
