package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/ramjet-dev/ramjet/dataplane/config"
)

// Client talks to the admin API of one ramjetd over its unix socket.
type Client struct {
	http *http.Client
}

// NewClient returns a client for the socket at path.
func NewClient(socket string) *Client {
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	return &Client{http: &http.Client{
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				return dialer.DialContext(ctx, "unix", socket)
			},
			MaxIdleConnsPerHost: 4,
		},
	}}
}

// Reload asks ramjetd to load its configuration file again. A refused file
// is a *ConfigError listing every problem.
func (c *Client) Reload(ctx context.Context) (uint64, error) {
	var ok Reloaded
	var refused Refused
	status, err := c.do(ctx, http.MethodPost, "/v1/reload", nil, &ok, &refused)
	if err != nil {
		return 0, err
	}
	if status == http.StatusUnprocessableEntity {
		return 0, &ConfigError{Problems: refused.Errors}
	}
	return ok.Generation, nil
}

// SetMembers replaces the members of a members_from: api pool.
func (c *Client) SetMembers(ctx context.Context, pool string, members []config.Member) error {
	if members == nil {
		members = []config.Member{}
	}
	_, err := c.do(ctx, http.MethodPut, "/v1/upstreams/"+url.PathEscape(pool), Members{Members: members}, nil, nil)
	return err
}

// Pools lists the pools serving now.
func (c *Client) Pools(ctx context.Context) ([]Pool, error) {
	var pools []Pool
	_, err := c.do(ctx, http.MethodGet, "/v1/upstreams", nil, &pools, nil)
	return pools, err
}

// Pool returns one pool with its members.
func (c *Client) Pool(ctx context.Context, name string) (Pool, error) {
	var p Pool
	_, err := c.do(ctx, http.MethodGet, "/v1/upstreams/"+url.PathEscape(name), nil, &p, nil)
	return p, err
}

// Status returns what is serving.
func (c *Client) Status(ctx context.Context) (Status, error) {
	var s Status
	_, err := c.do(ctx, http.MethodGet, "/v1/status", nil, &s, nil)
	return s, err
}

// Drain starts ramjetd's drain (readiness off, keep-alive clients told to
// close, serving goes on) and returns its status once the drain delay is
// over.
func (c *Client) Drain(ctx context.Context) (Status, error) {
	var s Status
	_, err := c.do(ctx, http.MethodPost, "/v1/drain", nil, &s, nil)
	return s, err
}

// do sends a request and decodes a 2xx answer into ok and a 422 into
// refused; other statuses are errors carrying the server's message.
func (c *Client) do(ctx context.Context, method, path string, body, ok, refused any) (int, error) {
	var reader io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		reader = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://ramjetd"+path, reader)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, fmt.Errorf("admin API: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return resp.StatusCode, fmt.Errorf("admin API: %w", err)
	}
	switch {
	case resp.StatusCode/100 == 2:
		if ok != nil {
			return resp.StatusCode, json.Unmarshal(data, ok)
		}
		return resp.StatusCode, nil
	case resp.StatusCode == http.StatusUnprocessableEntity && refused != nil:
		return resp.StatusCode, json.Unmarshal(data, refused)
	}
	var e errorBody
	if json.Unmarshal(data, &e) != nil || e.Error == "" {
		e.Error = string(data)
	}
	return resp.StatusCode, &APIError{Status: resp.StatusCode, Message: e.Error}
}

// APIError is an answer of the admin API other than success.
type APIError struct {
	Status  int
	Message string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("admin API: %d %s: %s", e.Status, http.StatusText(e.Status), e.Message)
}
