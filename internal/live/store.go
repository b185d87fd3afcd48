package live

import (
	"slices"
	"strings"

	"github.com/baton-dev/baton/traces"
	"time"
	"unicode/utf8"
)

// Store keeps runs, lists them and searches them: a Broker writes every run it holds into its
// store while the run goes on, reads back from it the runs it no longer holds in memory, and
// leaves every list and search to it. MemoryStore keeps runs for the life of the process,
// internal/sqlite and internal/postgres beyond it; internal/storetest holds them all, and any
// store to come, to this contract.
// Implementations are safe for concurrent use (a database's, also by other processes on it).
// Problems of the caller's making are *traces.Error values (CodeNotFound, CodeInvalid, CodeConflict);
// so are the store's known faults (a full disk, a read-only or damaged database), with
// CodeUnavailable, a message naming the cause and Retry saying whether waiting helps; anything
// else is internal.
type Store interface {
	// Create records a new run with its agents and its events so far, in one transaction; run's
	// Status, EndedAt and Error are what its tally of those events says (Tally.Apply). It fails
	// with CodeConflict when run.ID is taken.
	Create(run traces.Run, tally Tally, agents []traces.Agent, events []traces.Event) error
	// Save records, in one transaction, a created run's metadata and tally as of events, the
	// run's next events in order, and its agents when agents is not nil. Nothing of a failed
	// Save is kept.
	Save(run traces.Run, tally Tally, agents []traces.Agent, events []traces.Event) error
	// Load returns the trace of run id as saved so far.
	Load(id string) (traces.Trace, error)
	// List returns one page of run summaries, the most recently added first (see RunQuery),
	// never nil. A run's summary has the first line of its input (FirstLine) and its tally.
	List(q RunQuery) (RunPage, error)
	// Delete removes run id and its events.
	Delete(id string) error
	// Interrupted returns the id of the newest run that ended interrupted at interruptID (the id
	// of its last interrupted event), or "" when there is none.
	Interrupted(interruptID string) (string, error)
	// SetSessionHash records hash, kept as it is, as what proves who may go on writing run id:
	// the hash of the secret of the latest session that streams it (the server's ingestion),
	// replacing the one before. It fails with CodeNotFound for a run the store does not hold.
	SetSessionHash(id string, hash []byte) error
	// SessionHash returns what SetSessionHash recorded for run id last, nil when nothing was
	// (a run of Baton's own, or imported). It fails with CodeNotFound for an unknown run.
	SessionHash(id string) ([]byte, error)
	// SetNextBreakpoints keeps points (each written as a breakpoint, such as "transfer:billing")
	// for the next runs of flow that apps stream and that opt in, replacing what was kept for
	// flow; none forgets them. They outlast the server's restart.
	SetNextBreakpoints(flow string, points []string) error
	// NextBreakpoints returns what SetNextBreakpoints kept for flow last, nil for none.
	NextBreakpoints(flow string) ([]string, error)
}

// DefaultPageSize and MaxPageSize bound RunQuery.Limit.
const (
	DefaultPageSize = 50
	MaxPageSize     = 500
)

// RunQuery selects runs for a list. Empty fields select everything.
type RunQuery struct {
	Flow         string
	Status       traces.Status
	Conversation string
	// Text, when set, keeps runs whose input or any message contains it, case folded. It needs
	// at least MinSearch characters.
	Text string
	// Findings, when set, keeps runs with handoff findings (RunSummary.Findings > 0).
	Findings bool
	// After is the Next of the previous page, "" for the first page. What it holds is the
	// lister's own business.
	After string
	// Limit is the page size: DefaultPageSize when 0, at most MaxPageSize.
	Limit int
}

// MinSearch is the fewest characters RunQuery.Text may have: shorter text matches too much to
// index.
const MinSearch = 3

// Check validates q and fills in its defaults; problems are *traces.Error with CodeInvalid.
func (q *RunQuery) Check() error {
	if q.Status != "" && !q.Status.Valid() {
		return traces.Errorf(traces.CodeInvalid, "status %q is not one of running, completed, failed, interrupted, canceled", q.Status)
	}
	q.Text = strings.TrimSpace(q.Text)
	if q.Text != "" && utf8.RuneCountInString(q.Text) < MinSearch {
		return traces.Errorf(traces.CodeInvalid, "search text %q is too short: give at least %d characters", q.Text, MinSearch)
	}
	if q.Limit < 0 || q.Limit > MaxPageSize {
		return traces.Errorf(traces.CodeInvalid, "limit %d is not between 1 and %d", q.Limit, MaxPageSize)
	}
	if q.Limit == 0 {
		q.Limit = DefaultPageSize
	}
	return nil
}

// BadCursor is the error for an After that its list did not make.
func BadCursor(after string) error {
	return traces.Errorf(traces.CodeInvalid, "after %q is not a cursor: pass the \"next\" of the previous page as it was given", clip(after, 40))
}

// RunPage is one page of a list of runs, the most recently added first.
type RunPage struct {
	Runs []RunSummary `json:"runs"`
	// Next is the After of the next page, "" on the last one.
	Next string `json:"next,omitempty"`
}

