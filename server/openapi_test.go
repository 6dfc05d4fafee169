package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/rewardd/rewardd/internal/servertest"
	_ "github.com/rewardd/rewardd/proto/reward/v1" // reward.v1's descriptors, for x-proto-message
	"github.com/rewardd/rewardd/scorers/builtin"
	"github.com/rewardd/rewardd/server"
	"github.com/rewardd/rewardd/server/config"
)

// openAPIPath is the HTTP port's OpenAPI document, which docs/http.md
// explains.
const openAPIPath = "../docs/openapi.yaml"

// loadOpenAPI reads and validates the OpenAPI document as a client
// generator would.
func loadOpenAPI(t *testing.T) *openapi3.T {
	t.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromFile(openAPIPath)
	if err != nil {
		t.Fatalf("%s: %v", openAPIPath, err)
	}
	if err := doc.Validate(loader.Context, openapi3.EnableExamplesValidation()); err != nil {
		t.Fatalf("%s is not a valid OpenAPI document: %v", openAPIPath, err)
	}
	return doc
}

// startDefault serves the embedded default config, what `rewardd serve`
// serves with no --config and what the document's examples are written
// for, with code_exec allowed inline so that POST /run_code answers; it
// has no sandbox, so its programs get SandboxError (whose answer the
// document describes as well as any other).
func startDefault(t *testing.T) *servertest.Server {
	t.Helper()
	kinds := builtin.Registry()
	text := string(config.Default()) + "\ninline:\n  kinds: [exact_match, regex, code_exec]\n"
	cfg, err := config.Load("default.yaml", []byte(text), kinds)
	if err != nil {
		t.Fatal(err)
	}
	return servertest.Start(t, server.Options{Config: cfg, Kinds: kinds, Workers: 2})
}

// operation is one documented method on one path.
type operation struct {
	method, path string
	item         *openapi3.PathItem
	op           *openapi3.Operation
}

func (o operation) String() string { return o.method + " " + o.path }

// operations lists doc's operations, sorted.
func operations(doc *openapi3.T) []operation {
	var ops []operation
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			ops = append(ops, operation{method, path, item, op})
		}
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].String() < ops[j].String() })
	return ops
}

// TestOpenAPICoversRoutes holds docs/openapi.yaml to the routes the server
// registers (server.Routes: each "METHOD /path" of its muxes): every route
// is documented with its method, and every documented operation is served
// over a real socket, neither the mux's 404 nor its 405.
func TestOpenAPICoversRoutes(t *testing.T) {
	doc := loadOpenAPI(t)
	srv := startDefault(t)
	routes := server.Routes(srv.Server)
	if len(routes) < 10 {
		t.Fatalf("server.Routes lists %d routes: %q; want every route the HTTP port serves", len(routes), routes)
	}
	for _, gap := range routeGaps(doc, routes) {
		t.Error(gap)
	}
	for _, o := range operations(doc) {
		// The doc's first example, or none: a real request, which the
		// route must reach whatever it makes of the body.
		body := []byte("{}")
		if names := exampleNames(o.op); len(names) > 0 {
			body = exampleBody(t, o.op, names[0])
		}
		code, ctype, got := do(t, o.method, srv.HTTPURL+o.path, body)
		if code == http.StatusMethodNotAllowed || code == http.StatusNotFound && ctype != "application/json" {
			t.Errorf("%s: %d %q: the server's mux does not route it", o, code, got)
		}
	}
}

// routeGaps says what of routes doc does not document, and what it
// documents that routes lacks.
func routeGaps(doc *openapi3.T, routes []string) []string {
	var gaps, documented []string
	for _, o := range operations(doc) {
		documented = append(documented, o.String())
		if !slices.Contains(routes, o.String()) {
			gaps = append(gaps, fmt.Sprintf("%s documents %s, which the server does not register (it serves %q)", openAPIPath, o, routes))
		}
	}
	for _, r := range routes {
		if !slices.Contains(documented, r) {
			gaps = append(gaps, fmt.Sprintf("the server serves %q, which %s does not document: add it (and its schemas) there, and explain it in docs/http.md", r, openAPIPath))
		}
	}
	return gaps
}

