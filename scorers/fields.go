package scorers

import (
	"fmt"
	"math"
	"strconv"

	"google.golang.org/protobuf/types/known/structpb"
)

// Strings reads a row field that holds one string or a list of strings (for
// example several acceptable reference answers). Numbers are accepted and
// written the shortest way that reads back the same (18, not 18.000000), since
// datasets often store numeric answers as numbers.
//
// It returns found=false when the field is absent or null, and an error naming
// the field when it holds something else (a bool, an object, a list with a
// non-string item).
func Strings(r *Rollout, field string) (vals []string, found bool, err error) {
	v, ok := r.Field(field)
	if !ok {
		return nil, false, nil
	}
	if l, isList := v.Kind.(*structpb.Value_ListValue); isList {
		items := l.ListValue.GetValues()
		if len(items) == 0 {
			return nil, false, nil
		}
		vals = make([]string, 0, len(items))
		for i, it := range items {
			s, err := scalarString(it)
			if err != nil {
				return nil, true, fmt.Errorf("field %q item %d: %w", field, i, err)
			}
			vals = append(vals, s)
		}
		return vals, true, nil
	}
	s, err := scalarString(v)
	if err != nil {
		return nil, true, fmt.Errorf("field %q: %w", field, err)
	}
	return []string{s}, true, nil
}

// String reads a row field that must hold a single string (or number).
func String(r *Rollout, field string) (s string, found bool, err error) {
	v, ok := r.Field(field)
	if !ok {
		return "", false, nil
	}
	s, err = scalarString(v)
	if err != nil {
		return "", true, fmt.Errorf("field %q: %w", field, err)
	}
	return s, true, nil
}

func scalarString(v *structpb.Value) (string, error) {
	switch k := v.GetKind().(type) {
	case *structpb.Value_StringValue:
		return k.StringValue, nil
	case *structpb.Value_NumberValue:
		f := k.NumberValue
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return "", fmt.Errorf("holds the non-finite number %v", f)
		}
		return strconv.FormatFloat(f, 'f', -1, 64), nil
	case *structpb.Value_BoolValue:
		return "", fmt.Errorf("holds a bool, want a string or a number")
	case *structpb.Value_ListValue:
		return "", fmt.Errorf("holds a list, want a string or a number")
	case *structpb.Value_StructValue:
		return "", fmt.Errorf("holds an object, want a string or a number")
	default:
		return "", fmt.Errorf("holds null, want a string or a number")
	}
}
