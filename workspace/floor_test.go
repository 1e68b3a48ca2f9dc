package workspace

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/swarm-dev/swarm/citation"
)

// assertDenied checks that p cannot be reached by any tool or by Verify,
// and that its content reaches no answer.
func assertDenied(t *testing.T, f *FS, p string) {
	t.Helper()
	s := f.Session(nil)
	if o := call(t, s, ToolReadFile, map[string]any{"path": p}); o.Refusal != RefusalDenied {
		t.Errorf("read_file %s: %s, want denied", p, o.Result)
	}
	if ck := f.Verify(citation.Citation{Path: p, StartLine: 1, EndLine: 1, Quote: canary}); ck.State != Unverifiable {
		t.Errorf("Verify %s: %+v, want unverifiable", p, ck)
	}
	for _, c := range []struct{ tool, args string }{
		{ToolGrep, `{"pattern":"CANARY"}`},
		{ToolGlob, `{"pattern":"**"}`},
		{ToolListDir, fmt.Sprintf(`{"path":%q}`, filepath.ToSlash(filepath.Dir(p)))},
	} {
		o := callRaw(t.Context(), s, c.tool, c.args)
		noCanary(t, c.tool+" "+c.args, o.Result)
		if c.tool == ToolGlob && strings.Contains(o.Result, `"`+p+`"`) {
			t.Errorf("glob lists %s: %s", p, o.Result)
		}
	}
}

// TestSwarmignoreCannotLowerTheFloor: a workspace's own .swarmignore may
// only add to the deny list. Its negations that would re-include what the
// built-in list denies are dropped, each reported once naming the line.
// On main a line "!.env" let the agents read .env.
func TestSwarmignoreCannotLowerTheFloor(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		swarmign  string
		secret    string // the denied file holding the canary
		wantWarns []string
	}{
		{"!.env re-includes an environment file", "# mine\n!.env\n", ".env",
			[]string{`.swarmignore:2: "!.env" ignored`}},
		{"!.git re-includes git metadata", "!.git\n!.git/\n", ".git/config",
			[]string{`.swarmignore:1: "!.git" ignored`, `.swarmignore:2: "!.git/" ignored`}},
		{"!*.pem re-includes certificates", "!*.pem\n", "server.pem",
			[]string{`.swarmignore:1: "!*.pem" ignored`}},
		{"!id_* re-includes SSH keys", "\n!id_*\n", "id_ed25519",
			[]string{`.swarmignore:2: "!id_*" ignored`}},
		{"a nested directory: !config/.env", "!config/.env\n", "config/.env",
			[]string{`.swarmignore:1: "!config/.env" ignored`}},
		{"a nested directory with a glob: !**/keys/*.pem", "!**/keys/*.pem\n", "deploy/keys/tls.pem",
			[]string{`.swarmignore:1: "!**/keys/*.pem" ignored`}},
		{"a home credential store: !.aws/credentials", "!.aws/credentials\n", ".aws/credentials",
			[]string{`.swarmignore:1: "!.aws/credentials" ignored`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, map[string]string{".swarmignore": tc.swarmign, tc.secret: "KEY=" + canary + "\n", "a.go": "package a\n"})
			f := open(t, dir, Options{})
			assertDenied(t, f, tc.secret)
			var got []string
			for _, w := range f.Warnings() {
				got = append(got, w[:strings.Index(w, " ignored")+len(" ignored")])
				if !strings.Contains(w, "workspace.allow") {
					t.Errorf("warning %q does not say how to allow it", w)
				}
			}
			if d := cmp.Diff(tc.wantWarns, got); d != "" {
				t.Errorf("warnings (-want +got):\n%s", d)
			}
			// Reported once: the tools do not repeat them.
			if d := cmp.Diff(len(tc.wantWarns), len(f.TakeWarnings())); d != "" {
				t.Errorf("TakeWarnings (-want +got):\n%s", d)
			}
			if w := f.TakeWarnings(); len(w) != 0 {
				t.Errorf("warnings taken twice: %q", w)
			}
		})
	}
}

// TestSwarmignoreOwnNegationsStillWork: a negation re-including what the
// .swarmignore itself excluded is the user's business, kept without a
// warning; a .gitignore negation never un-denies (it only hides less).
func TestSwarmignoreOwnNegationsStillWork(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, map[string]string{
		".swarmignore":      "*.secret\n!ok.secret\n",
		"private/ok.secret": "fine\n",
		"private/no.secret": canary + "\n",
		"sub/.gitignore":    "!.env\n",
		"sub/.env":          "KEY=" + canary + "\n",
		".gitignore":        "!id_*\n",
		"id_rsa":            canary + "\n",
		"sub/nested/a.txt":  "a\n",
	})
	f := open(t, dir, Options{})
	s := f.Session(nil)
	if o := call(t, s, ToolReadFile, map[string]any{"path": "private/ok.secret"}); !o.OK {
		t.Errorf("private/ok.secret re-included by the .swarmignore itself: %s", o.Result)
	}
	for _, p := range []string{"private/no.secret", "sub/.env", "id_rsa"} {
		assertDenied(t, f, p)
	}
	if w := f.Warnings(); len(w) != 0 {
		t.Errorf("warnings %q, want none", w)
	}
}

