// Package jsonschema implements the json_schema scorer kind: the
// completion's JSON must validate against a JSON Schema, given in the
// config or in a row field.
//
// Validation is github.com/santhosh-tekuri/jsonschema/v6, which passes the
// official JSON-Schema-Test-Suite for drafts 4, 6, 7, 2019-09 and 2020-12
// (this package's tests run the suite's draft 7 and 2020-12 cases through
// it). A schema without $schema is read as Draft (default 2020-12). Formats
// are annotations, not assertions, as the 2020-12 specification has them
// by default. A schema's $ref may point inside itself or to the drafts'
// meta-schemas; nothing is fetched or read from files (a remote $ref is a
// compile error: an Error for a row's schema, a refused config for the
// config's).
//
// The JSON is the whole completion when it parses; else the last fenced
// block (```json or ```) that parses; else the last JSON object or array
// in the text. Numbers keep their digits (1.0 is not 1 for "type":
// "integer" only as the draft says).
//
// A valid document scores 1. An invalid one scores 0 with a reason naming
// the JSON pointer of the first failing place, in pointer order ("at
// /items/0: got string, want integer (and 2 more)"); with Partial, it
// scores the fraction of the schema's top-level required properties that
// are present and have no error under them (0 when the schema requires
// none, or the document is not an object). A completion without JSON
// scores 0 ("no JSON found"). A row without the schema field is
// NotApplicable; a row schema that does not compile is an Error. Row
// schemas are compiled once each: the last 256 distinct ones are kept.
package jsonschema

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	js "github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/rewardd/rewardd/scorers"
)

// Params configures a json_schema function.
type Params struct {
	// Schema is the schema, as a mapping (YAML or JSON) or a string of
	// JSON. Exactly one of Schema and SchemaField.
	Schema any `yaml:"schema,omitempty"`
	// SchemaField is the row field holding the schema (an object, or a
	// string of JSON).
	SchemaField string `yaml:"schema_field,omitempty"`
	// Draft is the draft of a schema without $schema: 2020-12 (default),
	// 2019-09, 7, 6 or 4.
	Draft string `yaml:"draft,omitempty"`
	// Partial gives an invalid object the fraction of the required
	// properties present and valid. Default false.
	Partial *bool `yaml:"partial,omitempty"`
}

var drafts = map[string]*js.Draft{"2020-12": js.Draft2020, "2019-09": js.Draft2019, "7": js.Draft7, "6": js.Draft6, "4": js.Draft4}

// Scorer scores completions against a schema. It is safe for concurrent
// use.
type Scorer struct {
	p       Params
	draft   *js.Draft
	partial bool
	schema  *compiled // the config's schema, or nil
	cache   *cache    // row schemas by their JSON
	noField string
}

// compiled is a schema ready to validate, with its top-level required
// properties.
type compiled struct {
	schema   *js.Schema
	required []string
}

// New builds a scorer from p, filling in defaults.
func New(p Params) (*Scorer, error) {
	var bad scorers.ParamErrors
	if p.Draft == "" {
		p.Draft = "2020-12"
	}
	draft, ok := drafts[p.Draft]
	if !ok {
		bad.Addf("draft", "unknown draft %q (one of 2020-12, 2019-09, 7, 6, 4)", p.Draft)
		draft = js.Draft2020
	}
	if p.Partial == nil {
		p.Partial = new(false)
	}
	s := &Scorer{p: p, draft: draft, partial: *p.Partial, cache: newCache()}
	switch {
	case p.Schema == nil && p.SchemaField == "":
		bad.Addf("schema", "is required, or schema_field")
	case p.Schema != nil && p.SchemaField != "":
		bad.Addf("schema_field", "and schema are both set: one of them")
	case p.Schema != nil:
		doc, err := schemaDoc(p.Schema)
		if err == nil {
			s.schema, err = compile(doc, draft)
		}
		bad.Add("schema", err)
	default:
		s.noField = fmt.Sprintf("no schema in field %q", p.SchemaField)
	}
	if err := bad.Err(); err != nil {
		return nil, err
	}
	return s, nil
}

// Params returns the parameters s runs with, defaults filled in.
func (s *Scorer) Params() Params { return s.p }

