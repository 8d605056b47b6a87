// Package openai is a small client for OpenAI-compatible text completion
// endpoints (POST {base}/completions), as served by vLLM, llama.cpp's server
// and Ollama. The neural engines send their prompts through it.
//
// A Client is safe for concurrent use: it holds no per-request state.
package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// Environment variables read by ConfigFromEnv.
const (
	EnvBaseURL = "NDB_OPENAI_BASE_URL"
	EnvModel   = "NDB_OPENAI_MODEL"
	EnvAPIKey  = "NDB_OPENAI_API_KEY"
)

// DefaultBaseURL is vLLM's default address; llama.cpp's server listens on
// :8080/v1 and Ollama on :11434/v1.
const DefaultBaseURL = "http://127.0.0.1:8000/v1"

// maxResponseBytes bounds what one answer may hold, so a broken server cannot
// fill memory.
const maxResponseBytes = 16 << 20

// Config says where the endpoint is and how patient to be with it.
type Config struct {
	BaseURL string        // API root including /v1; a bare http://host:port gets /v1 appended
	Model   string        // model name sent with every request (required by most servers)
	APIKey  string        // sent as "Authorization: Bearer KEY" when not empty
	Timeout time.Duration // per attempt; 0 means 120s
	Retries int           // extra attempts after a retryable failure; <0 means none, 0 means 3
	Backoff time.Duration // wait before the first retry, doubled each time (capped at 10s); 0 means 500ms

	// TokenIDs, if set, makes every request carry its prompt as the token
	// ids it returns ("prompt": [ids], which OpenAI's completions API,
	// llama.cpp's server and vLLM accept) instead of text: a server running
	// ndb's model (ndb export --gguf) then sees exactly the tokens ndb's
	// model sees, whatever its own pre-tokenizer would make of the text.
	// Its error fails the request without a retry.
	TokenIDs func(prompt string) ([]int32, error)

	// HTTPClient, if set, replaces the default client (tests, proxies).
	HTTPClient *http.Client
}

// ConfigFromEnv returns a Config filled from NDB_OPENAI_BASE_URL,
// NDB_OPENAI_MODEL and NDB_OPENAI_API_KEY. Flags given on the command line
// should override its fields.
func ConfigFromEnv() Config {
	return Config{
		BaseURL: os.Getenv(EnvBaseURL),
		Model:   os.Getenv(EnvModel),
		APIKey:  os.Getenv(EnvAPIKey),
	}
}

// Client talks to one completions endpoint.
type Client struct {
	cfg      Config
	endpoint string
	http     *http.Client
}

// New checks cfg and returns a Client.
func New(cfg Config) (*Client, error) {
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("openai: base URL %q: want http(s)://host[:port]/v1", cfg.BaseURL)
	}
	if strings.Trim(u.Path, "/") == "" {
		u.Path = "/v1"
	}
	u.Path = strings.TrimRight(u.Path, "/") + "/completions"
	if cfg.Timeout <= 0 {
		cfg.Timeout = 120 * time.Second
	}
	switch {
	case cfg.Retries < 0:
		cfg.Retries = 0
	case cfg.Retries == 0:
		cfg.Retries = 3
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = 500 * time.Millisecond
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	return &Client{cfg: cfg, endpoint: u.String(), http: hc}, nil
}

// Endpoint is the full URL requests go to.
func (c *Client) Endpoint() string { return c.endpoint }

// Model is the model name sent with each request.
func (c *Client) Model() string { return c.cfg.Model }

// Request is one completion request. Zero fields are left out of the JSON
// (servers use their defaults), except Temperature, which is always sent so
// that 0 means greedy.
type Request struct {
	Prompt      string
	MaxTokens   int
	Temperature float64
	TopP        float64
	Stop        []string // at most 4 for OpenAI itself; vLLM and llama.cpp take more
	N           int      // number of choices; 0 means 1
	Seed        *int64
	// Logprobs asks for the log-probability of each chosen token
	// ("logprobs": 1); servers that ignore it return none.
	Logprobs bool
}

// Choice is one completion.
type Choice struct {
	Text         string
	FinishReason string // "stop", "length", ...
	// Tokens and TokenLogprobs are the chosen tokens and their natural
	// log-probabilities, when the server returned them (Request.Logprobs);
	// a token the server gave no figure has NaN.
	Tokens        []string
	TokenLogprobs []float64
}

type wireRequest struct {
	Model       string   `json:"model,omitempty"`
	Prompt      any      `json:"prompt"` // a string, or []int32 token ids (Config.TokenIDs)
	MaxTokens   int      `json:"max_tokens,omitempty"`
	Temperature float64  `json:"temperature"`
	TopP        float64  `json:"top_p,omitempty"`
	Stop        []string `json:"stop,omitempty"`
	N           int      `json:"n,omitempty"`
	Seed        *int64   `json:"seed,omitempty"`
	Logprobs    *int     `json:"logprobs,omitempty"`
	// SkipSpecialTokens=false keeps <|...|> tokens in vLLM's output text;
	// other servers ignore unknown fields.
	SkipSpecialTokens *bool `json:"skip_special_tokens,omitempty"`
}

