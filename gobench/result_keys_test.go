package main

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"gobench/internal/cli"
)

// schemaPath is the one list of the result line's standard keys, owned by
// the harness (relative to this package's directory).
const schemaPath = "../bench_src/run/result_keys.json"

// resultKey is one entry of the schema.
type resultKey struct {
	Key      string `json:"key"`
	Type     string `json:"type"`
	Required bool   `json:"required"`
	Stored   string `json:"stored"`
	Meaning  string `json:"meaning"`
}

var schema struct {
	once sync.Once
	keys []resultKey
	err  error
}

// resultKeys reads the schema (once per test run).
func resultKeys(t *testing.T) []resultKey {
	t.Helper()
	schema.once.Do(func() {
		b, err := os.ReadFile(schemaPath)
		if err != nil {
			schema.err = err
			return
		}
		var doc struct {
			Keys []resultKey `json:"keys"`
		}
		if schema.err = json.Unmarshal(b, &doc); schema.err == nil && len(doc.Keys) == 0 {
			schema.err = os.ErrNotExist
		}
		schema.keys = doc.Keys
	})
	if schema.err != nil {
		t.Fatalf("reading %s: %v", schemaPath, schema.err)
	}
	return schema.keys
}

// TestResultStructMatchesTheSchema: cli.Result's JSON keys are the
// schema's, in its order, and a key may be left out (omitempty) exactly
// when the schema does not require it.
func TestResultStructMatchesTheSchema(t *testing.T) {
	keys := resultKeys(t)
	var fields []resultKey
	rt := reflect.TypeFor[cli.Result]()
	for i := range rt.NumField() {
		name, opts, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		fields = append(fields, resultKey{Key: name, Required: !slices.Contains(strings.Split(opts, ","), "omitempty")})
	}
	if len(fields) != len(keys) {
		t.Fatalf("cli.Result has %d keys, the schema %d: %v", len(fields), len(keys), fields)
	}
	for i, f := range fields {
		if f.Key != keys[i].Key || f.Required != keys[i].Required {
			t.Errorf("key %d: cli.Result has %q (required %v), the schema %q (required %v)",
				i, f.Key, f.Required, keys[i].Key, keys[i].Required)
		}
	}
}

// checkSchema checks a result line against the schema: every required key
// present, every standard key of its type.
func checkSchema(t *testing.T, m map[string]any) {
	t.Helper()
	for _, k := range resultKeys(t) {
		v, ok := m[k.Key]
		if !ok {
			if k.Required {
				t.Errorf("required key %q missing from %v", k.Key, m)
			}
			continue
		}
		var typeOK bool
		switch x := v.(type) {
		case string:
			typeOK = k.Type == "string"
		case float64:
			typeOK = k.Type == "integer" && x == float64(int64(x))
		case map[string]any:
			typeOK = k.Type == "object"
		case []any:
			typeOK = k.Type == "array"
		}
		if !typeOK {
			t.Errorf("key %q = %v (%T), want a JSON %s", k.Key, v, v, k.Type)
		}
	}
}