// schemaDoc turns a schema as the config or a row gives it (a mapping
// decoded from YAML or JSON, or a string of JSON) into JSON values as the
// validator takes them.
func schemaDoc(v any) (any, error) {
	var text []byte
	if str, ok := v.(string); ok {
		text = []byte(str)
	} else {
		var err error
		if text, err = json.Marshal(v); err != nil {
			return nil, fmt.Errorf("is not a JSON value: %w", err)
		}
	}
	doc, err := js.UnmarshalJSON(bytes.NewReader(text))
	if err != nil {
		return nil, fmt.Errorf("is not JSON: %w", err)
	}
	return doc, nil
}

// noLoader refuses every URL: a schema may not make rewardd fetch a URL
// or read a file.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("rewardd loads no schema from %s: a $ref must point inside the schema", url)
}

const schemaURL = "rewardd:schema.json"

// compile compiles a schema document with the given default draft.
func compile(doc any, draft *js.Draft) (*compiled, error) {
	return compileWith(doc, draft, noLoader{})
}

func compileWith(doc any, draft *js.Draft, loader js.URLLoader) (*compiled, error) {
	c := js.NewCompiler()
	c.DefaultDraft(draft)
	c.UseLoader(loader)
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, err
	}
	sch, err := c.Compile(schemaURL)
	if err != nil {
		return nil, err
	}
	out := &compiled{schema: sch}
	if obj, ok := doc.(map[string]any); ok {
		if req, ok := obj["required"].([]any); ok {
			for _, r := range req {
				if name, ok := r.(string); ok && !slices.Contains(out.required, name) {
					out.required = append(out.required, name)
				}
			}
		}
	}
	return out, nil
}

// Score validates the completion's JSON. It does not look at ctx: a
// schema's validation is linear in the document for all but pathological
// schemas.
func (s *Scorer) Score(_ context.Context, r *scorers.Rollout) scorers.Result {
	sch := s.schema
	if sch == nil {
		var res scorers.Result
		if sch, res = s.rowSchema(r); res.Outcome != 0 {
			return res
		}
	}
	doc, ok := Extract(r.Completion)
	if !ok {
		return scorers.ScoreWhy(0, "no JSON found")
	}
	return s.validate(sch, doc)
}

// validate scores doc against sch.
func (s *Scorer) validate(sch *compiled, doc any) scorers.Result {
	err := sch.schema.Validate(doc)
	if err == nil {
		return scorers.Score(1)
	}
	var ve *js.ValidationError
	if !errors.As(err, &ve) {
		return scorers.Errorf("validate: %v", err)
	}
	leaves := leafErrors(ve, nil)
	slices.SortStableFunc(leaves, func(a, b *js.ValidationError) int {
		return strings.Compare(pointer(a.InstanceLocation), pointer(b.InstanceLocation))
	})
	printer := message.NewPrinter(language.English)
	why := fmt.Sprintf("at %s: %s", pointerOrRoot(leaves[0].InstanceLocation), leaves[0].ErrorKind.LocalizedString(printer))
	if len(leaves) > 1 {
		why += fmt.Sprintf(" (and %d more)", len(leaves)-1)
	}
	if !s.partial {
		return scorers.ScoreWhy(0, why)
	}
	return scorers.ScoreWhy(partialCredit(sch.required, doc, leaves), why)
}

// partialCredit is the fraction of required properties present in doc
// with no error at or under them.
func partialCredit(required []string, doc any, leaves []*js.ValidationError) float64 {
	obj, ok := doc.(map[string]any)
	if !ok || len(required) == 0 {
		return 0
	}
	good := 0
	for _, name := range required {
		if _, present := obj[name]; !present {
			continue
		}
		if !slices.ContainsFunc(leaves, func(e *js.ValidationError) bool {
			return len(e.InstanceLocation) > 0 && e.InstanceLocation[0] == name
		}) {
			good++
		}
	}
	return float64(good) / float64(len(required))
}

// leafErrors appends the errors of e that have no causes.
func leafErrors(e *js.ValidationError, out []*js.ValidationError) []*js.ValidationError {
	if len(e.Causes) == 0 {
		return append(out, e)
	}
	for _, c := range e.Causes {
		out = leafErrors(c, out)
	}
	return out
}

// pointer writes an instance location as a JSON pointer (RFC 6901).
func pointer(loc []string) string {
	var b strings.Builder
	for _, tok := range loc {
		b.WriteByte('/')
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(tok))
	}
	return b.String()
}

func pointerOrRoot(loc []string) string {
	if len(loc) == 0 {
		return `"" (the document)`
	}
	return pointer(loc)
}