// TestAllowLiftsOnlyTheFloor: the user's own configuration (Options.Allow,
// workspace.allow) is the one way to lower the built-in deny list, and it
// lifts nothing else: not the user's deny list, not the .swarmignore.
func TestAllowLiftsOnlyTheFloor(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, map[string]string{
		".env.example":       "KEY=example\n",
		"config/.env.sample": "KEY=sample\n",
		".env":               "KEY=" + canary + "\n",
		"keys/app.pem":       canary + "\n",
		"vendor/.env.x":      canary + "\n",
		"own/.env.example":   canary + "\n",
		".swarmignore":       "own/\n",
	})
	f := open(t, dir, Options{Allow: []string{".env.example", "config/.env.sample"}, Deny: []string{"vendor/", "!.env"}})
	s := f.Session(nil)
	for _, p := range []string{".env.example", "config/.env.sample"} {
		if o := call(t, s, ToolReadFile, map[string]any{"path": p}); !o.OK {
			t.Errorf("%s is allowed by Options.Allow: %s", p, o.Result)
		}
	}
	// .env: a negation in Options.Deny does not lift the floor either.
	for _, p := range []string{".env", "keys/app.pem", "vendor/.env.x", "own/.env.example"} {
		assertDenied(t, f, p)
	}
}

// TestHomeCredentialStoresDenied: the default deny list covers the
// credential stores tools keep in a home directory, at any depth (a
// workspace that holds a home directory), and nothing beside them.
func TestHomeCredentialStoresDenied(t *testing.T) {
	t.Parallel()
	secrets := []string{
		".aws/credentials", ".aws/config", ".netrc", "_netrc", ".git-credentials",
		".docker/config.json", ".kube/config", ".config/gh/hosts.yml",
		".npmrc", ".pypirc", ".ssh/config", ".ssh/known_hosts", ".gnupg/pubring.kbx",
		".config/gcloud/application_default_credentials.json", ".config/gcloud/legacy_credentials/me/adc.json",
		"home/alice/.aws/credentials", "home/alice/.docker/config.json", "home/alice/.config/gh/hosts.yml",
		"home/alice/.kube/config", "home/alice/.netrc",
	}
	fine := []string{"src/netrc.go", ".docker/daemon.go", ".kube/README.md", ".config/other/x.yml", "docs/aws.md", "gh/hosts.yml"}
	dir := t.TempDir()
	files := map[string]string{}
	for _, p := range secrets {
		files[p] = "token=" + canary + "\n"
	}
	for _, p := range fine {
		files[p] = "ok\n"
	}
	write(t, dir, files)
	f := open(t, dir, Options{})
	for _, p := range secrets {
		t.Run(p, func(t *testing.T) { assertDenied(t, f, p) })
	}
	s := f.Session(nil)
	for _, p := range fine {
		if o := call(t, s, ToolReadFile, map[string]any{"path": p}); !o.OK {
			t.Errorf("%s is no credential store: %s", p, o.Result)
		}
	}
}

func TestDefaultDenies(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		p    string
		want bool
	}{
		{".env.example", true}, {"config/.env", true}, {"*.pem", true}, {"**/.env.local", true},
		{".aws", true}, {".aws/config", true}, {"src/", false}, {"README.md", false}, {"", false},
	} {
		if got := DefaultDenies(tc.p); got != tc.want {
			t.Errorf("DefaultDenies(%q) = %v, want %v", tc.p, got, tc.want)
		}
	}
}

