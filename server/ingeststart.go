package server

import (
	"cmp"
	"fmt"
	"time"

	"github.com/baton-dev/baton/traces"
)

// Opening a session: a new run, the resume of an interrupted one, or a run going on after the
// server lost its session. Who may open one is in ingestgate.go.

// ingestStart is what an app says of a run when it starts streaming it.
type ingestStart struct {
	Run struct {
		Flow         string `json:"flow"`
		Input        string `json:"input"`
		Model        string `json:"model"`
		Conversation string `json:"conversation"`
	} `json:"run"`
	Agents []traces.Agent `json:"agents"`
	// Resumes is the id of the interrupt the run resumes, when it does.
	Resumes string `json:"resumes"`
	// Continues is the id of a run the app goes on sending after the server lost its session.
	Continues string `json:"continues"`
	// Key is the app's own id of the run, so that a start sent again because its answer was
	// lost gets the session the first one opened, not a second run.
	Key string `json:"key"`
	// ForkedFrom is, for an app's run that carries out a fork (BATON_FORK), the run and the
	// model call it forks: the run records it and joins that run's conversation.
	ForkedFrom *traces.ForkOrigin `json:"forked_from"`
	// Holdable says the app's agents carry attach.Middleware: the run can be held from its start,
	// and its page offers breakpoints before the app's first poll.
	Holdable bool `json:"holdable"`

	secret string // the request's runSecretHeader, which a continue shows
}

// start opens a session for client: on the run req.Continues names (see continueRun), or on the
// interrupted run whose last interrupt is req.Resumes, reopened (reopened is true then), or else
// on a new running run registered in the broker at once. A start whose key has an open session
// gets that session again. A run still streamed whose last interrupt req.Resumes is, is ended
// first (see endStopped), once the start holds the interrupt's claim. A new session takes a place
// among the bounded ones (see reserve). What may wait (the store, the end of the writer of a
// run's part before) is done outside in.mu, the key, interrupt and run it joins claimed meanwhile:
// no start holds another client's requests.
func (in *ingestion) start(req ingestStart, client string) (run *ingestRun, reopened bool, err error) {
	if req.Resumes != "" && req.Continues != "" {
		return nil, false, traces.Errorf(traces.CodeInvalid, "a run either resumes an interrupt or continues a run, not both")
	}
	if req.ForkedFrom != nil && (req.Resumes != "" || req.Continues != "") {
		return nil, false, traces.Errorf(traces.CodeInvalid, "forked_from is for a new run, which neither resumes an interrupt nor continues a run")
	}
	in.mu.Lock()
	if in.closed || in.ctx.Err() != nil {
		in.mu.Unlock()
		return nil, false, errShuttingDown
	}
	if r := in.keys[req.Key]; req.Key != "" && r != nil {
		in.mu.Unlock()
		return r, r.start != startsRun, nil
	}
	if err := in.reserve(client); err != nil {
		in.mu.Unlock()
		return nil, false, err
	}
	o := opening{client: client, key: req.Key, resumes: req.Resumes, secret: req.secret}
	if err := in.claim(o); err != nil {
		in.release(client)
		in.mu.Unlock()
		return nil, false, err
	}
	in.mu.Unlock()
	in.endStopped(req.Resumes) // only once the start holds its place and the interrupt
	opened := false
	defer func() {
		if !opened {
			in.mu.Lock()
			in.release(client)
			in.unclaim(o)
			in.mu.Unlock()
		}
	}()
	switch {
	case req.Continues != "":
		run, err = in.continueRun(req.Continues, o)
		reopened = true
	case req.Resumes != "":
		run, reopened, err = in.resumeOrStart(req, o)
	default:
		run, err = in.startFresh(req, o)
	}
	if err != nil {
		return nil, false, err
	}
	opened = true
	if reopened { // a new run has them from its start
		putAgents(run.rec, req.Agents)
	}
	return run, reopened, nil
}