// rowSchema compiles (or finds compiled) the row's schema.
func (s *Scorer) rowSchema(r *scorers.Rollout) (*compiled, scorers.Result) {
	v, ok := r.Field(s.p.SchemaField)
	if !ok {
		return nil, scorers.Skip(s.noField)
	}
	var raw any
	switch k := v.GetKind().(type) {
	case *structpb.Value_StringValue:
		raw = k.StringValue
	case *structpb.Value_StructValue, *structpb.Value_BoolValue:
		raw = v.AsInterface()
	default:
		return nil, scorers.Errorf("field %q holds no schema (want an object, a bool or a string of JSON)", s.p.SchemaField)
	}
	key, err := json.Marshal(raw)
	if err != nil {
		return nil, scorers.Errorf("field %q: %v", s.p.SchemaField, err)
	}
	c, err := s.cache.get(string(key), func() (*compiled, error) {
		doc, err := schemaDoc(raw)
		if err != nil {
			return nil, err
		}
		return compile(doc, s.draft)
	})
	if err != nil {
		return nil, scorers.Errorf("field %q: the schema does not compile: %v", s.p.SchemaField, err)
	}
	return c, scorers.Result{}
}

// cache holds the compiled schemas of the last cacheSize distinct row
// schemas (and their compile errors); a schema whose JSON is longer than
// cacheMaxKey is compiled each time, so that the keys hold at most 16 MiB.
// It is safe for concurrent use.
type cache struct {
	mu    sync.Mutex
	m     map[string]cached
	order []string
}

type cached struct {
	c   *compiled
	err error
}

const (
	cacheSize   = 256
	cacheMaxKey = 64 << 10
)

func newCache() *cache { return &cache{m: map[string]cached{}} }

func (c *cache) get(key string, compile func() (*compiled, error)) (*compiled, error) {
	if len(key) > cacheMaxKey {
		return compile()
	}
	c.mu.Lock()
	v, ok := c.m[key]
	c.mu.Unlock()
	if ok {
		return v.c, v.err
	}
	v.c, v.err = compile()
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[key]; !ok {
		if len(c.order) == cacheSize {
			delete(c.m, c.order[0])
			c.order = append(c.order[:0], c.order[1:]...)
		}
		c.m[key] = v
		c.order = append(c.order, key)
	}
	return v.c, v.err
}

// Extract returns the JSON document of a completion: the whole text, the
// last fenced block that parses, or the last top-level JSON object or
// array in the text; ok false when there is none.
func Extract(text string) (doc any, ok bool) {
	if doc, ok := parse(strings.TrimSpace(text)); ok {
		return doc, true
	}
	for _, block := range slices.Backward(fencedBlocks(text)) {
		if doc, ok := parse(strings.TrimSpace(block)); ok {
			return doc, true
		}
	}
	return lastValue(text)
}

// parse reads text as exactly one JSON value, numbers kept as written.
func parse(text string) (any, bool) {
	if text == "" {
		return nil, false
	}
	doc, err := js.UnmarshalJSON(strings.NewReader(text))
	return doc, err == nil
}

// fencedBlocks returns the bodies of the closed ``` blocks of text, in
// order (the info string, e.g. json, left out).
func fencedBlocks(text string) []string {
	var out []string
	for {
		i := strings.Index(text, "```")
		if i < 0 {
			return out
		}
		rest := text[i+3:]
		nl := strings.IndexByte(rest, '\n')
		if nl < 0 {
			return out
		}
		body := rest[nl+1:]
		end := strings.Index(body, "```")
		if end < 0 {
			return out
		}
		out = append(out, body[:end])
		text = body[end+3:]
	}
}

// maxStarts bounds the places lastValue tries to read a value from, so
// that a text of many "{" costs linear time.
const maxStarts = 64

// lastValue finds the last top-level JSON object or array in text: from
// each "{" or "[" that does not lie inside a value already read, it reads
// one value, and keeps the last that reads.
func lastValue(text string) (any, bool) {
	var last any
	found := false
	for tries, i := 0, 0; i < len(text) && tries < maxStarts; {
		j := strings.IndexAny(text[i:], "{[")
		if j < 0 {
			break
		}
		i += j
		tries++
		dec := json.NewDecoder(strings.NewReader(text[i:]))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			i++
			continue
		}
		last, found = v, true
		i += int(dec.InputOffset())
	}
	return last, found
}
