package traces

import (
	"errors"
	"fmt"
)

// Code classifies an Error for the caller: the server maps each to one HTTP status.
type Code string

// Error codes.
const (
	CodeInvalid  Code = "invalid" // the caller's input is wrong; the message says how
	CodeNotFound Code = "not_found"
	CodeConflict Code = "conflict"
	// CodeUnavailable: Baton is busy or shutting down; the same request may succeed later.
	CodeUnavailable Code = "unavailable"
	CodeInternal    Code = "internal" // Baton's fault; the message is for logs, not users
)

// Error is Baton's domain error: a code and a message meant for the person who caused it.
type Error struct {
	Code    Code
	Message string
}

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
