package providers

import "sync"

// BoundedMap is a map safe for concurrent use that holds at most Cap
// entries: adding one more evicts the oldest (first in, first out). Caches
// keyed by what clients send (schemas, request hashes) use it, so no input
// makes them grow without bound. The zero value holds nothing; set Cap.
type BoundedMap[K comparable, V any] struct {
	Cap   int
	mu    sync.Mutex
	m     map[K]V
	order []K // insertion order, a ring of len Cap once full
	next  int // next slot of order to overwrite
}

// NewBoundedMap returns a map of at most capacity entries.
func NewBoundedMap[K comparable, V any](capacity int) *BoundedMap[K, V] {
	return &BoundedMap[K, V]{Cap: capacity}
}

// Get returns the value stored for k.
func (b *BoundedMap[K, V]) Get(k K) (V, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	v, ok := b.m[k]
	return v, ok
}

// Put stores v for k, evicting the oldest entry when the map is full.
func (b *BoundedMap[K, V]) Put(k K, v V) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.put(k, v)
}

func (b *BoundedMap[K, V]) put(k K, v V) {
	if b.Cap <= 0 {
		return
	}
	if b.m == nil {
		b.m = map[K]V{}
	}
	if _, ok := b.m[k]; ok {
		b.m[k] = v
		return
	}
	if len(b.order) < b.Cap {
		b.order = append(b.order, k)
	} else {
		delete(b.m, b.order[b.next])
		b.order[b.next] = k
		b.next = (b.next + 1) % b.Cap
	}
	b.m[k] = v
}

// Update sets k's value to f(old, found) atomically and returns it.
func (b *BoundedMap[K, V]) Update(k K, f func(old V, found bool) V) V {
	b.mu.Lock()
	defer b.mu.Unlock()
	old, ok := b.m[k]
	v := f(old, ok)
	b.put(k, v)
	return v
}

// Len returns the number of entries.
func (b *BoundedMap[K, V]) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.m)
}
