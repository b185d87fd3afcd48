package attach

import (
	"context"
	"reflect"
	"sync"

	"github.com/cloudwego/eino/adk"
)

// runIdentity returns a number that is the same for every agent of one eino run and differs
// between runs going on at once, or 0 when it cannot be read.
//
// It is the address of the run's session, which eino creates once per run and shares with every
// agent of it (transfer targets included, whose context carries nothing a handler put there).
// eino exports no run id, so the session is read from eino's run context by reflection: the
// context key's type is found once, on a context that holds it, then looked up like any key. A
// later eino that renames these makes runIdentity return 0, and the recorder then falls back on
// the latest run (exact unless runs with transfers overlap); a test pins the v0.9.21 behaviour.
func runIdentity(ctx context.Context) uintptr {
	session := runContextField(ctx, "Session")
	if session.Kind() != reflect.Pointer || session.IsNil() {
		return 0
	}
	return session.Pointer()
}

// einoRunPath returns eino's run path in ctx: inside an agent's start callback, the path eino
// puts on that agent's own events (in a sequence, the steps before it; inside the prebuilt
// supervisor, its name twice), or nil when it cannot be read. Inside an AgentTool it is the
// callee's run alone: eino prefixes it with the caller's path when it forwards the events.
func einoRunPath(ctx context.Context) []string {
	f := runContextField(ctx, "RunPath")
	if !f.IsValid() {
		return nil
	}
	steps, ok := f.Interface().([]adk.RunStep)
	if !ok || len(steps) == 0 {
		return nil
	}
	return runPathOf(steps)
}

// runContextField returns the named exported field of eino's run context in ctx, or the zero
// Value.
func runContextField(ctx context.Context, name string) reflect.Value {
	key := runCtxKey(ctx)
	if key == nil {
		return reflect.Value{}
	}
	rc := reflect.ValueOf(ctx.Value(key))
	if rc.Kind() != reflect.Pointer || rc.IsNil() || rc.Elem().Kind() != reflect.Struct {
		return reflect.Value{}
	}
	f := rc.Elem().FieldByName(name)
	if !f.IsValid() || !f.CanInterface() {
		return reflect.Value{}
	}
	return f
}

var (
	keyMu  sync.Mutex
	ctxKey any // eino's run-context key, once found
)

// runCtxKey returns eino's run-context key, searching ctx's chain for it the first time.
func runCtxKey(ctx context.Context) any {
	keyMu.Lock()
	defer keyMu.Unlock()
	if ctxKey == nil {
		if t := findKeyType(reflect.ValueOf(ctx), 0); t != nil {
			ctxKey = reflect.Zero(t).Interface()
		}
	}
	return ctxKey
}

// findKeyType walks a context chain (value contexts hold a key and a parent) for a key of type
// adk.runCtxKey.
func findKeyType(v reflect.Value, depth int) reflect.Type {
	for ; depth < 256 && v.IsValid(); depth++ {
		for v.Kind() == reflect.Interface || v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return nil
			}
			v = v.Elem()
		}
		if v.Kind() != reflect.Struct {
			return nil
		}
		if k := v.FieldByName("key"); k.IsValid() && k.Kind() == reflect.Interface && !k.IsNil() {
			if t := k.Elem().Type(); t.Name() == "runCtxKey" && t.PkgPath() == "github.com/cloudwego/eino/adk" {
				return t
			}
		}
		v = parentOf(v)
	}
	return nil
}

// parentOf returns the parent context held by a context struct: its embedded or named
// context.Context field, looking into embedded structs (a timer context embeds a cancel context).
func parentOf(v reflect.Value) reflect.Value {
	ctxType := reflect.TypeFor[context.Context]()
	for i := range v.NumField() {
		f, ft := v.Field(i), v.Type().Field(i)
		switch {
		case ft.Type == ctxType:
			return f
		case ft.Anonymous && ft.Type.Kind() == reflect.Struct:
			if p := parentOf(f); p.IsValid() {
				return p
			}
		case ft.Anonymous && ft.Type.Kind() == reflect.Pointer && ft.Type.Elem().Kind() == reflect.Struct && !f.IsNil():
			if p := parentOf(f.Elem()); p.IsValid() {
				return p
			}
		}
	}
	return reflect.Value{}
}
