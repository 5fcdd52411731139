package observe

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/roofsim/roofsim/internal/limits"
)

// This file holds what keeps a run from going wrong quietly or being
// turned against its user: the probe before the run, the checks on what
// the server answers, the redirect policy and the redaction of secrets.

// ProbeError is an endpoint found unusable before any request of the
// workload was sent: nothing listens there, it refuses the credentials, or
// it does not serve the model.
type ProbeError struct {
	// URL is the probed address, secrets redacted.
	URL string
	// Reason says what is wrong.
	Reason string
}

func (e *ProbeError) Error() string {
	return fmt.Sprintf("endpoint %s: %s; nothing was sent", e.URL, e.Reason)
}

// NothingCompletedError is a run that sent requests (or none) and saw none
// of them complete: its latencies are over nothing.
type NothingCompletedError struct {
	Sent, Failed int64
	// Reasons counts the failures by status ("rejected:http_503").
	Reasons map[string]int64
}

func (e *NothingCompletedError) Error() string {
	if e.Sent == 0 {
		return "no request was sent"
	}
	keys := make([]string, 0, len(e.Reasons))
	for k := range e.Reasons {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%d x %s", e.Reasons[k], k)
	}
	return fmt.Sprintf("none of the %d requests sent completed (%s)", e.Sent, strings.Join(parts, ", "))
}

// Check is nil when at least one request completed, else a
// *NothingCompletedError.
func (r *Result) Check() error {
	if r.Completed > 0 {
		return nil
	}
	e := &NothingCompletedError{Sent: r.Sent, Failed: r.Failed, Reasons: map[string]int64{}}
	for k, n := range r.Summary.RejectedReasons {
		e.Reasons[k] = n
	}
	return e
}

// RedirectError is a redirect the client refused to follow: to another
// host (the user's headers, API keys among them, would go there) or from
// https to http.
type RedirectError struct {
	From, To string // redacted URLs
}

func (e *RedirectError) Error() string {
	return fmt.Sprintf("redirect from %s to %s refused: another host or a downgrade to http", e.From, e.To)
}

// maxRedirects is the most same-host redirects one request follows.
const maxRedirects = 10

// checkRedirect follows a redirect only to the same scheme and host (port
// included) as the original request, at most maxRedirects times. Go's
// client keeps custom headers (X-Api-Key, ...) across hosts; refusing the
// hop keeps them with the server the user named.
func checkRedirect(req *http.Request, via []*http.Request) error {
	first := via[0].URL
	if req.URL.Host != first.Host || (first.Scheme == "https" && req.URL.Scheme != "https") {
		return &RedirectError{From: RedactURL(first.String()), To: RedactURL(req.URL.String())}
	}
	if len(via) >= maxRedirects {
		return fmt.Errorf("stopped after %d redirects", maxRedirects)
	}
	return nil
}

// newClient is the client Run uses when none is given: idle connections for
// the concurrency, and checkRedirect.
func newClient(cfg *Config) *http.Client {
	return &http.Client{
		Transport:     &http.Transport{Proxy: http.ProxyFromEnvironment, MaxIdleConnsPerHost: cfg.MaxConcurrency, MaxIdleConns: cfg.MaxConcurrency},
		CheckRedirect: checkRedirect,
	}
}

// redacted replaces a secret in a URL or text.
const redacted = "REDACTED"

// RedactURL is u with its user information (user and password) and the
// values of its query parameters replaced by REDACTED: they carry
// credentials (https://user:key@host, ?api_key=...). Text that does not
// parse as a URL with a host is returned as is.
func RedactURL(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.Host == "" {
		return u
	}
	if p.User != nil {
		p.User = url.User(redacted)
	}
	if p.RawQuery != "" {
		q := p.Query()
		for k := range q {
			q[k] = []string{redacted}
		}
		p.RawQuery = q.Encode()
	}
	return p.String()
}

// minSecretLen is the shortest secret Redact replaces in free text: a
// shorter one ("1") would garble the text it is not in.
const minSecretLen = 4

// secrets are the values in cfg that may be credentials: every header
// value (Authorization, X-Api-Key, ...), the URLs' user names, passwords
// and query values.
func (c *Config) secrets() []string {
	var s []string
	for _, v := range c.Headers {
		s = append(s, v)
		if _, tok, ok := strings.Cut(v, " "); ok {
			s = append(s, tok) // "Bearer <token>": the token alone too
		}
	}
	for _, raw := range []string{c.URL, c.MetricsURL} {
		p, err := url.Parse(raw)
		if err != nil {
			continue
		}
		if p.User != nil {
			s = append(s, p.User.Username())
			if pw, ok := p.User.Password(); ok {
				s = append(s, pw, url.QueryEscape(pw))
			}
		}
		for _, vs := range p.Query() {
			for _, v := range vs {
				s = append(s, v, url.QueryEscape(v))
			}
		}
	}
	// Longest first, so that a secret containing another is replaced whole.
	sort.Slice(s, func(i, j int) bool { return len(s[i]) > len(s[j]) })
	return s
}

// Redact replaces every secret of c (secrets) of at least minSecretLen
// bytes in text by REDACTED: error messages and response bodies may echo a
// URL or a header.
func (c *Config) Redact(text string) string {
	for _, s := range c.secrets() {
		if len(s) >= minSecretLen {
			text = strings.ReplaceAll(text, s, redacted)
		}
	}
	return text
}

// checkUsage range-checks a usage report against the request: token counts
// in [0, limits.MaxTokens], cached tokens at most the prompt, and no more
// completion tokens than max_tokens asked for.
func checkUsage(u *usageBody, maxTokens int) error {
	switch {
	case u.PromptTokens < 0 || u.PromptTokens > limits.MaxTokens:
		return fmt.Errorf("usage.prompt_tokens %d: must be in [0, %d]", u.PromptTokens, limits.MaxTokens)
	case u.CompletionTokens < 0 || u.CompletionTokens > maxTokens:
		return fmt.Errorf("usage.completion_tokens %d: must be in [0, max_tokens %d]", u.CompletionTokens, maxTokens)
	case u.PromptTokensDetails != nil && (u.PromptTokensDetails.CachedTokens < 0 || u.PromptTokensDetails.CachedTokens > u.PromptTokens):
		return fmt.Errorf("usage.prompt_tokens_details.cached_tokens %d: must be in [0, prompt_tokens %d]", u.PromptTokensDetails.CachedTokens, u.PromptTokens)
	}
	return nil
}

// Stream bounds: a response may carry at most maxTokens + streamSlack
// output chunks, and maxTokens x streamBytesPerToken + streamBaseBytes
// bytes; past either the stream cannot be a response to the request and is
// cut ("rejected:stream"), so a server that never ends its stream costs
// bounded memory and detail-file space.
const (
	streamSlack         = 16
	streamBytesPerToken = 64 << 10
	streamBaseBytes     = 1 << 20
)

// errStreamTooLong is the cause of a stream cut at the byte bound.
var errStreamTooLong = errors.New("response longer than its bound")

// boundedReader reads at most n bytes, then fails with errStreamTooLong.
type boundedReader struct {
	r interface{ Read([]byte) (int, error) }
	n int64
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.n <= 0 {
		return 0, errStreamTooLong
	}
	if int64(len(p)) > b.n {
		p = p[:b.n]
	}
	n, err := b.r.Read(p)
	b.n -= int64(n)
	return n, err
}