// opening is what a start knows of the session it opens.
type opening struct {
	client  string // who opens it (see ingestClient)
	key     string // the app's own id of the run, or ""
	resumes string // the interrupt it resumes, or ""
	secret  string // the secret the request showed, for a continue
	moved   bool   // the run was another server's, which stopped (see takeOver)
}

// resumeOrStart opens a session on the interrupted run whose last interrupt is req.Resumes, when
// there is one and it did not go on from there already, or else on a new run.
func (in *ingestion) resumeOrStart(req ingestStart, o opening) (run *ingestRun, reopened bool, err error) {
	rec, err := in.broker.Interrupted(req.Resumes)
	if err != nil || rec == nil {
		run, err := in.startFresh(req, o)
		return run, false, err
	}
	if resumedIn(rec.Snapshot(), req.Resumes) {
		return nil, false, alreadyResumed(req.Resumes, rec.ID())
	}
	if err := in.join(rec, o, resumesRun); err != nil {
		return nil, false, err
	}
	return in.openClaimed(rec, o, resumesRun)
}

// startFresh opens a session on a new run.
func (in *ingestion) startFresh(req ingestStart, o opening) (*ingestRun, error) {
	run := traces.Run{Flow: req.Run.Flow, Input: req.Run.Input, Model: req.Run.Model, Conversation: req.Run.Conversation}
	if run.Flow == "" {
		run.Flow = "app"
	}
	if run.Conversation == "" {
		// A resumption Baton has not seen the start of still belongs with what it resumes.
		run.Conversation = req.Resumes
	}
	if f := req.ForkedFrom; f != nil {
		// A fork joins its run's conversation, and is named as Baton's own forks are, so that
		// each page links the other (see Server.forksOf).
		orig, err := in.broker.Get(f.Run)
		if err != nil || f.Seq <= 0 {
			return nil, traces.Errorf(traces.CodeInvalid, "forked_from names run %q at #%d, which this Baton does not have: fork a run of this Baton", clip(f.Run, 60), f.Seq)
		}
		o := orig.Run()
		run.Conversation = cmp.Or(o.Conversation, o.ID)
		run.Model = fmt.Sprintf("fork of %s at #%d, then %s", o.ID, f.Seq, cmp.Or(run.Model, "app"))
	}
	rec, err := addFresh(in.broker, func(id string) *traces.Recording {
		run.ID = id
		rec := traces.NewRecording(run, req.Agents)
		if req.ForkedFrom != nil {
			rec.ForkOf(*req.ForkedFrom)
		}
		return rec
	})
	if err != nil {
		return nil, err
	}
	r, _, err := in.openClaimed(rec, o, startsRun)
	return r, err
}

// claimRun says whether run id has an open session or a start already reopening it, and when it has
// neither, claims it for the caller's start (released from in.joining when that start is done).
func (in *ingestion) claimRun(id string) (open, claimed bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	_, open = in.runs[id]
	_, claimed = in.joining[id]
	if !open && !claimed {
		in.joining[id] = struct{}{}
	}
	return open, claimed
}

// join reopens rec, an interrupted run with no session, for a new session: claimed while its
// writer ends (see live.Broker.Resume), so that no other start joins it meanwhile.
func (in *ingestion) join(rec *traces.Recording, o opening, start sessionStart) error {
	id := rec.ID()
	open, claimed := in.claimRun(id)
	switch {
	case open && start == continuesRun:
		return traces.Errorf(traces.CodeConflict, "run %s has an open session: post its events to it", id)
	case (open || claimed) && o.resumes != "":
		return alreadyResumed(o.resumes, id)
	case open || claimed:
		return traces.Errorf(traces.CodeConflict, "run %s is going on in another session: it goes on once", id)
	}
	err := in.broker.Resume(rec)
	if err != nil {
		in.mu.Lock()
		delete(in.joining, id)
		in.mu.Unlock()
		switch {
		case traces.ErrorCode(err) == traces.CodeConflict && o.resumes != "":
			return alreadyResumed(o.resumes, id) // it went on meanwhile
		case traces.ErrorCode(err) == traces.CodeConflict:
			return err
		}
		return fmt.Errorf("reopen run %s: %w", id, err)
	}
	return nil
}

