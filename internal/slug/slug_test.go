package slug

import "testing"

func TestMake(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in, want string }{
		{"a mission file name: lower case, the dot a dash", "Auth-Migration.md", "auth-migration-md"},
		{"runs of other characters become one dash", "openai:gpt-4.1 / mini", "openai-gpt-4-1-mini"},
		{"no dash at either end", "  (draft)  ", "draft"},
		{"non-ASCII letters are not kept", "Überprüfung", "berpr-fung"},
		{"nothing usable gives an empty slug", "***", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Make(tc.in); got != tc.want {
				t.Errorf("Make(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
