// Package httprec reads recorded HTTP responses for replay tests: files in
// a package's testdata holding one response each (status line, headers, a
// blank line, the body), as http.ReadResponse reads them. The recordings
// are real answers of the providers' APIs taken from other projects (each
// testdata folder's ORIGIN names them).
package httprec

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"os"
	"testing"
)

// Recording is one recorded HTTP response.
type Recording struct {
	Status int
	// Header is the recorded headers but Content-Length and
	// Transfer-Encoding, which a replaying server sets itself.
	Header http.Header
	Body   []byte
}

// Load reads the recording at path, failing t when it cannot.
func Load(t testing.TB, path string) Recording {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(b)), nil)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	resp.Header.Del("Content-Length")
	resp.Header.Del("Transfer-Encoding")
	return Recording{Status: resp.StatusCode, Header: resp.Header, Body: body}
}
