package notify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/loopbreaker/loopbreaker/cmd/looprun/internal/journal"
)

// Timeouts of one attempt.
const (
	// WebhookTimeout bounds one POST, from the connection to the end of
	// the answer.
	WebhookTimeout = 10 * time.Second
	// CommandTimeout bounds one run of an -on-event command.
	CommandTimeout = 30 * time.Second
)

// Webhook POSTs each event as JSON to a URL. Its text field is what a
// Slack-compatible incoming webhook (Slack, Mattermost, Rocket.Chat,
// Discord's /slack endpoint) shows; the other fields are there for a
// receiver that reads them.
type Webhook struct {
	url    *url.URL
	client *http.Client
}

// NewWebhook returns the webhook at rawURL, an http or https URL. client
// nil is a client with WebhookTimeout.
func NewWebhook(rawURL string, client *http.Client) (*Webhook, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		// url.Parse's error quotes the URL, which may hold a token.
		return nil, errors.New("not an http:// or https:// URL")
	}
	if client == nil {
		client = &http.Client{Timeout: WebhookTimeout}
	}
	return &Webhook{url: u, client: client}, nil
}

// String names the webhook by its scheme and host alone: its path and
// query often are its secret.
func (w *Webhook) String() string {
	s := w.url.Scheme + "://" + w.url.Host
	if w.url.Path != "" && w.url.Path != "/" || w.url.RawQuery != "" {
		s += "/…"
	}
	return s
}

// Send POSTs e. An answer of 2xx is delivered; 408, 429 and 5xx, or no
// answer, may go through another time; any other is permanent.
func (w *Webhook) Send(ctx context.Context, e journal.Entry) error {
	body, err := e.Encode()
	if err != nil {
		return Permanent(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url.String(), bytes.NewReader(body))
	if err != nil {
		return Permanent(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "looprun")
	resp, err := w.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without the URL
		}
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	switch c := resp.StatusCode; {
	case c >= 200 && c < 300:
		return nil
	case c == http.StatusRequestTimeout || c == http.StatusTooManyRequests || c >= 500:
		return fmt.Errorf("answered %s", resp.Status)
	default:
		return Permanent(fmt.Errorf("answered %s", resp.Status))
	}
}

// Command runs a shell command for each event (sh -c, cmd /C on
// Windows), in Dir, with the event's JSON on its stdin and, in its
// environment, LOOPRUN_EVENT (the kind), LOOPRUN_EVENT_TEXT (the
// sentence) and LOOPRUN_EVENT_JSON (the JSON). A command is run once per
// event: one that fails is not run again for it (a desktop notifier
// would show it twice).
type Command struct {
	Line string
	Dir  string
	// Env is the command's environment before the event's; nil is the
	// process's.
	Env []string
	// Timeout bounds a run (CommandTimeout when zero).
	Timeout time.Duration
}

// String names the command.
func (c *Command) String() string { return strings.TrimSpace(c.Line) }

// Send runs the command for e.
func (c *Command) Send(ctx context.Context, e journal.Entry) error {
	body, err := e.Encode()
	if err != nil {
		return Permanent(err)
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = CommandTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	argv := []string{"sh", "-c", c.Line}
	if runtime.GOOS == "windows" {
		argv = []string{"cmd", "/C", c.Line}
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = c.Dir
	env := c.Env
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = append(env[:len(env):len(env)],
		"LOOPRUN_EVENT="+string(e.Kind), "LOOPRUN_EVENT_TEXT="+e.Text,
		"LOOPRUN_EVENT_JSON="+strings.TrimSuffix(string(body), "\n"))
	cmd.Stdin = bytes.NewReader(body)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = time.Second // a child holding the output open does not hold the notifier
	err = cmd.Run()
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		err = fmt.Errorf("still running after %s: killed", timeout)
	} else if text := strings.TrimSpace(out.String()); text != "" {
		if i := strings.LastIndexByte(text, '\n'); i >= 0 {
			text = text[i+1:]
		}
		err = fmt.Errorf("%w: %s", err, clip(text, 200))
	}
	return Permanent(err)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