// TestOpenAPIChecksCatchMistakes shows routeGaps failing on what it is for:
// a route added without its entry, a method changed, an entry left behind.
func TestOpenAPIChecksCatchMistakes(t *testing.T) {
	doc := loadOpenAPI(t)
	var routes []string
	for _, o := range operations(doc) {
		routes = append(routes, o.String())
	}
	if gaps := routeGaps(doc, routes); len(gaps) > 0 {
		t.Fatalf("the document against its own routes: %q", gaps)
	}
	for name, mutated := range map[string][]string{
		"a route without docs": append(slices.Clone(routes), "GET /v1/extra"),
		"another method":       append(slices.DeleteFunc(slices.Clone(routes), func(r string) bool { return r == "GET /v1/functions" }), "POST /v1/functions"),
		"a route removed":      slices.DeleteFunc(slices.Clone(routes), func(r string) bool { return r == "POST /verify" }),
	} {
		if gaps := routeGaps(doc, mutated); len(gaps) == 0 {
			t.Errorf("%s: routeGaps finds nothing", name)
		}
	}
}

// TestOpenAPINamesDoNotCollide: client generators name an operation's types
// after its operationId (oapi-codegen: PostScoreResponse, PostScoreParams,
// PostScoreJSONRequestBody); one that equals a schema's name is declared
// twice, and the generated Go client does not compile (seen with
// oapi-codegen v2.8.2 when the operation was "score" beside the schema
// ScoreResponse).
func TestOpenAPINamesDoNotCollide(t *testing.T) {
	doc := loadOpenAPI(t)
	for _, o := range operations(doc) {
		id := o.op.OperationID
		if id == "" {
			t.Errorf("%s has no operationId", o)
			continue
		}
		base := strings.ToUpper(id[:1]) + id[1:]
		for _, suffix := range []string{"", "Response", "Request", "Params", "JSONRequestBody", "JSONBody", "RequestBody"} {
			if _, clash := doc.Components.Schemas[base+suffix]; clash {
				t.Errorf("%s: operationId %q makes the type %s, which is also a schema's name", o, id, base+suffix)
			}
		}
	}
}

