package traces

import (
	"errors"
	"fmt"
	"time"
)

// Code classifies an Error for the caller: the server maps each to one HTTP status.
type Code string

// Error codes.
const (
	CodeInvalid  Code = "invalid" // the caller's input is wrong; the message says how
	CodeNotFound Code = "not_found"
	CodeConflict Code = "conflict"
	// CodeUnavailable: Baton cannot do it now: it is busy or shutting down, or its store has a
	// fault (a full disk, a read-only or damaged database, one another server holds); the
	// message names the cause, and Retry says whether waiting may help.
	CodeUnavailable Code = "unavailable"
	CodeInternal    Code = "internal" // Baton's fault; the message is for logs, not users
)

// Error is Baton's domain error: a code and a message meant for the person who caused it.
type Error struct {
	Code    Code
	Message string
	// Retry is how long to wait before the same request may succeed: 0 leaves it to the
	// server's default for the code; NoRetry says waiting will not help (a read-only database
	// stays so until someone acts).
	Retry time.Duration
}

// NoRetry is the Retry of an error that waiting does not mend.
const NoRetry time.Duration = -1

func (e *Error) Error() string { return e.Message }

// Errorf returns an *Error with the given code and formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the first *Error in err's chain, CodeInternal for any other
// non-nil error, and "" for nil.
func ErrorCode(err error) Code {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

// ErrorMessage returns the user-facing message of err: the *Error's message, or
// "internal error" for anything else, so Go error strings never reach a user.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) && e.Code != CodeInternal {
		return e.Message
	}
	return "internal error"
}
