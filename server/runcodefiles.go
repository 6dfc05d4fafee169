package server

import (
	"encoding/base64"
	"fmt"
	"maps"
	"slices"

	"github.com/rewardd/rewardd/scorers/codeexec"
	"github.com/rewardd/rewardd/scorers/codeexec/sandbox"
)

// /run_code's fetch_files, as SandboxFusion's runners take them: paths the
// program may leave in its work dir, read back after the run however it
// ended (a failed run, a TimeLimitExceeded one) and answered in the
// response's files, base64 by path. A path that is not there is left out
// of files, as SandboxFusion leaves it out. Unlike SandboxFusion's, a path
// is relative to the work dir and stays in it (no absolute path, no ..:
// the rules of the request's files, a 400 otherwise), and what is read is
// bounded: at most sandbox.MaxFetchFiles paths, a file of at most
// sandbox.MaxFetchFileBytes, sandbox.MaxFetchBytes together. A file left
// out for what it is (a symbolic link out of the work dir, a fifo, a
// directory) or for its size is named in the message, with why. A program
// that did not compile ran nowhere: files is empty.

// runCodeFetchFiles checks the request's fetch_files.
func runCodeFetchFiles(in *runCodeRequest) ([]string, error) {
	if len(in.FetchFiles) == 0 {
		return nil, nil
	}
	if len(in.FetchFiles) > sandbox.MaxFetchFiles {
		return nil, invalid("request body: fetch_files: %d paths, at most %d", len(in.FetchFiles), sandbox.MaxFetchFiles)
	}
	for k, name := range in.FetchFiles {
		if err := sandbox.CheckFileName(name); err != nil {
			return nil, invalid("request body: fetch_files[%d]: %v (a path inside the program's work dir, as files' names are)", k, err)
		}
	}
	return slices.Clone(in.FetchFiles), nil
}

// runCodeFetchCost bounds what a run's fetched files hold at once: read,
// in base64 in the answer, and in the answer's JSON while it is written.
func runCodeFetchCost(job codeexec.ExecJob) int64 {
	if len(job.FetchFiles) == 0 {
		return 0
	}
	return 3 * min(int64(len(job.FetchFiles))*sandbox.MaxFetchFileBytes, sandbox.MaxFetchBytes)
}

// runCodeFetched puts the files res fetched into out, and returns a note
// for each one left out for what it is or its size.
func runCodeFetched(out *runCodeResponse, res codeexec.ExecResult) []string {
	for name, data := range res.Files {
		out.Files[name] = base64.StdEncoding.EncodeToString(data)
	}
	var notes []string
	for _, name := range slices.Sorted(maps.Keys(res.FilesLeftOut)) {
		notes = append(notes, fmt.Sprintf("fetch_files: %q is left out: %s", name, res.FilesLeftOut[name]))
	}
	return notes
}
