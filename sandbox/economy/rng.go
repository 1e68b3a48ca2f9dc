package economy

import "math/rand/v2"

// Source is the only thing the mechanisms ask of a random generator: a
// float64 uniform in [0, 1). *rand.Rand satisfies it; tests may script it.
type Source interface {
	Float64() float64
}

// NormSource is a Source that can also draw a standard normal value (the
// confidence cascade needs one). *rand.Rand satisfies it.
type NormSource interface {
	Source
	NormFloat64() float64
}

// SeedStream is the second PCG word of every generator NewRand makes. It is
// fixed so that a seed alone names the sequence ("SWARMECO" in ASCII).
const SeedStream uint64 = 0x535741524d45434f

// NewRand returns the package's seeded generator: PCG with state words
// (seed, SeedStream). Equal seeds give equal sequences on every platform.
func NewRand(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, SeedStream))
}

// uniform is Python's random.uniform(a, b) = a + (b−a)·random().
func uniform(r Source, a, b float64) float64 { return a + (b-a)*r.Float64() }
