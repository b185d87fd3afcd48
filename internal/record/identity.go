package record

import (
	"context"
	"reflect"
	"sync"
	"sync/atomic"
	"unsafe"

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
	ctxKey atomic.Pointer[any] // eino's run-context key, once found
)

// runCtxKey returns eino's run-context key, searching ctx's chain for it the first time.
func runCtxKey(ctx context.Context) any {
	if k := ctxKey.Load(); k != nil {
		return *k
	}
	keyMu.Lock()
	defer keyMu.Unlock()
	if k := ctxKey.Load(); k != nil {
		return *k
	}
	if t := findKeyType(reflect.ValueOf(ctx), 0); t != nil {
		k := reflect.Zero(t).Interface()
		ctxKey.Store(&k)
		return k
	}
	return nil
}

// sessionFields is where eino's run context keeps the session, and the session its values and
// their lock: field indexes, found once by name.
type sessionFields struct {
	runCtx  reflect.Type // eino's run context, a struct
	session int          // its Session field, a pointer to the session struct
	values  int          // the session's Values field, a map[string]any
	lock    int          // the session's valuesMtx field, the *sync.Mutex eino guards Values with
}

var sessionLayout atomic.Pointer[sessionFields]

// sessionValues returns the session values of eino's run in ctx to be read in place, and the
// lock eino guards them with, which the caller holds while it reads them. When they cannot be
// reached so (no session in ctx, or a later eino that renames these fields), it returns a copy
// of them (adk.GetSessionValues) and no lock. adk.GetSessionValues copies the map at every call,
// and the recorder looks at the session after every tool call, where nothing changed but rarely.
func sessionValues(ctx context.Context) (map[string]any, *sync.Mutex) {
	if key := runCtxKey(ctx); key != nil {
		rc := reflect.ValueOf(ctx.Value(key))
		if rc.Kind() == reflect.Pointer && !rc.IsNil() && rc.Type().Elem().Kind() == reflect.Struct {
			rc = rc.Elem()
			if f := sessionFieldsOf(rc.Type()); f != nil {
				if s := rc.Field(f.session); !s.IsNil() {
					s = s.Elem()
					values, _ := s.Field(f.values).Interface().(map[string]any)
					mu := (*sync.Mutex)(unsafe.Pointer(s.Field(f.lock).Pointer()))
					if values != nil && mu != nil {
						return values, mu
					}
				}
			}
		}
	}
	return adk.GetSessionValues(ctx), nil
}

// sessionFieldsOf returns the session's fields in run contexts of type runCtx, or nil when they
// are not as in eino v0.9.21.
func sessionFieldsOf(runCtx reflect.Type) *sessionFields {
	if f := sessionLayout.Load(); f != nil && f.runCtx == runCtx {
		return f
	}
	sf, ok := runCtx.FieldByName("Session")
	if !ok || !sf.IsExported() || sf.Type.Kind() != reflect.Pointer || sf.Type.Elem().Kind() != reflect.Struct {
		return nil
	}
	values, ok1 := sf.Type.Elem().FieldByName("Values")
	lock, ok2 := sf.Type.Elem().FieldByName("valuesMtx")
	if !ok1 || !ok2 || values.Type != reflect.TypeFor[map[string]any]() || lock.Type != reflect.TypeFor[*sync.Mutex]() ||
		len(sf.Index) != 1 || len(values.Index) != 1 || len(lock.Index) != 1 {
		return nil
	}
	f := &sessionFields{runCtx: runCtx, session: sf.Index[0], values: values.Index[0], lock: lock.Index[0]}
	sessionLayout.Store(f)
	return f
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