// TestExposesHome: a workspace that is /, the home directory, or one of
// its ancestors (a front matter's "workspace: /home") exposes the user's
// credential stores; a project inside the home does not.
func TestExposesHome(t *testing.T) {
	// Serial: t.Setenv (the environment is the process's), which t.Parallel forbids.
	base := t.TempDir()
	home := filepath.Join(base, "users", "alice")
	project := filepath.Join(home, "src", "app")
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	link := filepath.Join(base, "to-users")
	links := os.Symlink(filepath.Join(base, "users"), link) == nil
	cases := []struct {
		name, dir, want string
	}{
		{"the file system's root", "/", "is the file system's root"},
		{"the home directory", home, "is your home directory"},
		{"the home directory, spelt with ..", filepath.Join(project, "..", ".."), "is your home directory"},
		{"an ancestor of the home", filepath.Join(base, "users"), "contains your home directory"},
		{"a project inside the home", project, ""},
		{"a sibling of the home", base + string(filepath.Separator) + "users2", ""},
	}
	if links {
		cases = append(cases, struct{ name, dir, want string }{"a symlink to an ancestor of the home", link, "contains your home directory"})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := ExposesHome(tc.dir)
			if tc.want == "" && got != "" || !strings.HasPrefix(got, tc.want) {
				t.Errorf("ExposesHome(%s) = %q, want %q…", tc.dir, got, tc.want)
			}
		})
	}
}

// TestQuoteOfWhatReadFileShowed: read_file shows invalid UTF-8 as U+FFFD
// (one per byte, as the JSON answer carries it); a quote of exactly that
// text is verified. On main it was marked fabricated.
func TestQuoteOfWhatReadFileShowed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, map[string]string{"latin1.txt": "first\nname = caf\xe9 \xff\xfeend\nlast \xc3\n"})
	f := open(t, dir, Options{})
	o := call(t, f.Session(nil), ToolReadFile, map[string]any{"path": "latin1.txt"})
	var ans struct{ Content string }
	if err := json.Unmarshal([]byte(o.Result), &ans); err != nil || !o.OK {
		t.Fatalf("read_file: %v %s", err, o.Result)
	}
	var lines []string
	for _, l := range strings.Split(ans.Content, "\n") {
		_, text, _ := strings.Cut(l, "\t")
		lines = append(lines, text)
	}
	if d := cmp.Diff([]string{"first", "name = caf\ufffd \ufffd\ufffdend", "last \ufffd"}, lines); d != "" {
		t.Fatalf("what read_file showed (-want +got):\n%s", d)
	}
	cases := []struct {
		name string
		c    citation.Citation
		want State
	}{
		{"one line as shown", citation.Citation{Path: "latin1.txt", StartLine: 2, EndLine: 2, Quote: lines[1]}, Verified},
		{"two lines as shown", citation.Citation{Path: "latin1.txt", StartLine: 2, EndLine: 3, Quote: lines[1] + "\n" + lines[2]}, Verified},
		{"part of a line as shown", citation.Citation{Path: "latin1.txt", StartLine: 2, EndLine: 2, Quote: "caf\ufffd \ufffd\ufffdend"}, Verified},
		{"one U+FFFD for two bytes is not what was shown", citation.Citation{Path: "latin1.txt", StartLine: 2, EndLine: 2, Quote: "caf\ufffd \ufffdend"}, Fabricated},
		{"the valid part alone", citation.Citation{Path: "latin1.txt", StartLine: 2, EndLine: 2, Quote: "name = caf"}, Verified},
	}
	for _, tc := range cases {
		if got := f.Verify(tc.c); got.State != tc.want {
			t.Errorf("%s: %+v, want %s", tc.name, got, tc.want)
		}
	}
}

// TestLimitsMaxima: every limit has a documented maximum; a value over it
// is refused naming the key (on main max_file_bytes: 1e11 passed).
func TestLimitsMaxima(t *testing.T) {
	t.Parallel()
	l := DefaultLimits()
	l.MaxFileBytes = 1e11
	err := l.Validate()
	if err == nil || !strings.Contains(err.Error(), "max_file_bytes must be at most 268435456 (got 100000000000)") {
		t.Errorf("Validate() = %v", err)
	}
	over := MaxLimits()
	over.MaxReadBytes++
	over.MaxToolTurns++
	over.MaxCallsPerTurn++
	want := []LimitError{{"max_read_bytes", 16<<20 + 1}, {"max_tool_turns", 101}, {"max_calls_per_turn", 1001}}
	if d := cmp.Diff(want, over.Invalid()); d != "" {
		t.Errorf("Invalid (-want +got):\n%s", d)
	}
	if got := MaxLimits().Invalid(); got != nil {
		t.Errorf("the maxima themselves are valid, got %v", got)
	}
	// Every default is within its maximum, and every field has one.
	for _, f := range DefaultLimits().fields() {
		if f.Max() < f.Value {
			t.Errorf("%s: default %d over its maximum %d", f.Key, f.Value, f.Max())
		}
	}
	if i := slices.IndexFunc(MaxLimits().fields(), func(f LimitError) bool { return f.Value <= 0 }); i >= 0 {
		t.Errorf("limit %s has no maximum", MaxLimits().fields()[i].Key)
	}
}
