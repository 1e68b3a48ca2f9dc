package providers

import "strings"

// Family returns the model family of a reference, used for the independence
// checks of shadow scoring (a seal author of another family than the
// implementer is "strong" independence). Mock personas are each their own
// family ("mock-honest"), so a mock seal author and a mock commander of the
// same persona are not independent.
func Family(ref Ref) string {
	m := strings.ToLower(ref.Model)
	if i := strings.LastIndex(m, "/"); i >= 0 { // "meta-llama/llama-3.1" style names
		m = m[i+1:]
	}
	switch {
	case ref.Kind == "mock":
		return "mock-" + m
	case strings.HasPrefix(m, "gpt"), strings.HasPrefix(m, "o1"), strings.HasPrefix(m, "o3"),
		strings.HasPrefix(m, "o4"), strings.HasPrefix(m, "chatgpt"), strings.HasPrefix(m, "text-"):
		return "openai"
	case strings.Contains(m, "claude"):
		return "anthropic"
	case strings.Contains(m, "gemini"), strings.Contains(m, "gemma"):
		return "google"
	case strings.Contains(m, "llama"):
		return "meta"
	case strings.Contains(m, "qwen"):
		return "alibaba"
	case strings.Contains(m, "mistral"), strings.Contains(m, "mixtral"), strings.Contains(m, "codestral"):
		return "mistral"
	case strings.Contains(m, "deepseek"):
		return "deepseek"
	case strings.Contains(m, "phi"):
		return "microsoft"
	case strings.Contains(m, "titan"), strings.Contains(m, "nova"):
		return "amazon"
	case strings.Contains(m, "command"):
		return "cohere"
	}
	switch ref.Kind {
	case "anthropic":
		return "anthropic"
	case "google", "gemini":
		return "google"
	case "mistral":
		return "mistral"
	}
	return ref.Kind + "-" + m
}
