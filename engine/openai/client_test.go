package openai

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"ndb/internal/testnet"
)

func TestCompleteSendsRequestAndParsesChoices(t *testing.T) {
	var got map[string]any
	var auth, path string
	srv := testnet.Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth, path = r.Header.Get("Authorization"), r.URL.Path
		if err := json.NewDecoder(r.Body).Decode(&got); err != nil {
			t.Errorf("decode: %v", err)
		}
		// Out of order on purpose: the client must sort by index.
		w.Write([]byte(`{"choices":[{"index":1,"text":"B","finish_reason":"length"},{"index":0,"text":"A<|action_sep|>","finish_reason":"stop"}]}`))
	}))
	c, err := New(Config{BaseURL: srv.URL, Model: "m1", APIKey: "k3y"})
	if err != nil {
		t.Fatal(err)
	}
	ch, err := c.Complete(context.Background(), Request{Prompt: "<|frame_sep|>x", MaxTokens: 64, Stop: []string{"<|action_sep|>"}, N: 2})
	if err != nil {
		t.Fatal(err)
	}
	if path != "/v1/completions" {
		t.Errorf("path %q, want /v1/completions (bare host gets /v1)", path)
	}
	if auth != "Bearer k3y" {
		t.Errorf("auth %q", auth)
	}
	if got["model"] != "m1" || got["prompt"] != "<|frame_sep|>x" || got["max_tokens"] != 64.0 || got["n"] != 2.0 || got["temperature"] != 0.0 {
		t.Errorf("request body %v", got)
	}
	if st, _ := got["stop"].([]any); len(st) != 1 || st[0] != "<|action_sep|>" {
		t.Errorf("stop %v", got["stop"])
	}
	if len(ch) != 2 || ch[0].Text != "A<|action_sep|>" || ch[1].Text != "B" || ch[1].FinishReason != "length" {
		t.Errorf("choices %+v", ch)
	}
}

func TestBaseURLForms(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"http://127.0.0.1:8000", "http://127.0.0.1:8000/v1/completions"},
		{"http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1/completions"},
		{"http://127.0.0.1:11434/v1/", "http://127.0.0.1:11434/v1/completions"},
		{"https://h.example/openai/v1", "https://h.example/openai/v1/completions"},
		{"", DefaultBaseURL + "/completions"},
	} {
		c, err := New(Config{BaseURL: tc.in})
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if c.Endpoint() != tc.want {
			t.Errorf("%q -> %q, want %q", tc.in, c.Endpoint(), tc.want)
		}
	}
	for _, bad := range []string{"127.0.0.1:8000", "ftp://x/v1", "http://", "::"} {
		if _, err := New(Config{BaseURL: bad}); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
}

func TestRetriesThenSucceeds(t *testing.T) {
	var calls atomic.Int32
	srv := testnet.Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch calls.Add(1) {
		case 1:
			http.Error(w, "overloaded", http.StatusServiceUnavailable)
		case 2:
			w.Header().Set("Retry-After", "0")
			http.Error(w, "slow down", http.StatusTooManyRequests)
		default:
			w.Write([]byte(`{"choices":[{"text":"ok"}]}`))
		}
	}))
	c, _ := New(Config{BaseURL: srv.URL, Backoff: time.Millisecond})
	ch, err := c.Complete(context.Background(), Request{Prompt: "p"})
	if err != nil {
		t.Fatal(err)
	}
	if ch[0].Text != "ok" || calls.Load() != 3 {
		t.Errorf("got %+v after %d calls", ch, calls.Load())
	}
}

func TestNoRetryOnClientError(t *testing.T) {
	var calls atomic.Int32
	srv := testnet.Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		http.Error(w, `{"error":{"message":"model not found"}}`, http.StatusNotFound)
	}))
	c, _ := New(Config{BaseURL: srv.URL, Backoff: time.Millisecond})
	_, err := c.Complete(context.Background(), Request{Prompt: "p"})
	var se *StatusError
	if !errors.As(err, &se) || se.Code != 404 {
		t.Fatalf("err %v, want a 404 StatusError", err)
	}
	if calls.Load() != 1 {
		t.Errorf("%d calls, want 1 (404 is not retryable)", calls.Load())
	}
}

