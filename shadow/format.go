package shadow

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Float is a number the reports print the way the Shadow Score Spec's
// reference validator prints it: a whole number keeps one decimal ("60.0",
// never "60"); other values print in their shortest exact form ("11.1").
// NaN and infinities are refused: a report carries true numbers or none.
type Float float64

// MarshalJSON implements json.Marshaler.
func (f Float) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil, fmt.Errorf("shadow: %v is not a reportable number", v)
	}
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	return []byte(s), nil
}
