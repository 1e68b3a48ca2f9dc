package providers

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBoundedMapEvictsTheOldest(t *testing.T) {
	t.Parallel()
	b := NewBoundedMap[string, int](3)
	for i := range 10 {
		b.Put(fmt.Sprint(i), i)
	}
	b.Update("9", func(old int, found bool) int { return old + 100 }) // an update is not an insertion
	got := map[string]int{}
	for i := range 10 {
		if v, ok := b.Get(fmt.Sprint(i)); ok {
			got[fmt.Sprint(i)] = v
		}
	}
	if diff := cmp.Diff(map[string]int{"7": 7, "8": 8, "9": 109}, got); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	if b.Len() != 3 {
		t.Errorf("Len = %d", b.Len())
	}
}

func TestValidatorCacheIsBounded(t *testing.T) {
	t.Parallel()
	for i := range maxCachedValidators + 50 {
		if _, err := CompileSchema([]byte(fmt.Sprintf(`{"type":"object","description":"s%d"}`, i))); err != nil {
			t.Fatal(err)
		}
	}
	if n := validatorCache.Len(); n > maxCachedValidators {
		t.Errorf("%d compiled schemas cached, want at most %d", n, maxCachedValidators)
	}
}
