package main

import (
	"bufio"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/swarm-dev/swarm/mock"
)

// TestMockServeCutsOffATricklingBody sends headers that announce a body
// and then only part of it: the server must give up on the request (answer
// or close the connection) rather than hold it open for ever. The test
// waits on the connection, not on a clock.
func TestMockServeCutsOffATricklingBody(t *testing.T) {
	t.Parallel()
	h, err := mock.NewServer(mock.ServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Config = mockHTTPServer(h, MockServeOptions{ReadTimeout: 100 * time.Millisecond})
	srv.Start()
	defer srv.Close()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// A generous deadline only so a broken server fails the test instead
	// of hanging it.
	conn.SetDeadline(time.Now().Add(time.Minute))
	_, err = conn.Write([]byte("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"model\":"))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	switch {
	case err == nil:
		defer resp.Body.Close()
		if resp.StatusCode < 400 {
			t.Errorf("status %d for a body that never arrived", resp.StatusCode)
		}
	case strings.Contains(err.Error(), "i/o timeout"):
		t.Fatalf("the server still held the request after a minute: %v", err)
	}
	// Any other error: the server closed the connection, as it should.
}

func TestMockServeRejectsBadLimits(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"mock", "serve", "--max-body", "0"},
		{"mock", "serve", "--read-timeout", "-1s"},
		{"mock", "serve", "--rpm", "-5"},                                                      // a negative budget (issue 21)
		{"mock", "serve", "--max-inflight", "-1"},                                             // a negative budget (issue 21)
		{"mock", "serve", "--max-answer-bytes", "0"},                                          // no answer could be sent (issue 22)
		{"mock", "serve", "--max-answer-bytes", "2000000", "--max-inflight-bytes", "1000000"}, // the largest answer could never be served (issue 22)
	} {
		if c, _, errOut := execCLI(t, args...); c != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, c, errOut)
		}
	}
}
