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
	// Limits says what each param accepts, so that the harness can check that
	// its plan never lets through a value this program refuses.
	Limits map[string]Limit `json:"limits"`
}

// Limit is what one param accepts: Choices when it has them, otherwise an
// integer in [Min, Max].
type Limit struct {
	Choices []string `json:"choices,omitempty"`
	Min     *int64   `json:"min,omitempty"`
	Max     *int64   `json:"max,omitempty"`
}

// Catalog describes every workload by name.
func Catalog() map[string]CatalogEntry {
	out := make(map[string]CatalogEntry, len(registry))
	for _, s := range registry {
		limits := make(map[string]Limit, len(s.Params))
		for _, p := range s.Params {
			if p.Choices != nil {
				limits[p.Name] = Limit{Choices: p.Choices}
			} else {
				lo, hi := p.Min, p.Max
				limits[p.Name] = Limit{Min: &lo, Max: &hi}
			}
		}
		out[s.Name] = CatalogEntry{
			Variants:       s.Variants,
			DefaultVariant: s.DefaultVariant,
			Params:         s.Defaults(),
			Limits:         limits,
		}
	}
	return out
}
