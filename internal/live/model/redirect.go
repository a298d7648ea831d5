package model

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// No redirect is ever followed. net/http's Client follows up to 10, and
// client-go's bearer-token round tripper (client-go
// transport/round_trippers.go, NewBearerAuthWithRefreshRoundTripper) adds
// the token to every request it sends, the redirected ones included, to
// any host and over plain http. The guard (bound.go) sits beneath it and
// answers a 3xx with a *RedirectError instead, so the redirected request
// is never sent and the token stays with the kubeconfig's server.

// RedirectError is a 3xx answer, not followed.
type RedirectError struct {
	// Source names the server and the request: "HOST: GET PATH".
	Source string
	Status int
	// Location is where the answer pointed, redacted to its scheme and
	// host ("" when it named none).
	Location string
}

func (e *RedirectError) Error() string {
	to := "no Location"
	if e.Location != "" {
		to = "a redirect to " + e.Location
	}
	return fmt.Sprintf("%s: answered HTTP %d with %s: not followed (watch-doctor never follows a redirect, so the credentials of the kubeconfig go to its server alone; point the kubeconfig at the server itself)", e.Source, e.Status, to)
}

// GuardError returns the *RedirectError or *HTMLError of the guard that
// err wraps (net/http wraps it in a *url.Error), nil for any other error.
func GuardError(err error) error {
	var re *RedirectError
	var he *HTMLError
	switch {
	case errors.As(err, &re):
		return re
	case errors.As(err, &he):
		return he
	}
	return nil
}

func newRedirectError(source string, from *url.URL, resp *http.Response) *RedirectError {
	return &RedirectError{Source: source, Status: resp.StatusCode, Location: redactLocation(from, resp.Header.Get("Location"))}
}

// redactLocation resolves loc against from and keeps its scheme and host:
// a path or query may carry a token, userinfo a password.
func redactLocation(from *url.URL, loc string) string {
	if loc == "" {
		return ""
	}
	u, err := from.Parse(loc)
	if err != nil || u.Host == "" {
		return "an unreadable Location"
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host}).String()
}

// RedactServer returns a kubeconfig server URL without its userinfo
// (https://user:PASS@host -> https://host), for every place it is shown
// or written: reports, bundles, messages.
func RedactServer(server string) string {
	if u, err := url.Parse(server); err == nil && u.Host != "" {
		if u.User == nil {
			return server
		}
		u.User = nil
		return u.String()
	}
	// No userinfo that parses (or no scheme: "user:PASS@host" parses as
	// scheme "user"): drop everything between the scheme and the last '@'.
	at := strings.LastIndexByte(server, '@')
	if at < 0 {
		return server
	}
	start := 0
	if i := strings.Index(server, "://"); i >= 0 && i < at {
		start = i + 3
	}
	return server[:start] + server[at+1:]
}
