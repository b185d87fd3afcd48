// Package realapps is Baton's real-app suite: eino ADK apps written as users write them, one per
// shape users build, and the tests that hold package attach to its promise on them. It is
// Baton's own, not supported API.
//
// The shapes: a streaming ChatModelAgent root whose app reads each streamed message itself, a
// non-streaming root with a model-chosen transfer, Sequential, Loop (broken by a tool) and
// Parallel roots, eino's prebuilt supervisor ending with exit, a supervisor inside a supervisor,
// plan-execute, an approval inside a supervisor's sub-agent, one inside a Sequential root's step
// and one inside an agent called as a tool (all resumed at once with ResumeWithParams, on an
// in-memory checkpoint store), a deep agent delegating through its task tool, and a streaming
// agent whose tool results middlewares rewrite (eino's reduction cutting one short, the app's own
// turning an error into a result). Several ask more than one query of one Runner. The project's
// scripted models drive the real eino machinery: no network, no key.
//
// The promise the tests check, for every shape and every one-line idiom (attach.Option() on each
// Query and ResumeWithParams, callbacks.AppendGlobalHandlers(attach.Handler()) once at start,
// and (*attach.Baton).Run where the app does not resume): each app runs in a process of its own
// that exits right after its last event, with no Close and no deferred cleanup, attached to a
// real Baton server; and Baton then holds, for each query, exactly one run that
//   - tells every message, tool result, transfer, exit, loop break, interrupt and error of the
//     Runner's stream, by the same agent at the same run path, in the stream's order (concurrent
//     branches of a parallel root in either), and nothing more by those agents
//     (agents run as tools, which the stream does not show, may tell more); an interrupt, which
//     eino reports once for the whole run, is told once, with its id, by whichever agent Baton
//     places it at;
//   - ends as the app's stream ended: completed, or interrupted and then completed for a resume
//     (one run, the resumed part joined to it), when the app saw it end;
//   - shows the stream's last message, by its agent, as the final answer (or, for a parallel
//     root, the last message of a branch that ran at once with it);
//   - counts the model calls of each agent and the calls of each of the app's tools as the app's
//     own models and tools counted them;
//
// and the app's events and time are those it has without Baton (no stall: at most a second more
// from its first query to its last event).
//
// Each app prints what it saw (see Journal) as it goes, line by line, as apps print events, and so
// has nothing left to do after its last event but exit.
package realapps
