package workloads

import (
	"maps"
	"slices"
	"testing"
)

// TestIOCatalog pins what `gobench list` reports for the I/O and database
// workloads: variants in order (the first is the default) and param
// defaults.
func TestIOCatalog(t *testing.T) {
	want := map[string]CatalogEntry{
		"files_read": {
			Variants:       []string{"readfile", "chan-per-task"},
			DefaultVariant: "readfile",
			Params:         map[string]string{"retain": "digest", "digest": "on"},
		},
		"files_rw": {
			Variants:       []string{"readfile", "chan-per-task"},
			DefaultVariant: "readfile",
			Params:         map[string]string{"retain": "digest", "digest": "on"},
		},
		"sqlite": {
			Variants:       []string{"pool", "chan-per-task", "serialized-writes"},
			DefaultVariant: "pool",
			Params:         map[string]string{"journal": "wal", "pool": "8", "driver": "mattn"},
		},
		"mysql": {
			Variants:       []string{"pool", "chan-per-task"},
			DefaultVariant: "pool",
			Params:         map[string]string{"pool": "64", "driver": "go-sql-driver"},
		},
		"postgres": {
			Variants:       []string{"pool", "chan-per-task"},
			DefaultVariant: "pool",
			Params:         map[string]string{"pool": "64", "driver": "pgx"},
		},
	}
	got := Catalog()
	for name, w := range want {
		g, ok := got[name]
		if !ok {
			t.Errorf("%s missing from the catalog", name)
			continue
		}
		if !slices.Equal(g.Variants, w.Variants) || g.DefaultVariant != w.DefaultVariant || !maps.Equal(g.Params, w.Params) {
			t.Errorf("%s: got %+v, want %+v", name, g, w)
		}
	}
}
