package sqlite

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/baton-dev/baton/traces"
)

// Holder says which process holds a database's Lock: the one `baton serve` that writes its runs.
type Holder struct {
	PID     int       `json:"pid"`
	Address string    `json:"address,omitempty"` // where it serves, once it listens
	Since   time.Time `json:"since"`
}

// Lock is a process's claim on a database: only one `baton serve` writes a database's runs, since
// each ends at its start the runs it finds running (Recover) and keeps its own runs' state in
// memory. It is an exclusive lock (flock) on a file beside the database, PATH.lock, which holds the
// Holder: the operating system releases it when the process ends, however it ends (kill -9 too),
// so a stale file never blocks. Commands that only read or add runs (export, import) take none.
type Lock struct {
	f      *os.File
	path   string
	holder Holder
}

// LockFile returns the path of the lock file of the database at path.
func LockFile(path string) string { return path + ".lock" }

// Claim takes the lock of the database at path for this process, which serves at address (""
// until it knows). It fails with CodeUnavailable, naming the holder, when another process holds
// it. The database's directory is made when missing.
func Claim(path, address string) (*Lock, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("lock the database: %w", err)
	}
	name := LockFile(path)
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock the database: %w", err)
	}
	if err := flock(f); err != nil {
		f.Close()
		if !errors.Is(err, errLocked) {
			return nil, fmt.Errorf("lock the database %s: %w", name, err)
		}
		return nil, inUse(path, name)
	}
	l := &Lock{f: f, path: name, holder: Holder{PID: os.Getpid(), Address: address, Since: time.Now().UTC().Truncate(time.Second)}}
	if err := l.write(); err != nil {
		l.Release()
		return nil, err
	}
	return l, nil
}

// inUse is the error of a Claim on a database another process holds, named by its lock file.
func inUse(path, name string) error {
	who := "another baton serve"
	if data, err := os.ReadFile(name); err == nil {
		var h Holder
		if json.Unmarshal(data, &h) == nil && h.PID > 0 {
			who += fmt.Sprintf(" (pid %d", h.PID)
			if h.Address != "" {
				who += ", serving on " + h.Address
			}
			who += ", since " + h.Since.Local().Format(time.DateTime) + ")"
		}
	}
	return &traces.Error{Code: traces.CodeUnavailable, Retry: traces.NoRetry, Message: fmt.Sprintf(
		"the database %s is in use by %s; stop that one, or give this one a database of its own with --db PATH", path, who)}
}

// SetAddress records where the holder serves, once it listens.
func (l *Lock) SetAddress(address string) error {
	l.holder.Address = address
	return l.write()
}

// write puts the holder in the lock file.
func (l *Lock) write() error {
	data, _ := json.Marshal(l.holder)
	if err := l.f.Truncate(0); err != nil {
		return fmt.Errorf("lock the database: %w", err)
	}
	if _, err := l.f.WriteAt(append(data, '\n'), 0); err != nil {
		return fmt.Errorf("lock the database: %w", err)
	}
	return nil
}

// Release gives the lock up. The file stays: removing it could let a process that opened it
// before the removal lock a file nobody else sees.
func (l *Lock) Release() error {
	if l == nil {
		return nil
	}
	return l.f.Close() // closing the last descriptor releases the flock
}
