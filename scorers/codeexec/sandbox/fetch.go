package sandbox

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// The bounds of what a job fetches back from its work dir (Job.FetchFiles):
// at most MaxFetchFiles names; a file of more than MaxFetchFileBytes is
// left out, and so is one that would take the files fetched before it past
// MaxFetchBytes together.
const (
	MaxFetchFiles     = 32
	MaxFetchFileBytes = 8 << 20
	MaxFetchBytes     = MaxInputMB << 20
)

// checkFetchFiles checks a job's FetchFiles: few enough, each a name
// CheckFileName takes.
func checkFetchFiles(names []string) error {
	if len(names) > MaxFetchFiles {
		return fmt.Errorf("%d files to fetch, at most %d", len(names), MaxFetchFiles)
	}
	for _, name := range names {
		if err := CheckFileName(name); err != nil {
			return fmt.Errorf("file to fetch: %w", err)
		}
	}
	return nil
}

// workRoot is the work dir the job just run in slot s left, as this
// process reaches it: inside the namespace of the server that ran it (the
// zygote for python, the executor for the rest) through /proc, or the
// directory of an unconfined server.
func (p *Pool) workRoot(s *slot, lang *poolLanguage) (string, error) {
	server, unsafeDir := s.zygote, unsafeWorkDir(s)
	if !lang.InProcess {
		server, unsafeDir = s.executor, unsafeDir+"-exec"
	}
	if p.cfg.Unsafe {
		return unsafeDir, nil
	}
	if server == nil || server.Process == nil {
		return "", errors.New("the slot's server is gone")
	}
	return fmt.Sprintf("/proc/%d/root%s", server.Process.Pid, workDir), nil
}

// fetchFiles reads names from the work dir dir, after every process of
// the job is gone. Each name is resolved inside dir (os.Root: no "..", no
// symbolic link, followed or met on the way, leads out of it) and opened
// without blocking (a fifo the program left is no file to read, and does
// not wait for a writer). A name that is not there is left out silently,
// as SandboxFusion leaves it out; one that is not a regular file inside
// dir, or is over the bounds (MaxFetchFileBytes, MaxFetchBytes), is left
// out with the reason in leftOut. An error means dir itself cannot be
// opened.
func fetchFiles(dir string, names []string) (files map[string][]byte, leftOut map[string]string, err error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("open the work dir: %w", err)
	}
	defer root.Close()
	files, leftOut = map[string][]byte{}, map[string]string{}
	total := 0
	for _, name := range names {
		if _, done := files[name]; done {
			continue
		}
		if _, done := leftOut[name]; done {
			continue
		}
		data, why := fetchFile(root, name, MaxFetchBytes-total)
		switch {
		case why == errMissing:
		case why != nil:
			leftOut[name] = why.Error()
		default:
			files[name] = data
			total += len(data)
		}
	}
	return files, leftOut, nil
}

// errMissing is a file to fetch that is not there.
var errMissing = errors.New("no such file")

// fetchFile reads name below root if it is a regular file of at most
// MaxFetchFileBytes and room bytes; else it says why not (errMissing: not
// there).
func fetchFile(root *os.Root, name string, room int) ([]byte, error) {
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return nil, errMissing
	case errors.Is(err, syscall.ELOOP):
		return nil, errors.New("a symbolic link that leads nowhere or in a loop: not read")
	case err != nil:
		// os.Root's refusal of a path that leads out of the work dir
		// (a symbolic link to an absolute path, or up past it) among
		// others.
		return nil, fmt.Errorf("not read: %v", unwrapPath(err))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("could not be read (%v)", unwrapPath(err))
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file (%s): not read", kind(st.Mode()))
	}
	limit := min(MaxFetchFileBytes, room)
	if st.Size() > int64(limit) {
		return nil, tooBig(st.Size(), room)
	}
	data, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return nil, fmt.Errorf("could not be read (%v)", unwrapPath(err))
	}
	if len(data) > limit {
		return nil, tooBig(int64(len(data)), room)
	}
	return data, nil
}

func tooBig(size int64, room int) error {
	if size > MaxFetchFileBytes {
		return fmt.Errorf("%d bytes, over the %d MiB a fetched file may have: not sent", size, MaxFetchFileBytes>>20)
	}
	return fmt.Errorf("%d bytes, over what is left of the %d MiB the fetched files may have together (%d bytes): not sent", size, MaxFetchBytes>>20, room)
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// kind names a file's type for a reason.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a fifo"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	default:
		return m.Type().String()
	}
}
