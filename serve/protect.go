package serve

import (
	"fmt"
	"mime"
	"net"
	"net/http"
	"os"
	"strings"
)

// The protections a server on the user's machine needs against the web
// pages the same user visits:
//
//   - DNS rebinding: a page on evil.example whose name is re-pointed to
//     127.0.0.1 reaches the server from "its own" origin. The Host header
//     still says evil.example, so every request whose Host is not a name
//     of this server is refused (421).
//   - Cross-site requests: a page may send POSTs (forms, fetch without
//     CORS) to any address. State-changing requests from another origin
//     are refused (403) by net/http's CrossOriginProtection, which reads
//     Sec-Fetch-Site, or compares Origin with Host.
//   - Content types: JSON endpoints take application/json only and raw
//     uploads application/octet-stream only (415 otherwise), two types a
//     cross-site form cannot send.

// hostPolicy says which Host headers name this server.
type hostPolicy struct {
	// names are the accepted host names and IP literals, lower case,
	// without brackets.
	names map[string]bool
	// port is the only accepted port; "" accepts any (a server on port 0,
	// or one whose address is not known).
	port string
}

// newHostPolicy accepts the loopback names, the host of addr (the
// --addr the server listens on, host:port) and extra (--allow-host). When
// addr's host is unspecified (0.0.0.0, ::, or empty: every interface),
// the machine's host name and its interface addresses are accepted too,
// since those are the names others reach it by.
func newHostPolicy(addr string, extra []string) (*hostPolicy, error) {
	p := &hostPolicy{names: map[string]bool{"localhost": true, "127.0.0.1": true, "::1": true}}
	for _, h := range extra {
		h = strings.ToLower(strings.Trim(strings.TrimSpace(h), "[]"))
		if h == "" || (strings.ContainsAny(h, "/:@ ") && net.ParseIP(h) == nil) {
			return nil, fmt.Errorf("allow-host: want a host name or IP address, got %q", h)
		}
		p.names[h] = true
	}
	if addr == "" {
		return p, nil
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("addr: want host:port, got %q", addr)
	}
	if port != "0" {
		p.port = port
	}
	host = strings.ToLower(host)
	ip := net.ParseIP(host)
	if host != "" && (ip == nil || !ip.IsUnspecified()) {
		p.names[host] = true
		return p, nil
	}
	if name, err := os.Hostname(); err == nil && name != "" {
		p.names[strings.ToLower(name)] = true
	}
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok {
				p.names[n.IP.String()] = true
			}
		}
	}
	return p, nil
}

// allows reports whether a request's Host header (host or host:port)
// names this server.
func (p *hostPolicy) allows(hostHeader string) bool {
	host, port, err := net.SplitHostPort(hostHeader)
	if err != nil {
		host, port = hostHeader, "80"
	}
	host = strings.ToLower(strings.Trim(host, "[]"))
	if ip := net.ParseIP(host); ip != nil {
		if ip.IsLoopback() && ip.To4() != nil {
			host = "127.0.0.1" // all of 127/8 is this machine
		} else {
			host = ip.String()
		}
	}
	return p.names[host] && (p.port == "" || port == p.port)
}

// protect wraps h with the host check and cross-origin protection; both
// answer JSON errors.
func (s *Server) protect(h http.Handler) http.Handler {
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, errorf(http.StatusForbidden, "%s %s: cross-origin request refused; use the page this server serves", r.Method, r.URL.Path))
	}))
	checked := cop.Handler(h)
	return securityHeaders(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.hosts.allows(r.Host) {
			writeError(w, errorf(http.StatusMisdirectedRequest, "host: %q is not a name of this server (open it as http://localhost or its --addr, or start it with --allow-host)", r.Host))
			return
		}
		checked.ServeHTTP(w, r)
	}))
}

// Media types of request bodies.
const (
	mediaJSON = "application/json"
	mediaRaw  = "application/octet-stream"
)

// checkMediaType answers 415 unless the request's Content-Type is want
// (parameters such as charset are ignored).
func checkMediaType(r *http.Request, want string) error {
	ct := r.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || mt != want {
		if ct == "" {
			ct = "none"
		}
		return errorf(http.StatusUnsupportedMediaType, "Content-Type: want %s, got %s", want, ct)
	}
	return nil
}