// TestOpenAPIExamples sends every request example of the document to a real
// server on the default config, and checks the request against the
// document (the examples are what a reader copies) and the real answer
// against the response schemas, whose additionalProperties: false make a
// key the document lacks an error. A body that is not JSON must be answered
// with a documented error.
func TestOpenAPIExamples(t *testing.T) {
	doc := loadOpenAPI(t)
	srv := startDefault(t)
	ctx := context.Background()
	checked := 0
	for _, o := range operations(doc) {
		names := exampleNames(o.op)
		if len(names) == 0 {
			names = []string{""} // the operation without a body
		}
		for _, name := range names {
			var body []byte
			if name != "" {
				body = exampleBody(t, o.op, name)
			}
			req, err := http.NewRequest(o.method, srv.HTTPURL+o.path, bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			if body != nil {
				req.Header.Set("Content-Type", "application/json")
			}
			route := &routers.Route{Spec: doc, Path: o.path, PathItem: o.item, Method: o.method, Operation: o.op}
			in := &openapi3filter.RequestValidationInput{Request: req, Route: route,
				Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
			if err := openapi3filter.ValidateRequest(ctx, in); err != nil {
				t.Errorf("%s example %q does not fit its own document: %v", o, name, err)
				continue
			}
			req.Body = io.NopCloser(bytes.NewReader(body))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			if err := validateResponse(ctx, in, resp, got); err != nil {
				t.Errorf("%s example %q: the answer (%d) does not fit the document: %v\nanswer: %s", o, name, resp.StatusCode, err, got)
			}
			if o.path != "/readyz" && resp.StatusCode != http.StatusOK {
				t.Errorf("%s example %q: %d %s; want 200 on the default config", o, name, resp.StatusCode, got)
			}
			checked++

			if o.op.RequestBody == nil || !o.op.RequestBody.Value.Required {
				continue
			}
			// A body that is not JSON: an error the document lists.
			code, _, got := do(t, o.method, srv.HTTPURL+o.path, []byte(`{"not json`))
			if code != http.StatusBadRequest {
				t.Errorf("%s with a body that is not JSON: %d %s; want 400", o, code, got)
			}
			bad := &http.Response{StatusCode: code, Header: http.Header{"Content-Type": {"application/json"}}}
			if err := validateResponse(ctx, in, bad, got); err != nil {
				t.Errorf("%s with a body that is not JSON: the answer does not fit the document: %v\nanswer: %s", o, err, got)
			}
		}
	}
	if checked < 12 {
		t.Errorf("checked %d examples; the document should have one per operation at least", checked)
	}
}

// validateResponse checks an answer against the document.
func validateResponse(ctx context.Context, in *openapi3filter.RequestValidationInput, resp *http.Response, body []byte) error {
	return openapi3filter.ValidateResponse(ctx, &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in,
		Status:                 resp.StatusCode,
		Header:                 resp.Header,
		Body:                   io.NopCloser(bytes.NewReader(body)),
		Options:                &openapi3filter.Options{IncludeResponseStatus: true},
	})
}

// exampleNames lists the named examples of op's JSON request body, sorted.
func exampleNames(op *openapi3.Operation) []string {
	if op.RequestBody == nil {
		return nil
	}
	mt := op.RequestBody.Value.Content.Get("application/json")
	if mt == nil {
		return nil
	}
	var names []string
	for name := range mt.Examples {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// exampleBody is op's request example name, as JSON.
func exampleBody(t *testing.T, op *openapi3.Operation, name string) []byte {
	t.Helper()
	ex := op.RequestBody.Value.Content.Get("application/json").Examples[name].Value
	out, err := json.Marshal(ex.Value)
	if err != nil {
		t.Fatalf("example %q: %v", name, err)
	}
	return out
}

// do sends body with method to url and returns the answer's status,
// media type and body.
func do(t *testing.T, method, url string, body []byte) (int, string, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return resp.StatusCode, mt, got
}

// TestOpenAPIProtoSchemas holds each schema marked x-proto-message to that
// message of reward.v1 in the proto's JSON mapping: the same fields by JSON
// name, each of the matching type (a string for a 64-bit integer, Double
// for a double, the enum's names, an object for a map or a Struct). A field
// added to the proto without its line in the document fails here.
func TestOpenAPIProtoSchemas(t *testing.T) {
	for _, gap := range protoSchemaGaps(loadOpenAPI(t)) {
		t.Error(gap)
	}
}

// TestOpenAPIProtoChecksCatchMistakes shows protoSchemaGaps failing on what
// it is for: a proto field without its property, a property of no field, a
// property of the wrong type, a message without its schema.
func TestOpenAPIProtoChecksCatchMistakes(t *testing.T) {
	for name, mutate := range map[string]func(doc *openapi3.T){
		"a field without its property": func(doc *openapi3.T) {
			delete(doc.Components.Schemas["ScoreRequest"].Value.Properties, "omitOkReasons")
		},
		"a property of no field": func(doc *openapi3.T) {
			doc.Components.Schemas["ScoreResponse"].Value.Properties["gone"] = openapi3.NewStringSchema().NewRef()
		},
		"an int64 as a number": func(doc *openapi3.T) {
			doc.Components.Schemas["TestExecution"].Value.Properties["memoryBytes"] = openapi3.NewInt64Schema().NewRef()
		},
		"a message without its schema": func(doc *openapi3.T) {
			delete(doc.Components.Schemas["Execution"].Value.Extensions, "x-proto-message")
		},
	} {
		doc := loadOpenAPI(t) // a fresh copy each time
		mutate(doc)
		if gaps := protoSchemaGaps(doc); len(gaps) == 0 {
			t.Errorf("%s: protoSchemaGaps finds nothing", name)
		}
	}
}

// protoSchemaGaps says where doc's x-proto-message schemas differ from
// their proto messages, and which message the HTTP bodies reach has no
// schema.
func protoSchemaGaps(doc *openapi3.T) []string {
	var gaps []string
	errorf := func(format string, args ...any) { gaps = append(gaps, fmt.Sprintf(format, args...)) }
	seen := map[protoreflect.FullName]bool{}
	for name, ref := range doc.Components.Schemas {
		full, ok := ref.Value.Extensions["x-proto-message"].(string)
		if !ok {
			continue
		}
		d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(full))
		if err != nil {
			errorf("schema %s: x-proto-message %q: %v", name, full, err)
			continue
		}
		md, ok := d.(protoreflect.MessageDescriptor)
		if !ok {
			errorf("schema %s: x-proto-message %q is not a message", name, full)
			continue
		}
		seen[md.FullName()] = true
		props := ref.Value.Properties
		fields := md.Fields()
		for i := 0; i < fields.Len(); i++ {
			fd := fields.Get(i)
			p, ok := props[fd.JSONName()]
			if !ok {
				errorf("schema %s lacks %s's field %s (JSON %q), want %s", name, full, fd.Name(), fd.JSONName(), fieldShape(fd))
				continue
			}
			if got, want := schemaShape(p), fieldShape(fd); got != want {
				errorf("schema %s, property %s: %s, want %s (%s)", name, fd.JSONName(), got, want, fd.FullName())
			}
		}
		for prop := range props {
			if fields.ByJSONName(prop) == nil {
				errorf("schema %s has property %q, which %s has no field of", name, prop, full)
			}
		}
	}
	// Every message of the HTTP routes' bodies has its schema.
	var walk func(md protoreflect.MessageDescriptor)
	walk = func(md protoreflect.MessageDescriptor) {
		if md.ParentFile().Package() != "reward.v1" || md.IsMapEntry() {
			return
		}
		if !seen[md.FullName()] {
			errorf("%s has no schema marked x-proto-message: %s", openAPIPath, md.FullName())
		}
		seen[md.FullName()] = true // reported once
		fields := md.Fields()
		for i := 0; i < fields.Len(); i++ {
			fd := fields.Get(i)
			if fd.IsMap() {
				fd = fd.MapValue()
			}
			if sub := fd.Message(); sub != nil {
				walk(sub)
			}
		}
	}
	for _, m := range []string{"ScoreRequest", "ScoreResponse", "ListFunctionsResponse"} {
		d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName("reward.v1." + m))
		if err != nil {
			errorf("reward.v1.%s: %v", m, err)
			continue
		}
		walk(d.(protoreflect.MessageDescriptor))
	}
	return gaps
}

// fieldShape is what a field is in the proto's JSON mapping, in the terms
// of schemaShape.
func fieldShape(fd protoreflect.FieldDescriptor) string {
	if fd.IsMap() {
		return "map<" + singularShape(fd.MapValue()) + ">"
	}
	if fd.IsList() {
		return "list<" + singularShape(fd) + ">"
	}
	return singularShape(fd)
}

func singularShape(fd protoreflect.FieldDescriptor) string {
	switch fd.Kind() {
	case protoreflect.StringKind:
		return "string"
	case protoreflect.BoolKind:
		return "boolean"
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return "int32"
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return "uint32"
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind,
		protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return "int64 string"
	case protoreflect.DoubleKind, protoreflect.FloatKind:
		return "Double"
	case protoreflect.EnumKind:
		var names []string
		vals := fd.Enum().Values()
		for i := 0; i < vals.Len(); i++ {
			names = append(names, string(vals.Get(i).Name()))
		}
		return "enum" + fmt.Sprint(names)
	case protoreflect.MessageKind:
		switch fd.Message().FullName() {
		case "google.protobuf.Struct":
			return "object"
		case "google.protobuf.Value":
			return "any"
		}
		return "$" + string(fd.Message().Name())
	}
	return "unmapped kind " + fd.Kind().String()
}

// schemaShape is what a property's schema admits, in fieldShape's terms.
// An enum's schema may list the config file's names beside the proto's
// (Aggregation); only the proto's count here.
func schemaShape(ref *openapi3.SchemaRef) string {
	if ref.Ref != "" {
		name := ref.Ref[strings.LastIndex(ref.Ref, "/")+1:]
		if name == "Double" {
			return "Double"
		}
		if len(ref.Value.Enum) > 0 {
			return enumShape(ref.Value)
		}
		return "$" + name
	}
	s := ref.Value
	switch {
	case len(s.Enum) > 0:
		return enumShape(s)
	case s.Type.Is("array"):
		return "list<" + schemaShape(s.Items) + ">"
	case s.Type.Is("object") && s.AdditionalProperties.Schema != nil:
		return "map<" + schemaShape(s.AdditionalProperties.Schema) + ">"
	case s.Type.Is("object"):
		return "object"
	case s.Type.Is("integer") && s.Format == "int32" && s.Min != nil && *s.Min == 0:
		return "uint32"
	case s.Type.Is("integer") && s.Format == "int32":
		return "int32"
	case s.Type.Is("string") && s.Format == "int64":
		return "int64 string"
	case s.Type.Is("string"), s.Type.Is("boolean"):
		return s.Type.Slice()[0]
	case s.Type == nil || len(s.Type.Slice()) == 0:
		return "any"
	}
	return fmt.Sprintf("unmapped schema %v/%s", s.Type.Slice(), s.Format)
}

func enumShape(s *openapi3.Schema) string {
	var names []string
	for _, v := range s.Enum {
		if n, ok := v.(string); ok && strings.ToUpper(n) == n {
			names = append(names, n)
		}
	}
	return "enum" + fmt.Sprint(names)
}