func TestRetriesExhausted(t *testing.T) {
	var calls atomic.Int32
	srv := testnet.Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		http.Error(w, "boom", http.StatusInternalServerError)
	}))
	c, _ := New(Config{BaseURL: srv.URL, Retries: 2, Backoff: time.Millisecond})
	_, err := c.Complete(context.Background(), Request{Prompt: "p"})
	if err == nil || calls.Load() != 3 {
		t.Fatalf("err %v after %d calls, want an error after 3", err, calls.Load())
	}
}

func TestTimeoutPerAttempt(t *testing.T) {
	var calls atomic.Int32
	release := make(chan struct{})
	srv := testnet.Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			select { // hang until the client gives up
			case <-r.Context().Done():
			case <-release:
			}
			return
		}
		w.Write([]byte(`{"choices":[{"text":"late but fine"}]}`))
	}))
	t.Cleanup(func() { close(release) }) // runs before srv.Close (cleanups are LIFO)
	c, _ := New(Config{BaseURL: srv.URL, Timeout: 100 * time.Millisecond, Backoff: time.Millisecond})
	start := time.Now()
	ch, err := c.Complete(context.Background(), Request{Prompt: "p"})
	if err != nil {
		t.Fatal(err)
	}
	if ch[0].Text != "late but fine" || time.Since(start) > 5*time.Second {
		t.Errorf("got %+v in %v", ch, time.Since(start))
	}
}

func TestContextCancelStopsRetries(t *testing.T) {
	srv := testnet.Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusBadGateway)
	}))
	c, _ := New(Config{BaseURL: srv.URL, Retries: 100, Backoff: 50 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.Complete(ctx, Request{Prompt: "p"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err %v, want deadline exceeded", err)
	}
	if time.Since(start) > 3*time.Second {
		t.Errorf("took %v", time.Since(start))
	}
}

func TestMalformedAnswers(t *testing.T) {
	for name, body := range map[string]string{
		"not json":   `<html>`,
		"no choices": `{"choices":[]}`,
		"error":      `{"error":{"message":"bad prompt"}}`,
	} {
		t.Run(name, func(t *testing.T) {
			var calls atomic.Int32
			srv := testnet.Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				calls.Add(1)
				w.Write([]byte(body))
			}))
			c, _ := New(Config{BaseURL: srv.URL, Backoff: time.Millisecond})
			if _, err := c.Complete(context.Background(), Request{Prompt: "p"}); err == nil {
				t.Fatal("want an error")
			}
			if calls.Load() != 1 {
				t.Errorf("%d calls: a malformed 200 answer is not retried", calls.Load())
			}
		})
	}
}

func TestConnectionRefusedIsRetriedAndReported(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	c, _ := New(Config{BaseURL: "http://" + addr + "/v1", Retries: 1, Backoff: time.Millisecond})
	if _, err := c.Complete(context.Background(), Request{Prompt: "p"}); err == nil {
		t.Fatal("want an error")
	}
}

func TestCutAtStop(t *testing.T) {
	for _, tc := range []struct {
		in   string
		stop []string
		want string
		ok   bool
	}{
		{"a<|action_sep|>b", []string{"<|action_sep|>"}, "a", true},
		{"a<|end_of_text|>b<|action_sep|>", []string{"<|action_sep|>", "<|end_of_text|>"}, "a", true},
		{"abc", []string{"<|action_sep|>"}, "abc", false},
		{"abc", []string{""}, "abc", false},
	} {
		got, ok := CutAtStop(tc.in, tc.stop)
		if got != tc.want || ok != tc.ok {
			t.Errorf("CutAtStop(%q) = %q, %v", tc.in, got, ok)
		}
	}
}

func TestConfigFromEnv(t *testing.T) {
	t.Setenv(EnvBaseURL, "http://127.0.0.1:9/v1")
	t.Setenv(EnvModel, "cwm")
	t.Setenv(EnvAPIKey, "secret")
	cfg := ConfigFromEnv()
	if cfg.BaseURL != "http://127.0.0.1:9/v1" || cfg.Model != "cwm" || cfg.APIKey != "secret" {
		t.Errorf("%+v", cfg)
	}
}