type wireResponse struct {
	Choices []struct {
		Index        int    `json:"index"`
		Text         string `json:"text"`
		FinishReason string `json:"finish_reason"`
		Logprobs     *struct {
			Tokens        []string   `json:"tokens"`
			TokenLogprobs []*float64 `json:"token_logprobs"`
		} `json:"logprobs"`
	} `json:"choices"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// StatusError is a non-2xx answer from the server.
type StatusError struct {
	Code int
	Body string // the start of the body, for the message
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("openai: server answered %d: %s", e.Code, e.Body)
}

// retryable reports whether a failed attempt is worth repeating: transport
// errors, timeouts, 408, 409, 429 and 5xx.
func retryable(err error) bool {
	var se *StatusError
	if errors.As(err, &se) {
		return se.Code == 408 || se.Code == 409 || se.Code == 429 || se.Code >= 500
	}
	var pe *protocolError
	return !errors.As(err, &pe) // transport errors are retryable; malformed answers are not
}

// protocolError is a 2xx answer we cannot use: retrying will not help.
type protocolError struct{ msg string }

func (e *protocolError) Error() string { return "openai: " + e.msg }

// Complete sends req and returns the choices in index order. It retries
// retryable failures with exponential backoff (honouring Retry-After up to
// the backoff cap) until Config.Retries is spent or ctx is done.
func (c *Client) Complete(ctx context.Context, req Request) ([]Choice, error) {
	keep := false
	var logprobs *int
	if req.Logprobs {
		one := 1
		logprobs = &one
	}
	var prompt any = req.Prompt
	if c.cfg.TokenIDs != nil {
		ids, err := c.cfg.TokenIDs(req.Prompt)
		if err != nil {
			return nil, fmt.Errorf("openai: token ids: %w", err)
		}
		if len(ids) == 0 {
			// An empty list is no prompt to any server.
			return nil, &protocolError{"prompt encodes to no tokens"}
		}
		prompt = ids
	}
	body, err := json.Marshal(wireRequest{
		Model: c.cfg.Model, Prompt: prompt, MaxTokens: req.MaxTokens,
		Temperature: req.Temperature, TopP: req.TopP, Stop: req.Stop, N: req.N, Seed: req.Seed,
		Logprobs: logprobs, SkipSpecialTokens: &keep,
	})
	if err != nil {
		return nil, fmt.Errorf("openai: encode request: %w", err)
	}
	wait := c.cfg.Backoff
	const maxWait = 10 * time.Second
	var last error
	for attempt := 0; attempt <= c.cfg.Retries; attempt++ {
		if attempt > 0 {
			d := wait
			if ra := retryAfter(last); ra > 0 {
				d = min(ra, maxWait)
			}
			t := time.NewTimer(d)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil, fmt.Errorf("openai: %w (last error: %v)", ctx.Err(), last)
			case <-t.C:
			}
			wait = min(wait*2, maxWait)
		}
		choices, err := c.once(ctx, body)
		if err == nil {
			return choices, nil
		}
		last = err
		if ctx.Err() != nil || !retryable(err) {
			break
		}
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("openai: %w (last error: %v)", ctx.Err(), last)
	}
	return nil, last
}

// retryAfterError carries a server's Retry-After hint.
type retryAfterError struct {
	*StatusError
	after time.Duration
}

func (e *retryAfterError) Unwrap() error { return e.StatusError }

func retryAfter(err error) time.Duration {
	var ra *retryAfterError
	if errors.As(err, &ra) {
		return ra.after
	}
	return 0
}

func (c *Client) once(ctx context.Context, body []byte) ([]Choice, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, &protocolError{err.Error()}
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json")
	if c.cfg.APIKey != "" {
		hr.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	resp, err := c.http.Do(hr)
	if err != nil {
		return nil, fmt.Errorf("openai: %s: %w", c.endpoint, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return nil, fmt.Errorf("openai: read answer: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		se := &StatusError{Code: resp.StatusCode, Body: snippet(data)}
		if s := resp.Header.Get("Retry-After"); s != "" {
			if secs, err := strconv.Atoi(s); err == nil && secs >= 0 {
				return nil, &retryAfterError{se, time.Duration(secs) * time.Second}
			}
		}
		return nil, se
	}
	if len(data) > maxResponseBytes {
		return nil, &protocolError{"answer larger than 16 MiB"}
	}
	var wr wireResponse
	if err := json.Unmarshal(data, &wr); err != nil {
		return nil, &protocolError{fmt.Sprintf("answer is not JSON: %v: %s", err, snippet(data))}
	}
	if wr.Error != nil {
		return nil, &protocolError{"server error: " + wr.Error.Message}
	}
	if len(wr.Choices) == 0 {
		return nil, &protocolError{"answer has no choices"}
	}
	// Put choices in index order when the indexes are a permutation;
	// otherwise (servers that omit or repeat them) keep arrival order.
	out := make([]Choice, len(wr.Choices))
	placed := make([]bool, len(out))
	for _, ch := range wr.Choices {
		if ch.Index < 0 || ch.Index >= len(out) || placed[ch.Index] {
			placed = nil
			break
		}
		placed[ch.Index] = true
	}
	for i, ch := range wr.Choices {
		c := Choice{Text: ch.Text, FinishReason: ch.FinishReason}
		if lp := ch.Logprobs; lp != nil && len(lp.TokenLogprobs) > 0 {
			c.Tokens = lp.Tokens
			c.TokenLogprobs = make([]float64, len(lp.TokenLogprobs))
			for j, x := range lp.TokenLogprobs {
				c.TokenLogprobs[j] = math.NaN()
				if x != nil {
					c.TokenLogprobs[j] = *x
				}
			}
		}
		if placed != nil {
			i = ch.Index
		}
		out[i] = c
	}
	return out, nil
}

func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

// CutAtStop trims text at the first of the stop sequences, for servers that
// return the stop text (or run past it). It reports whether a stop was found.
func CutAtStop(text string, stop []string) (string, bool) {
	cut, found := len(text), false
	for _, s := range stop {
		if s == "" {
			continue
		}
		if i := strings.Index(text, s); i >= 0 && i < cut {
			cut, found = i, true
		}
	}
	return text[:cut], found
}
