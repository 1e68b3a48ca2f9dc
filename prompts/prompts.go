// Package prompts holds the role prompt templates (embedded text/template
// files under templates/) and their renderer.
//
// Templates lay out their parts with the markers of providers/protocol.go, so
// the deterministic mock provider (and a human reading a transcript) can find
// the mission, the brief, the aspects to cover, criteria and untrusted data.
package prompts

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"text/template"

	"github.com/swarm-dev/swarm/providers"
)

//go:embed templates/*.tmpl
var files embed.FS

var (
	once    sync.Once
	tmpl    *template.Template
	loadErr error
)

// Funcs available in every template.
var funcs = template.FuncMap{
	"untrusted": Untrusted,
	"aspects":   AspectsLine,
	"join":      strings.Join,
	"json":      jsonString,
	"mission": func(s string) string {
		return providers.MissionOpen + "\n" + strings.TrimSpace(s) + "\n" + providers.MissionClose
	},
	"brief": func(s string) string {
		return providers.BriefOpen + "\n" + strings.TrimSpace(s) + "\n" + providers.BriefClose
	},
}

func load() (*template.Template, error) {
	once.Do(func() {
		tmpl, loadErr = template.New("").Option("missingkey=error").Funcs(funcs).ParseFS(files, "templates/*.tmpl")
	})
	return tmpl, loadErr
}

// Render executes the named template ("judge" renders templates/judge.tmpl).
func Render(name string, data any) (string, error) {
	t, err := load()
	if err != nil {
		return "", fmt.Errorf("prompts: %w", err)
	}
	var b bytes.Buffer
	if err := t.ExecuteTemplate(&b, name+".tmpl", data); err != nil {
		return "", fmt.Errorf("prompts: render %s: %w", name, err)
	}
	return strings.TrimSpace(b.String()) + "\n", nil
}

// Names lists the embedded templates.
func Names() []string {
	t, err := load()
	if err != nil {
		return nil
	}
	var out []string
	for _, x := range t.Templates() {
		if n, ok := strings.CutSuffix(x.Name(), ".tmpl"); ok {
			out = append(out, n)
		}
	}
	return out
}

// AspectsLine renders the aspects a deliverable must cover as one protocol line.
func AspectsLine(aspects []string) string {
	clean := make([]string, 0, len(aspects))
	for _, a := range aspects {
		a = strings.TrimSpace(strings.ReplaceAll(a, ";", ","))
		if a != "" {
			clean = append(clean, a)
		}
	}
	return providers.AspectsPrefix + strings.Join(clean, "; ")
}

// Untrusted wraps data (a bundle under review or judgement) in delimiters
// whose id is a nonce derived from the data and absent from it, so nothing
// inside can close the block.
func Untrusted(data string) string {
	sum := sha256.Sum256([]byte(data))
	id := hex.EncodeToString(sum[:6])
	for i := 0; strings.Contains(data, id); i++ {
		sum = sha256.Sum256(append(sum[:], byte(i)))
		id = hex.EncodeToString(sum[:6])
	}
	// Defuse anything that looks like our markers so a bundle cannot
	// impersonate the start or end of another block.
	data = strings.ReplaceAll(data, "<<<", "‹‹‹")
	return providers.UntrustedOpen + id + ">>>\n" + data + "\n" + providers.UntrustedClose + id + ">>>"
}