// openClaimed opens the session on rec, joined (see join) or new, and lets go of its claims. The
// session's secret is hashed into the store before anyone holds the secret, so that after a
// restart only its holder goes on with the run (see continueRun); not under in.mu, as a store may
// wait. A run whose session the store cannot record ends interrupted, saying so.
func (in *ingestion) openClaimed(rec *traces.Recording, o opening, start sessionStart) (*ingestRun, bool, error) {
	secret := newSecret()
	unkept := in.broker.SetSessionHash(rec.ID(), secretHash(secret))
	in.mu.Lock()
	defer in.mu.Unlock()
	delete(in.joining, rec.ID())
	shut := in.closed || in.ctx.Err() != nil // it shut down while the run was being joined or added
	why := "Baton shut down while the app was sending this run"
	if unkept != nil {
		why = "Baton could not record the app's session in its store: " + traces.ErrorMessage(unkept)
	}
	switch start {
	case continuesRun:
		rec.Emit(traces.Event{Kind: traces.KindResumed, Interrupt: &traces.Interrupt{Info: continuedInfo}})
	case resumesRun:
		if shut || unkept != nil { // only resumed may follow an interrupted end
			rec.Emit(traces.Event{Kind: traces.KindResumed, Interrupt: &traces.Interrupt{ID: o.resumes, Info: why}})
		}
	}
	switch {
	case unkept != nil: // the caller lets go of the claims
		rec.Finish(traces.StatusInterrupted, why)
		return nil, false, fmt.Errorf("record the session of run %s: %w", rec.ID(), unkept)
	case shut:
		rec.Finish(traces.StatusInterrupted, why)
		return nil, false, errShuttingDown
	}
	in.unclaim(o)
	return in.open(rec, o, start, secret), start != startsRun, nil
}

// endStopped ends the session still open on a run whose last interrupt is id (none when id is
// ""), posted or foreseen in the app's ending: the resume of that interrupt proves the run stopped
// there, though its end has not come. An app that exits right after its last event may leave its
// run's end unsent, and another process resume it at once; the resume then goes on in the same
// run (see resumeOrStart), not in a run of its own. It does so at once, ending the run as the watcher
// would once the app went quiet: the resuming app may exit as soon as its own part ends. (An app
// still sending the first part would find its session over.)
func (in *ingestion) endStopped(id string) {
	if id == "" {
		return
	}
	in.mu.Lock()
	open := make([]*ingestRun, 0, len(in.runs))
	for _, r := range in.runs {
		open = append(open, r)
	}
	in.mu.Unlock()
	// A session's lock is taken before in.mu (see endLocked), so never while holding it.
	for _, r := range open {
		r.endIfStopped(id)
	}
}

// endIfStopped ends the session when it is open on a run whose last interrupt is id: as its
// ending says, or else interrupted at its last event.
func (r *ingestRun) endIfStopped(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.over != stillOpen || r.stoppedAt != id && !r.ending.foresees(id) {
		return
	}
	if r.ending != nil {
		r.endAsSaidLocked()
		return
	}
	at := r.lastEvent
	if at.IsZero() {
		at = r.lastHeard()
	}
	r.endLocked(endedByMark, at, traces.StatusInterrupted, "")
}

func putAgents(rec *traces.Recording, agents []traces.Agent) {
	for _, a := range agents {
		rec.PutAgent(a)
	}
}

// continuedInfo says, in the resumed event that joins the two parts, why a run went on after the
// server had ended it.
const continuedInfo = "the app came back: Baton had ended the run while it was not hearing from it (a stall, " +
	"a lost connection or a restart of Baton); the run goes on"

