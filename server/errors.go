package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"go.uber.org/zap"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// RequestError is a request the server refuses as malformed or over a limit.
// Its message is sent to the client as is, so it names the rollout index,
// field and limit at fault and nothing internal.
type RequestError struct {
	Code codes.Code // InvalidArgument or NotFound
	Msg  string
}

func (e *RequestError) Error() string { return e.Msg }

func invalid(format string, args ...any) error {
	return &RequestError{Code: codes.InvalidArgument, Msg: fmt.Sprintf(format, args...)}
}

func notFound(format string, args ...any) error {
	return &RequestError{Code: codes.NotFound, Msg: fmt.Sprintf(format, args...)}
}

// timeoutError is a request the server gave up on because the client was
// too slow (its body did not arrive in time).
type timeoutError struct{ msg string }

// timeoutPrefix starts the status message of every timeoutError.
const timeoutPrefix = "timed out: "

func (e *timeoutError) Error() string { return timeoutPrefix + e.msg }

// toStatus is the one place where errors become gRPC statuses. Anything it
// does not recognise is an internal error: logged here, once, with its detail,
// and sent to the client as a bare "internal error".
func toStatus(log *zap.Logger, method string, err error) *status.Status {
	if err == nil {
		return status.New(codes.OK, "")
	}
	var re *RequestError
	var me *MemoryError
	var te *timeoutError
	switch {
	case errors.As(err, &re):
		return status.New(re.Code, re.Msg)
	case errors.Is(err, ErrOverloaded), errors.As(err, &me):
		return status.New(codes.ResourceExhausted, err.Error())
	case errors.As(err, &te):
		return status.New(codes.DeadlineExceeded, te.Error())
	case errors.Is(err, errShuttingDown):
		return status.New(codes.Unavailable, err.Error())
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return status.FromContextError(err)
	}
	if s, ok := status.FromError(err); ok {
		return s
	}
	log.Error("internal error", zap.String("method", method), zap.Error(err))
	return status.New(codes.Internal, "internal error")
}

// httpStatuses maps gRPC codes to the HTTP statuses of the JSON endpoints.
var httpStatuses = map[codes.Code]int{
	codes.OK:                 http.StatusOK,
	codes.InvalidArgument:    http.StatusBadRequest,
	codes.OutOfRange:         http.StatusBadRequest,
	codes.FailedPrecondition: http.StatusBadRequest,
	codes.NotFound:           http.StatusNotFound,
	codes.ResourceExhausted:  http.StatusTooManyRequests,
	codes.Unauthenticated:    http.StatusUnauthorized,
	codes.PermissionDenied:   http.StatusForbidden,
	codes.DeadlineExceeded:   http.StatusGatewayTimeout,
	codes.Canceled:           499, // client closed request
	codes.Unavailable:        http.StatusServiceUnavailable,
	codes.Unimplemented:      http.StatusNotImplemented,
}

// httpStatus maps a gRPC code to the HTTP status of the JSON endpoints:
// 500 for a code httpStatuses does not list.
func httpStatus(c codes.Code) int {
	if s, ok := httpStatuses[c]; ok {
		return s
	}
	return http.StatusInternalServerError
}
