// Package jsonl reads and writes the JSONL row format of `rewardd score`
// and `rewardd-bench`: one dataset row per line; the keys id,
// group, prompt and completion are reserved, every other key is a field.
package jsonl

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"unicode/utf8"

	"google.golang.org/protobuf/types/known/structpb"

	rewardv1 "github.com/rewardd/rewardd/proto/reward/v1"
	"github.com/rewardd/rewardd/scorers"
)

// Row is one parsed input line.
type Row struct {
	// Line is the 1-based line number in the input.
	Line int
	// ID is the row's id as it was written (any JSON value), or the line
	// number when the row has none.
	ID json.RawMessage
	// Rollout is the row as the API sees it.
	Rollout *rewardv1.Rollout
}

// Reader reads rows from JSONL input, one line at a time.
type Reader struct {
	r       *bufio.Reader
	line    int
	maxLine int
}

// NewReader reads from r. A line longer than maxLine bytes is an error for
// that line only.
func NewReader(r io.Reader, maxLine int) *Reader {
	return &Reader{r: bufio.NewReaderSize(r, 1<<16), maxLine: maxLine}
}

// LineError is a malformed line: the reader skips it and goes on.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }

func (e *LineError) Unwrap() error { return e.Err }

// Next returns the next row. It returns io.EOF at the end, and a *LineError
// for a malformed line, after which reading may go on. Blank lines are
// skipped.
func (rd *Reader) Next() (*Row, error) {
	for {
		line, size, err := rd.readLine()
		if err != nil {
			return nil, err
		}
		rd.line++
		if size > rd.maxLine {
			return nil, &LineError{rd.line, fmt.Errorf("line is %d bytes; the limit is %d", size, rd.maxLine)}
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		row, err := parse(line)
		if err != nil {
			return nil, &LineError{rd.line, err}
		}
		row.Line = rd.line
		if row.ID == nil {
			row.ID = json.RawMessage(fmt.Sprint(rd.line))
		}
		return row, nil
	}
}

// readLine returns the next line without its newline, and the line's size.
// The bytes of a line longer than maxLine are read and dropped, so a huge line
// costs no memory beyond the limit.
func (rd *Reader) readLine() (line []byte, size int, err error) {
	for {
		chunk, err := rd.r.ReadSlice('\n')
		size += len(chunk)
		if size <= rd.maxLine+1 {
			line = append(line, chunk...)
		}
		switch {
		case err == nil:
			return bytes.TrimSuffix(line, []byte("\n")), size - 1, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && size > 0:
			return line, size, nil
		default:
			return nil, 0, err
		}
	}
}

// parse parses one JSONL line into a row.
func parse(line []byte) (*Row, error) {
	if !utf8.Valid(line) {
		return nil, fmt.Errorf("invalid UTF-8 at byte %d", FirstInvalidUTF8(line))
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(line, &obj); err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	if obj == nil {
		return nil, errors.New("a row is a JSON object, got null")
	}
	row := &Row{Rollout: &rewardv1.Rollout{}}
	fields := make(map[string]*structpb.Value, len(obj))
	for k, raw := range obj {
		var err error
		switch k {
		case "id":
			row.ID = raw
			row.Rollout.Id, err = idString(raw)
		case "group":
			row.Rollout.Group, err = idString(raw)
		case "prompt":
			row.Rollout.Prompt, err = text(raw, false)
		case "completion":
			row.Rollout.Completion, err = text(raw, true)
		default:
			var v any
			if err = json.Unmarshal(raw, &v); err == nil {
				fields[k], err = structpb.NewValue(v)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", k, err)
		}
	}
	if _, ok := obj["completion"]; !ok {
		return nil, errors.New(`no "completion" key`)
	}
	if len(fields) > 0 {
		row.Rollout.Fields = &structpb.Struct{Fields: fields}
	}
	return row, nil
}

// idString reads an id or group: a string, or a number written as in the
// input.
func idString(raw json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err == nil {
		return n.String(), nil
	}
	if string(raw) == "null" {
		return "", nil
	}
	return "", fmt.Errorf("want a string or a number, got %s", truncate(raw))
}

// message is one chat turn.
type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// text reads a prompt or completion: a string, or a chat as a list of
// {role, content}. A chat completion is its last assistant message; a chat
// prompt is its messages' contents joined by newlines.
func text(raw json.RawMessage, completion bool) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var chat []message
	if err := json.Unmarshal(raw, &chat); err != nil {
		return "", fmt.Errorf("want a string or a list of {role, content} messages, got %s", truncate(raw))
	}
	if completion {
		for i := len(chat) - 1; i >= 0; i-- {
			if chat[i].Role == "assistant" {
				return chat[i].Content, nil
			}
		}
		if len(chat) == 1 {
			return chat[0].Content, nil
		}
		return "", errors.New("chat completion has no assistant message")
	}
	var b bytes.Buffer
	for i, m := range chat {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(m.Content)
	}
	return b.String(), nil
}

func truncate(raw []byte) string {
	if len(raw) > 40 {
		return string(raw[:40]) + "…"
	}
	return string(raw)
}

// FirstInvalidUTF8 returns the offset of the first byte of b that is not
// valid UTF-8, or len(b).
func FirstInvalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return len(b)
}

// Output is one output line: a row's scores, or why its line was not scored.
type Output struct {
	ID json.RawMessage `json:"id,omitempty"`
	// Line is set for a line that could not be parsed.
	Line   int                 `json:"line,omitempty"`
	Scores map[string]*float64 `json:"scores,omitempty"`
	// Outcomes names each function's outcome: "ok", "not_applicable" or
	// "error" (a null score is one of the last two).
	Outcomes map[string]string `json:"outcomes,omitempty"`
	// Errors says why a function gave no score (not_applicable, error);
	// Reasons why an OK score is what it is, when the function says.
	Errors  map[string]string `json:"errors,omitempty"`
	Reasons map[string]string `json:"reasons,omitempty"`
	// Executions says, per function that ran the row's program, what it
	// found.
	Executions map[string]*Execution `json:"executions,omitempty"`
	// Reward and Advantage are set when aggregation was asked for.
	Reward    *float64 `json:"reward,omitempty"`
	Advantage *float64 `json:"advantage,omitempty"`
	// Error says why the line was not scored.
	Error string `json:"error,omitempty"`
}

// Outputs turns a response into one Output per row, in order. A value is
// null unless its status is OK; every entry's outcome is in Outcomes, the
// reason of an ERROR entry in Errors, and that of an OK entry (when it has
// one) or a NOT_APPLICABLE one in Reasons, as FunctionScores keeps them.
func Outputs(rows []*Row, resp *rewardv1.ScoreResponse) []Output {
	out := make([]Output, len(rows))
	nf := len(resp.GetFunctions())
	for i, row := range rows {
		o := Output{ID: row.ID, Scores: make(map[string]*float64, nf), Outcomes: make(map[string]string, nf)}
		for _, fs := range resp.GetFunctions() {
			status := fs.GetStatus()[i]
			o.Outcomes[fs.GetName()] = scorers.Outcome(status).String()
			o.Scores[fs.GetName()] = nil
			if status == rewardv1.ScoreStatus_SCORE_STATUS_OK {
				v := fs.GetValues()[i]
				o.Scores[fs.GetName()] = &v
			}
			if reason, ok := fs.GetErrors()[int32(i)]; ok {
				if o.Errors == nil {
					o.Errors = make(map[string]string)
				}
				o.Errors[fs.GetName()] = reason
			}
			if reason, ok := fs.GetReasons()[int32(i)]; ok {
				if o.Reasons == nil {
					o.Reasons = make(map[string]string)
				}
				o.Reasons[fs.GetName()] = reason
			}
			if e := fs.GetExecutions()[int32(i)]; e != nil {
				if o.Executions == nil {
					o.Executions = make(map[string]*Execution)
				}
				o.Executions[fs.GetName()] = execution(e)
			}
		}
		if len(resp.GetRewards()) == len(rows) {
			o.Reward = finite(resp.GetRewards()[i])
		}
		if len(resp.GetAdvantages()) == len(rows) {
			o.Advantage = finite(resp.GetAdvantages()[i])
		}
		out[i] = o
	}
	return out
}

// finite returns a pointer to v, or nil (JSON null) for NaN and infinities,
// which JSON cannot carry.
func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// Execution is what running a row's program found (reward.v1.Execution),
// with verdicts by their short names (AC, WA, TLE, MLE, RE, OLE, CE).
type Execution struct {
	Language       string          `json:"language"`
	Verdict        string          `json:"verdict"`
	Passed         int32           `json:"passed"`
	Total          int32           `json:"total"`
	Tests          []TestExecution `json:"tests,omitempty"`
	CompilerOutput string          `json:"compiler_output,omitempty"`
}

// TestExecution is one test of an Execution.
type TestExecution struct {
	Index       int32   `json:"index"`
	Verdict     string  `json:"verdict"`
	CPUSeconds  float64 `json:"cpu_seconds"`
	WallSeconds float64 `json:"wall_seconds"`
	MemoryBytes int64   `json:"memory_bytes"`
	ExitCode    int32   `json:"exit_code"`
	Detail      string  `json:"detail,omitempty"`
}

func execution(e *rewardv1.Execution) *Execution {
	out := &Execution{
		Language: e.GetLanguage(), Verdict: verdict(e.GetVerdict()), Passed: e.GetPassed(), Total: e.GetTotal(),
		CompilerOutput: e.GetCompilerOutput(),
	}
	for _, t := range e.GetTests() {
		out.Tests = append(out.Tests, TestExecution{
			Index: t.GetIndex(), Verdict: verdict(t.GetVerdict()), CPUSeconds: t.GetCpuSeconds(), WallSeconds: t.GetWallSeconds(),
			MemoryBytes: t.GetMemoryBytes(), ExitCode: t.GetExitCode(), Detail: t.GetDetail(),
		})
	}
	return out
}

// verdict is v's short name.
func verdict(v rewardv1.Verdict) string { return scorers.Verdict(v).String() }
