// Package workloads defines every benchmark workload. Each workload lives in
// its own file and declares a Spec; adding one means adding its file and one
// line to the registry below.
package workloads

// registry lists every workload, in the order `gobench list` reports them.
var registry = []*Spec{
	sleepSpec,
	filesReadSpec,
	filesRWSpec,
	sqliteSpec,
	mysqlSpec,
	postgresSpec,
	cpuLoopsSpec,
	idleTasksSpec,
	threadsVsTasksSpec,
	pingPongSpec,
}

// Lookup returns the workload called name.
func Lookup(name string) (*Spec, bool) {
	for _, s := range registry {
		if s.Name == name {
			return s, true
		}
	}
	return nil, false
}

// All returns every registered workload.
func All() []*Spec {
	return registry
}

// CatalogEntry is how `gobench list` describes a workload.
type CatalogEntry struct {
	Variants       []string          `json:"variants"`
	DefaultVariant string            `json:"default_variant"`
	Params         map[string]string `json:"params"`
}

// Catalog describes every workload by name.
func Catalog() map[string]CatalogEntry {
	out := make(map[string]CatalogEntry, len(registry))
	for _, s := range registry {
		out[s.Name] = CatalogEntry{
			Variants:       s.Variants,
			DefaultVariant: s.DefaultVariant,
			Params:         s.Defaults(),
		}
	}
	return out
}