// continueRun reopens run id for an app whose session the server no longer has (it restarted,
// or forgot the session) while the app's run went on. The run must have ended interrupted, as
// the server ends a run it stops hearing from, and have no open session; the request must show
// the secret of the run's last session, whose hash the store keeps (see openClaimed), so this
// holds across restarts. A resumed event says why the run goes on, and the new session counts the
// app's events from 1.
func (in *ingestion) continueRun(id string, o opening) (*ingestRun, error) {
	rec, err := in.broker.Get(id)
	if err != nil {
		return nil, err
	}
	hash, err := in.broker.SessionHash(id)
	if err != nil {
		return nil, fmt.Errorf("read the session of run %s: %w", id, err)
	}
	if hash == nil { // Baton ran it, it was imported, or it is older than the store's hashes
		return nil, traces.Errorf(traces.CodeConflict, "run %s was not streamed by an app, or by one this Baton knows of: "+
			"no app may go on with it; start a new run with POST /api/ingest", id)
	}
	if !provesSession(o.secret, hash) {
		return nil, forbidden(id)
	}
	switch st := rec.Run().Status; st {
	case traces.StatusRunning:
		return in.takeOver(rec, o)
	case traces.StatusInterrupted:
	default:
		return nil, traces.Errorf(traces.CodeConflict, "run %s ended %s and cannot go on: only a run that ended interrupted does", id, st)
	}
	if err := in.join(rec, o, continuesRun); err != nil {
		return nil, err
	}
	r, _, err := in.openClaimed(rec, o, continuesRun)
	return r, err
}

// takeOver opens a session on running run rec, which another server sharing the database was
// recording until it stopped: the run becomes this server's (live.Broker.TakeOver) from the last
// event the database has, which the session's answer names (ingestCreated.After) for the app to
// send what follows. While that server is alive, the app is told to retry (see notStreamedHere).
func (in *ingestion) takeOver(rec *traces.Recording, o opening) (*ingestRun, error) {
	id := rec.ID()
	open, claimed := in.claimRun(id)
	switch {
	case open:
		return nil, traces.Errorf(traces.CodeConflict, "run %s has an open session: post its events to it", id)
	case claimed:
		return nil, traces.Errorf(traces.CodeConflict, "run %s is going on in another session: it goes on once", id)
	}
	taken, err := in.broker.TakeOver(id)
	if err != nil || taken == nil {
		in.mu.Lock()
		delete(in.joining, id)
		in.mu.Unlock()
		if err != nil {
			return nil, fmt.Errorf("take run %s over: %w", id, err)
		}
		return nil, in.notStreamedHere(id)
	}
	start := takesOverRun
	if len(taken.Snapshot().Events) == 0 {
		start = startsRun // its server stopped before writing run.started: the app sends it again
	}
	o.moved = true
	r, _, err := in.openClaimed(taken, o, start)
	return r, err
}

// open registers a new session on rec, which starts as start says, with secret, in the place
// o.client reserved, and starts its watcher. The caller holds in.mu.
func (in *ingestion) open(rec *traces.Recording, o opening, start sessionStart, secret string) *ingestRun {
	run := &ingestRun{in: in, rec: rec, resumes: o.resumes, start: start, key: o.key, client: o.client, secret: secret,
		after: int64(len(rec.Snapshot().Events)), moved: o.moved, next: 1, dec: traces.NewEventDecoder(), last: time.Now(), ended: make(chan struct{}), poke: make(chan struct{}, 1)}
	run.heard.Store(run.last.UnixNano())
	in.ended.remove(rec.ID())
	in.runs[rec.ID()] = run
	if o.key != "" {
		in.keys[o.key] = run
	}
	if o.resumes != "" {
		in.resumed[o.resumes] = run
	}
	if in.export != nil {
		in.export(rec)
	}
	in.wg.Add(1)
	go in.watch(run, run.ended)
	return run
}
