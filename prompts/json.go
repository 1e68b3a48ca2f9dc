package prompts

import "encoding/json"

func jsonString(v any) (string, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	return string(b), err
}