// RunSummary is a run as a list shows it: its metadata, with only the first line of its input,
// and its tally.
type RunSummary struct {
	traces.Run
	Agents    int   `json:"agents"`
	Transfers int   `json:"transfers"`
	Tokens    int   `json:"tokens"`
	Events    int64 `json:"events"`
	Findings  int   `json:"findings"`
	// Usage is the tally's Usage: what prices the run. nil for a run stored before stores kept
	// it (its list shows tokens and no money).
	Usage []ModelTokens `json:"usage,omitempty"`
}

// ModelTokens is the prompt and completion tokens that a run's model calls naming one model
// reported (traces.ModelCall.Name; "" for calls that named none).
type ModelTokens struct {
	Model      string `json:"model,omitempty"`
	Prompt     int    `json:"prompt_tokens"`
	Completion int    `json:"completion_tokens"`
}

// MaxUsageModels bounds the models a tally tells apart: the calls of any model past them count
// under OtherModels, which no price table prices.
const MaxUsageModels = 16

// OtherModels is the model name of the tokens of the models past MaxUsageModels.
const OtherModels = "(other models)"

// maxInputLine bounds the input a summary shows.
const maxInputLine = 200

// FirstLine returns the first non-blank line of s, cut to 200 characters with an ellipsis: the
// input a summary shows.
func FirstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	if utf8.RuneCountInString(s) > maxInputLine {
		s = string([]rune(s)[:maxInputLine-1]) + "…"
	}
	return s
}

// clip cuts s to n bytes for an error message.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// Tally is what a list shows of a run's events, kept up as they are recorded: Add each event in
// order. It also knows how the run stands as of its last event, which is what a store records,
// so that a store never says more than the events it holds.
type Tally struct {
	Agents    int // distinct agents that started
	Transfers int // transfer events
	Tokens    int // total tokens of the model calls
	// Usage splits the calls' prompt and completion tokens by the model each named, in the
	// order the models came; never nil once an event is added. Add changes it in place: a store
	// that keeps it keeps a copy.
	Usage  []ModelTokens
	Events int64 // the last event's seq
	// Status, EndedAt and Error are the run's as of its last event: running until a run.finished,
	// and again after a resumed.
	Status  traces.Status
	EndedAt *time.Time
	Error   string
	// LastInterrupt is the id of the last interrupted event, which a resume names.
	LastInterrupt string
	// Findings is how many handoff bugs the broker's counter (Broker.CountFindings) named when
	// the run last ended; 0 before, and without a counter.
	Findings int

	seen map[string]bool
}

// Add counts e, the event after the last one added.
func (t *Tally) Add(e traces.Event) {
	t.Events = e.Seq
	if t.Status == "" {
		t.Status = traces.StatusRunning
	}
	if t.Usage == nil {
		t.Usage = []ModelTokens{}
	}
	switch {
	case e.Kind == traces.KindAgentStarted && e.Agent != "" && !t.seen[e.Agent]:
		if t.seen == nil {
			t.seen = make(map[string]bool)
		}
		t.seen[e.Agent] = true
		t.Agents++
	case e.Kind == traces.KindTransfer:
		t.Transfers++
	case e.Kind == traces.KindModelFinished && e.Model != nil && e.Model.Usage != nil:
		t.Tokens += e.Model.Usage.TotalTokens
		t.addUsage(e.Model.Name, e.Model.Usage)
	case e.Kind == traces.KindInterrupted && e.Interrupt != nil:
		t.LastInterrupt = e.Interrupt.ID
	case e.Kind == traces.KindResumed:
		t.Status, t.EndedAt, t.Error = traces.StatusRunning, nil, ""
	case e.Kind == traces.KindRunFinished && e.Run != nil:
		at := e.Time
		t.Status, t.EndedAt, t.Error = e.Run.Status, &at, e.Run.Error
	}
}

// addUsage counts u under model.
func (t *Tally) addUsage(model string, u *traces.Usage) {
	i := slices.IndexFunc(t.Usage, func(m ModelTokens) bool { return m.Model == model })
	if i < 0 && len(t.Usage) >= MaxUsageModels {
		model = OtherModels
		i = slices.IndexFunc(t.Usage, func(m ModelTokens) bool { return m.Model == model })
	}
	if i < 0 {
		t.Usage = append(t.Usage, ModelTokens{Model: model})
		i = len(t.Usage) - 1
	}
	t.Usage[i].Prompt += u.PromptTokens
	t.Usage[i].Completion += u.CompletionTokens
}

// Apply returns run with the status, end and error the tally has seen.
func (t *Tally) Apply(run traces.Run) traces.Run {
	run.Status, run.EndedAt, run.Error = t.Status, t.EndedAt, t.Error
	if run.Status == "" {
		run.Status = traces.StatusRunning
	}
	return run
}

// SearchText returns the text of e that a search over runs looks at: a message's content, a
// model's reply, an error. Model inputs are left out: they repeat earlier messages.
func SearchText(e traces.Event) string {
	switch {
	case e.Message != nil:
		return e.Message.Content
	case e.Model != nil && e.Model.Output != nil:
		return e.Model.Output.Content
	case e.Error != nil:
		return e.Error.Message
	}
	return ""
}
