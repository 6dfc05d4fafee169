// Command rewardd-healthcheck is the images' HEALTHCHECK (deploy/Dockerfile):
// it asks a rewardd server's HTTP port whether the process is alive, and
// exits 0 when it answers 200, 1 otherwise, with the reason on stderr.
// The distroless image has no shell or curl to do it with.
//
//	rewardd-healthcheck [URL]
//
// URL defaults to http://127.0.0.1:8080/healthz, `rewardd serve`'s default
// HTTP port; give another when --http-addr moves it, or /readyz to ask
// whether it takes work. Plain HTTP only: a server on TLS is for the
// orchestrator's probes.
package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

// defaultURL is `rewardd serve`'s liveness endpoint on its default address.
const defaultURL = "http://127.0.0.1:8080/healthz"

// timeout bounds one check, under the Dockerfile's HEALTHCHECK --timeout.
const timeout = 3 * time.Second

func main() {
	if err := run(context.Background(), os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "rewardd-healthcheck:", err)
		os.Exit(1)
	}
}

// run checks the URL in args (or defaultURL): nil when it answers 200.
func run(ctx context.Context, args []string) error {
	url := defaultURL
	switch len(args) {
	case 0:
	case 1:
		url = args[0]
	default:
		return fmt.Errorf("want at most one argument, the URL to check; got %q", args)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %s", url, resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}
