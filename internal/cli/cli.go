// Package cli is what rewardd's two commands, rewardd and rewardd-bench,
// share: usage errors and exit statuses, flag sets, the logger, the
// config's loading, gRPC dial options and the code_exec sandbox's flags.
package cli

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/codeexec/sandbox"
	"github.com/rewardd/rewardd/server/config"
)

// UsageError is a mistake in the command line: exit status 2.
type UsageError struct{ msg string }

func (e *UsageError) Error() string { return e.msg }

// Usagef returns a UsageError with the formatted message.
func Usagef(format string, args ...any) error {
	return &UsageError{fmt.Sprintf(format, args...)}
}

// ExitCode prints err once, after prog and a colon, and returns the exit
// status: 0 success, 2 bad usage or bad config, 1 anything else.
func ExitCode(prog string, err error, stderr io.Writer) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	fmt.Fprintf(stderr, "%s: %v\n", prog, err)
	var ue *UsageError
	var ce config.Errors
	if errors.As(err, &ue) || errors.As(err, &ce) {
		return 2
	}
	return 1
}

// NewFlags returns a flag set named name whose errors are returned, not
// printed-and-exit.
func NewFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// ParseFlags parses args as Parse does and refuses positional arguments.
func ParseFlags(fs *flag.FlagSet, args []string) error {
	positional, err := Parse(fs, args)
	if err != nil {
		return err
	}
	if len(positional) > 0 {
		return Usagef("unexpected argument %q", positional[0])
	}
	return nil
}

// LoadConfig reads the config file at path, or the embedded default
// (config.Default) when path is empty.
func LoadConfig(path string, reg scorers.Registry) (*config.Config, error) {
	name, data := config.DefaultName, config.Default()
	if path != "" {
		var err error
		if data, err = os.ReadFile(path); err != nil {
			return nil, Usagef("read config: %v", err)
		}
		name = path
	}
	return config.Load(name, data, reg)
}

// NewLogger returns a JSON logger on w at the named level.
func NewLogger(level string, w io.Writer) (*zap.Logger, error) {
	lvl, err := zapcore.ParseLevel(level)
	if err != nil {
		return nil, Usagef("--log-level: %v", err)
	}
	enc := zap.NewProductionEncoderConfig()
	enc.EncodeTime = zapcore.ISO8601TimeEncoder
	core := zapcore.NewCore(zapcore.NewJSONEncoder(enc), zapcore.AddSync(w), lvl)
	return zap.New(core), nil
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// DialOptions are the gRPC client options for talking to a rewardd: TLS
// verified against caFile when given, and the bearer token from tokenFile
// when given.
func DialOptions(tokenFile, caFile string) ([]grpc.DialOption, error) {
	opts := []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	tlsOn := caFile != ""
	if tlsOn {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, Usagef("--tls-ca: %v", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, Usagef("--tls-ca: %s holds no PEM certificate", caFile)
		}
		opts[0] = grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}))
	}
	if tokenFile != "" {
		token, err := os.ReadFile(tokenFile)
		if err != nil {
			return nil, Usagef("--auth-token-file: %v", err)
		}
		opts = append(opts, grpc.WithPerRPCCredentials(bearer{token: strings.TrimSpace(string(token)), secure: tlsOn}))
	}
	return opts, nil
}

// bearer sends "authorization: Bearer <token>" with every call.
type bearer struct {
	token  string
	secure bool
}

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + b.token}, nil
}

// RequireTransportSecurity is false so the token also works on a loopback
// server without TLS; over a network, use --tls-ca.
func (b bearer) RequireTransportSecurity() bool { return b.secure }

// gcPercent is the garbage collector's target unless GOGC is set. A Score
// call's memory dies with its answer, so the heap may grow to three times
// the live data between collections; GOMEMLIMIT, which deploy/ sets below
// the container's memory limit, or else limits.memory_budget, still bounds
// it. bench/README.md ("The garbage collector's target") has the
// measurements behind the value.
const gcPercent = 200

// SetGCPercent sets the garbage collector's target to gcPercent unless
// GOGC is set: both commands score with the same collector.
func SetGCPercent() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(gcPercent)
	}
}

// Main is a command's main: it answers the sandbox's helper (the code_exec
// sandbox re-executes the calling binary to confine itself before it
// becomes the Python fork server), sets the collector's target, runs run
// until it returns or a signal (SIGINT, SIGTERM) ends its context, and
// exits with ExitCode.
func Main(prog string, run func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error) {
	if sandbox.IsHelper(os.Args) {
		os.Exit(sandbox.HelperMain(os.Args))
	}
	SetGCPercent()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(ExitCode(prog, err, os.Stderr))
}
