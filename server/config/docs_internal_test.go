package config

import (
	"fmt"
	"maps"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/rewardd/rewardd/scorers/builtin"
	"github.com/rewardd/rewardd/scorers/codeexec"
	"github.com/rewardd/rewardd/scorers/exactmatch"
	"github.com/rewardd/rewardd/scorers/format"
	"github.com/rewardd/rewardd/scorers/instructions"
	"github.com/rewardd/rewardd/scorers/jsonschema"
	"github.com/rewardd/rewardd/scorers/length"
	"github.com/rewardd/rewardd/scorers/mathverify"
	"github.com/rewardd/rewardd/scorers/multiplechoice"
	"github.com/rewardd/rewardd/scorers/regex"
	"github.com/rewardd/rewardd/scorers/repetition"
	"github.com/rewardd/rewardd/scorers/similarity"
	"github.com/rewardd/rewardd/scorers/toolcall"
)

// kindParams is the parameter struct each kind decodes its keys into
// (scorers.Kind decodes strictly into it). TestDocsListEveryKey wants it
// to name every kind the registry has, so that a new kind comes with its
// rows in docs/config.md.
var kindParams = map[string]reflect.Type{
	"code_exec":             reflect.TypeFor[codeexec.Params](),
	"exact_match":           reflect.TypeFor[exactmatch.Params](),
	"format":                reflect.TypeFor[format.Params](),
	"instruction_following": reflect.TypeFor[instructions.Params](),
	"json_schema":           reflect.TypeFor[jsonschema.Params](),
	"length":                reflect.TypeFor[length.Params](),
	"math":                  reflect.TypeFor[mathverify.Params](),
	"multiple_choice":       reflect.TypeFor[multiplechoice.Params](),
	"regex":                 reflect.TypeFor[regex.Params](),
	"repetition":            reflect.TypeFor[repetition.Params](),
	"similarity":            reflect.TypeFor[similarity.Params](),
	"tool_call":             reflect.TypeFor[toolcall.Params](),
}

// docKey is a key a config file may hold and the type of its value, as
// docs/config.md's "Every key" table names them.
type docKey struct{ key, typ string }

// configKeys lists every key of a config file: the file's own (nested keys
// dotted, a function's as functions[].name), then each kind's parameters
// as kind.key, from the structs the decoder fills.
func configKeys(t *testing.T) []docKey {
	t.Helper()
	var keys []docKey
	var walk func(prefix string, typ reflect.Type)
	walk = func(prefix string, typ reflect.Type) {
		for typ.Kind() == reflect.Pointer {
			typ = typ.Elem()
		}
		for i := range typ.NumField() {
			f := typ.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if name == "" || name == "-" {
				continue
			}
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			switch {
			case ft == reflect.TypeFor[[]yaml.Node]() && name == "functions":
				keys = append(keys, docKey{"functions", "list of functions"},
					docKey{"functions[].name", "string"}, docKey{"functions[].kind", "string"})
			case ft.Kind() == reflect.Struct && ft != reflect.TypeFor[yaml.Node]():
				walk(prefix+name+".", ft)
			default:
				keys = append(keys, docKey{prefix + name, typeName(t, prefix+name, ft)})
			}
		}
	}
	walk("", reflect.TypeFor[file]())
	kinds := builtin.Registry().Kinds()
	if listed := slices.Sorted(maps.Keys(kindParams)); !slices.Equal(listed, kinds) {
		t.Fatalf("kindParams names the kinds %v; the registry has %v: add the new kind's Params", listed, kinds)
	}
	for _, kind := range kinds {
		walk(kind+".", kindParams[kind])
	}
	return keys
}

// typeName is how docs/config.md names the type of a key's value.
func typeName(t *testing.T, key string, typ reflect.Type) string {
	switch {
	case typ == reflect.TypeFor[time.Duration]():
		return "duration"
	case typ == reflect.TypeFor[ByteSize]():
		return "bytes"
	}
	switch typ.Kind() {
	case reflect.String:
		return "string"
	case reflect.Int:
		return "integer"
	case reflect.Float64:
		return "number"
	case reflect.Bool:
		return "boolean"
	case reflect.Interface:
		return "any"
	case reflect.Slice:
		if typ.Elem().Kind() == reflect.String {
			return "list of strings"
		}
	case reflect.Map:
		if typ.Key().Kind() == reflect.String && typ.Elem().Kind() == reflect.Float64 {
			return "map of numbers"
		}
	}
	t.Fatalf("%s: no name for its type %v in docs/config.md: add one to typeName", key, typ)
	return ""
}

var keyRow = regexp.MustCompile("^\\| `([^`]+)` \\| ([^|]*?) \\|")

// TestDocsListEveryKey: docs/config.md's "Every key" table has a row for
// each key a config file may hold, with the type its value decodes as, and
// no row for a key that does not exist: a key added to a config or
// parameter struct without its line fails here.
func TestDocsListEveryKey(t *testing.T) {
	data, err := os.ReadFile("../../docs/config.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, found := strings.Cut(string(data), "\n## Every key\n")
	if !found {
		t.Fatal(`docs/config.md has no "## Every key" section`)
	}
	if end := strings.Index(table, "\n## "); end >= 0 {
		table = table[:end]
	}
	documented := map[string]string{}
	for line := range strings.SplitSeq(table, "\n") {
		if m := keyRow.FindStringSubmatch(line); m != nil {
			if _, dup := documented[m[1]]; dup {
				t.Errorf("docs/config.md lists %s twice", m[1])
			}
			documented[m[1]] = m[2]
		}
	}
	var missing []string
	want := map[string]bool{}
	for _, k := range configKeys(t) {
		want[k.key] = true
		typ, ok := documented[k.key]
		switch {
		case !ok:
			missing = append(missing, fmt.Sprintf("| `%s` | %s | | |", k.key, k.typ))
		case typ != k.typ:
			t.Errorf("docs/config.md: %s is a %s, the table says %q", k.key, k.typ, typ)
		}
	}
	if len(missing) > 0 {
		t.Errorf("docs/config.md's \"Every key\" table has no row for these keys (default and example to fill in):\n%s", strings.Join(missing, "\n"))
	}
	for k := range documented {
		if !want[k] {
			t.Errorf("docs/config.md lists %s, which no config struct has", k)
		}
	}
}
