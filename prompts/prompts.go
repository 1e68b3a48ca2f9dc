// Package prompts holds the role prompt templates (embedded text/template
// files under templates/) and their renderer.
//
// Templates lay out their parts with the markers of package vocab, so
// the deterministic mock provider (and a human reading a transcript) can find
// the mission, the brief, the aspects to cover, criteria and bundles. Every
// piece of model- or user-written text sits in an untrusted block
// (Untrusted) that its content cannot close, and the system prompt tells the
// model that such blocks are data, never instructions.
package prompts

import (
	"bytes"
	"embed"
	"fmt"
	"strings"
	"sync"
	"text/template"

	"github.com/swarm-dev/swarm/vocab"
)

//go:embed templates/*.tmpl
var files embed.FS

var (
	once    sync.Once
	tmpl    *template.Template
	loadErr error
)

// Funcs available in every template. Every piece of model- or user-written
// text goes through one of the block functions (untrusted, mission, brief,
// aspects, scope, evidence), which all write an untrusted block (Untrusted).
var funcs = template.FuncMap{
	"untrusted": Untrusted,
	"aspects":   AspectsBlock,
	"scope":     ScopeBlock,
	"evidence":  EvidenceBlock,
	"join":      strings.Join,
	"json":      jsonString,
	"mission":   func(s string) string { return Untrusted(vocab.BlockMission, "", strings.TrimSpace(s)) },
	"brief":     func(s string) string { return Untrusted(vocab.BlockBrief, "", strings.TrimSpace(s)) },
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
	b := buffers.Get().(*bytes.Buffer)
	defer putBuffer(b)
	if err := t.ExecuteTemplate(b, name+".tmpl", data); err != nil {
		return "", fmt.Errorf("prompts: render %s: %w", name, err)
	}
	// One copy, of the trimmed text and its newline.
	return string(bytes.TrimSpace(b.Bytes())) + "\n", nil
}

// buffers holds the buffers Render executes templates into: a prompt is
// rendered for every call, mostly of the same few sizes.
var buffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledBuffer is the largest buffer kept for reuse (a prompt carrying
// whole bundles is rare and would pin its size).
const maxPooledBuffer = 256 << 10

func putBuffer(b *bytes.Buffer) {
	if b.Cap() > maxPooledBuffer {
		return
	}
	b.Reset()
	buffers.Put(b)
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

// AspectsBlock renders the aspects a deliverable must cover: a heading line
// and an untrusted block of the terms separated by vocab.AspectsSep
// (";" inside a term becomes ",").
func AspectsBlock(aspects []string) string {
	return strings.TrimSpace(vocab.AspectsPrefix) + "\n" + Untrusted(vocab.BlockAspects, "", strings.Join(cleanTerms(aspects, ";"), vocab.AspectsSep))
}

// ScopeBlock renders a file scope (paths, one per line) as an untrusted block.
func ScopeBlock(paths []string) string {
	return Untrusted(vocab.BlockFileScope, "", strings.Join(cleanTerms(paths, "\n"), "\n"))
}

func cleanTerms(xs []string, sep string) []string {
	out := make([]string, 0, len(xs))
	for _, a := range xs {
		a = strings.TrimSpace(strings.ReplaceAll(strings.ReplaceAll(a, sep, ","), "\n", " "))
		if a != "" {
			out = append(out, a)
		}
	}
	return out
}

// SplitAspects reads back the terms of an aspects block's content.
func SplitAspects(content string) []string {
	var out []string
	for _, a := range strings.Split(content, strings.TrimSpace(vocab.AspectsSep)) {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}
