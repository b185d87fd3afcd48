//go:build unix

package sqlite

import (
	"errors"
	"os"
	"syscall"
)

// errLocked is flock's answer when another process holds the lock.
var errLocked = syscall.EWOULDBLOCK

// flock takes an exclusive lock on f without waiting.
func flock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
