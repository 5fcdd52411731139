package observe

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// outcome is what one request produced, as seen by the client.
type outcome struct {
	sent     time.Time
	tokens   []time.Time // arrival of each chunk that carried output text
	prompt   int         // usage.prompt_tokens; 0 when not reported
	output   int         // usage.completion_tokens; 0 when not reported
	cached   int         // usage.prompt_tokens_details.cached_tokens
	finished time.Time   // end of the stream
	status   string      // "ok" or "rejected:<reason>"
	detail   string      // human-readable error, "" when ok
}

// usageBody is OpenAI's usage object.
type usageBody struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

// chunk is one streamed event of either API.
type chunk struct {
	Choices []struct {
		Text  string `json:"text"`
		Delta *struct {
			Content          string `json:"content"`
			ReasoningContent string `json:"reasoning_content"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *usageBody `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// body builds the JSON request for prompt and maxTokens.
func (c *Config) body(prompt string, maxTokens int) ([]byte, error) {
	m := map[string]any{
		"model":          c.Model,
		"max_tokens":     maxTokens,
		"stream":         true,
		"stream_options": map[string]any{"include_usage": true, "continuous_usage_stats": false},
		"temperature":    0,
	}
	if c.IgnoreEOS {
		m["ignore_eos"] = true
		m["min_tokens"] = maxTokens
	}
	if c.API == APIChat {
		m["messages"] = []map[string]string{{"role": "user", "content": prompt}}
	} else {
		m["prompt"] = prompt
	}
	return json.Marshal(m)
}

// do sends one streamed request for maxTokens output tokens and reads it to
// the end. It never returns an error: every failure is an outcome with a
// reason, its detail redacted (Config.Redact).
func do(ctx context.Context, hc *http.Client, cfg *Config, body []byte, maxTokens int) outcome {
	ctx, cancel := context.WithTimeout(ctx, cfg.RequestTimeout)
	defer cancel()
	out := outcome{sent: time.Now()}
	fail := func(reason, detail string) outcome {
		out.finished = time.Now()
		switch {
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			reason, detail = "timeout", fmt.Sprintf("no complete response within %s", cfg.RequestTimeout)
		case ctx.Err() != nil:
			reason, detail = "cancelled", "run stopped before the response ended"
		}
		out.status, out.detail = "rejected:"+reason, cfg.Redact(detail)
		return out
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cfg.endpoint(), bytes.NewReader(body))
	if err != nil {
		return fail("request", err.Error())
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	for k, v := range cfg.Headers {
		req.Header.Set(k, v)
	}
	resp, err := hc.Do(req)
	if err != nil {
		var re *RedirectError
		if errors.As(err, &re) {
			return fail("redirect", re.Error())
		}
		return fail("connection", connDetail(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		return fail(fmt.Sprintf("http_%d", resp.StatusCode), strings.TrimSpace(string(msg)))
	}
	maxChunks := maxTokens + streamSlack
	maxBytes := int64(maxTokens)*streamBytesPerToken + streamBaseBytes
	sc := bufio.NewScanner(&boundedReader{r: resp.Body, n: maxBytes})
	sc.Buffer(make([]byte, 64<<10), maxLineBytes)
	done, finished := false, false
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.HasPrefix(line, []byte("data:")) {
			continue // blank separators, comments, event: lines
		}
		data := bytes.TrimSpace(line[len("data:"):])
		if bytes.Equal(data, []byte("[DONE]")) {
			done = true
			break
		}
		var ch chunk
		if err := json.Unmarshal(data, &ch); err != nil {
			return fail("stream", "malformed event: "+err.Error())
		}
		if ch.Error != nil {
			return fail("stream", ch.Error.Message)
		}
		now := time.Now()
		for _, c := range ch.Choices {
			if c.FinishReason != nil && *c.FinishReason != "" {
				finished = true
			}
		}
		for _, c := range ch.Choices {
			text := c.Text
			if c.Delta != nil {
				text = c.Delta.Content + c.Delta.ReasoningContent
			}
			if text != "" {
				out.tokens = append(out.tokens, now)
				break
			}
		}
		if len(out.tokens) > maxChunks {
			return fail("stream", fmt.Sprintf("more than %d output chunks for max_tokens %d: the stream does not end", maxChunks, maxTokens))
		}
		if ch.Usage != nil {
			if err := checkUsage(ch.Usage, maxTokens); err != nil {
				return fail("usage", err.Error())
			}
			out.prompt, out.output = ch.Usage.PromptTokens, ch.Usage.CompletionTokens
			if d := ch.Usage.PromptTokensDetails; d != nil {
				out.cached = d.CachedTokens
			}
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, errStreamTooLong) {
			return fail("stream", fmt.Sprintf("more than %d bytes for max_tokens %d: the stream does not end", maxBytes, maxTokens))
		}
		return fail("stream", err.Error())
	}
	if !done && !finished {
		// A stream that ends after a finish_reason is complete even without
		// the closing [DONE] some servers leave out.
		return fail("stream", "stream ended without a finish_reason or [DONE]")
	}
	if len(out.tokens) == 0 {
		return fail("empty", "no output tokens in the response")
	}
	out.finished = out.tokens[len(out.tokens)-1]
	out.status = "ok"
	return out
}

// connDetail shortens a transport error to its cause.
func connDetail(err error) string {
	var ne *net.OpError
	if errors.As(err, &ne) {
		return ne.Error()
	}
	return err.Error()
}
