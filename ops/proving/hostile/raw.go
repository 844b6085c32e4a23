package hostile

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"
)

// protocolCases break HTTP/1.1 itself. Most never reach Oficina: net/http
// answers them in plain text, which is allowed here (Plain); what must
// hold is no 5xx beyond the two the protocol prescribes for input the
// server cannot take (505 for another HTTP version, 501 for an unknown
// transfer coding, RFC 9112 2.6 and 6.1).
func (g *gen) protocolCases() {
	a := g.r.a
	auth := "Authorization: Bearer " + a.Key + "\r\n"
	me := "GET " + Prefix + "/me HTTP/1.1\r\nHost: hostile\r\n" + auth
	post := "POST " + Prefix + "/service_orders HTTP/1.1\r\nHost: hostile\r\n" + auth + "Content-Type: application/json\r\n"
	plain := expect{Plain: true}
	plainRefused := expect{Plain: true, Refuse: true}
	for _, c := range []struct {
		name string
		raw  string
		e    expect
	}{
		{"garbage request line", "GARBAGE\r\n\r\n", plainRefused},
		{"NUL in a header value", me + "X-Hostile: a\x00b\r\n\r\n", plainRefused},
		{"space in a header name", me + "Bad Header: x\r\n\r\n", plainRefused},
		{"header without colon", me + "NoColon\r\n\r\n", plainRefused},
		{"Content-Length not a number", post + "Content-Length: abc\r\n\r\n{}", plainRefused},
		{"negative Content-Length", post + "Content-Length: -1\r\n\r\n{}", plainRefused},
		{"two different Content-Length", post + "Content-Length: 2\r\nContent-Length: 3\r\n\r\n{} ", plainRefused},
		{"Content-Length and chunked", post + "Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", plain},
		{"unknown transfer coding", post + "Transfer-Encoding: gzip\r\n\r\n{}", expect{Plain: true, Any: []int{400, 501}}},
		{"chunked with a bad size", post + "Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n", plainRefused},
		{"chunked with a huge size", post + "Transfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\n{}\r\n0\r\n\r\n", plainRefused},
		{"chunk extension of 100 KB", post + "Transfer-Encoding: chunked\r\n\r\n2;" + strings.Repeat("x", 100_000) + "\r\n{}\r\n0\r\n\r\n", plain},
		{"HTTP/2.0 request line", "GET " + Prefix + "/me HTTP/2.0\r\nHost: hostile\r\n" + auth + "\r\n", expect{Plain: true, Any: []int{505}}},
		{"HTTP/0.9 request line", "GET " + Prefix + "/me HTTP/0.9\r\nHost: hostile\r\n" + auth + "\r\n", expect{Plain: true, Any: []int{505}}},
		{"HTTP/1.1 without Host", "GET " + Prefix + "/me HTTP/1.1\r\n" + auth + "\r\n", plainRefused},
		{"raw space in the path", "GET " + Prefix + "/m e HTTP/1.1\r\nHost: hostile\r\n" + auth + "\r\n", plainRefused},
		{"raw 0xFF in the path", "GET " + Prefix + "/sales/\xff\xfe HTTP/1.1\r\nHost: hostile\r\n" + auth + "\r\n", plainRefused},
		{"raw NUL in the path", "GET " + Prefix + "/sales/a\x00b HTTP/1.1\r\nHost: hostile\r\n" + auth + "\r\n", plainRefused},
		{"absolute-form target", "GET http://evil.test" + Prefix + "/me HTTP/1.1\r\nHost: evil.test\r\n" + auth + "\r\n", plain},
		{"obsolete line folding", me + "X-Hostile: a\r\n b\r\n\r\n", plain},
		{"bare LF line endings", strings.ReplaceAll(me, "\r\n", "\n") + "\n", plain},
		{"CONNECT", "CONNECT evil.test:443 HTTP/1.1\r\nHost: evil.test:443\r\n" + auth + "\r\n", plainRefused},
		{"HTTP/2 preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", plain},
		{"Expect 100-continue on 1 MB + 1", post + "Expect: 100-continue\r\nContent-Length: 1048577\r\n\r\n",
			expect{Status: 413, Code: "request_too_large", Refuse: true}},
		{"unknown Expect", me + "Expect: hostile\r\n\r\n", plain},
		{"8 KB header name", me + strings.Repeat("X", 8192) + ": 1\r\n\r\n", plain},
		{"request line of 100 KB", "GET " + Prefix + "/me?" + strings.Repeat("a", 100_000) + " HTTP/1.1\r\nHost: hostile\r\n" + auth + "\r\n", plain},
		{"Host with NUL", "GET " + Prefix + "/me HTTP/1.1\r\nHost: a\x00b\r\n" + auth + "\r\n", plainRefused},
		{"two Host headers", "GET " + Prefix + "/me HTTP/1.1\r\nHost: a\r\nHost: b\r\n" + auth + "\r\n", plainRefused},
	} {
		src, ok := g.r.src.take() // some of these may reach authentication without a key
		if !ok {
			continue
		}
		// The request line names the case; its target decides whether the
		// answer must carry a request id.
		line, _, _ := strings.Cut(c.raw, "\r\n")
		parts := strings.Fields(line)
		req := request{Method: "RAW " + short(line), Source: src}
		if len(parts) > 1 {
			req.Path = strings.TrimPrefix(parts[1], "http://evil.test")
		}
		g.cases = append(g.cases, &kase{Category: "protocol", Name: c.name, Raw: []byte(c.raw), Req: req, Asker: a, Expect: c.e})
	}
}

// manyHeaderCases: 10,000 headers over the limit (431), 10,000 small ones
// under it, one huge header.
func (g *gen) manyHeaderCases() {
	a := g.r.a
	me := "GET " + Prefix + "/me HTTP/1.1\r\nHost: hostile\r\nAuthorization: Bearer " + a.Key + "\r\n"
	var big, small bytes.Buffer
	big.WriteString(me)
	small.WriteString(me)
	for i := range 10_000 {
		fmt.Fprintf(&big, "X-Hostile-%d: value-%d\r\n", i, i)
		small.WriteString("A:1\r\n")
	}
	big.WriteString("\r\n")
	small.WriteString("\r\n")
	tooLarge := expect{Plain: true, Any: []int{431}}
	for _, c := range []struct {
		name string
		raw  []byte
		e    expect
	}{
		{fmt.Sprintf("10,000 headers (%d KB)", big.Len()>>10), big.Bytes(), tooLarge},
		{fmt.Sprintf("10,000 headers of 5 bytes (%d KB, under the limit)", small.Len()>>10), small.Bytes(), expect{Plain: true}},
		{"one header of 100 KB", []byte(me + "X-Hostile: " + strings.Repeat("x", 100_000) + "\r\n\r\n"), tooLarge},
		{"10,000 Accept-Language values", []byte(me + "Accept-Language: " + strings.Repeat("en;q=0.5,", 6000) + "\r\n\r\n"), expect{Plain: true}},
	} {
		g.cases = append(g.cases, &kase{Category: "many_headers", Name: c.name, Raw: c.raw,
			Req: request{Method: "RAW", Path: Prefix + "/me"}, Asker: a, Expect: c.e})
	}
}

// slowResult is a slow client's case with what happened to it.
type slowResult struct {
	kase     *kase
	answer   answer
	problems []string
}

// slowClients keeps slowloris connections (headers a line a second) and
// slow bodies (a byte a second) open against the public listener, and
// one slow body against the admin listener, until the server cuts them
// or SlowLimit passes; meanwhile GET /me must keep answering.
func (r *run) slowClients(ctx context.Context) []slowResult {
	t := r.t
	var mu sync.Mutex
	var out []slowResult
	add := func(s slowResult) {
		mu.Lock()
		out = append(out, s)
		mu.Unlock()
	}
	var wg sync.WaitGroup
	start := time.Now()
	head := "GET " + Prefix + "/me HTTP/1.1\r\nHost: hostile\r\nAuthorization: Bearer " + r.a.Key + "\r\n"
	body := "POST " + Prefix + "/service_orders HTTP/1.1\r\nHost: hostile\r\nAuthorization: Bearer " + r.a.Key +
		"\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
	for i := range t.SlowHeaders {
		wg.Go(func() {
			add(r.slow(ctx, r.c.host, fmt.Sprintf("slowloris headers #%d", i+1), head, func(n int) string { return fmt.Sprintf("X-Slow-%d: 1\r\n", n) }, start))
		})
	}
	for i := range t.SlowBodies {
		wg.Go(func() {
			add(r.slow(ctx, r.c.host, fmt.Sprintf("slow body #%d", i+1), body, func(int) string { return " " }, start))
		})
	}
	// Others are served meanwhile: a GET /me every 200 ms while they hang.
	served := make(chan slowResult, 1)
	go func() {
		k := &kase{Category: "slow_clients", Name: "GET /me while the slow clients hang", Req: request{Method: "GET", Path: Prefix + "/me"}}
		var worst time.Duration
		var problems []string
		n := 0
		deadline := time.Now().Add(min(t.SlowLimit, 12*time.Second))
		for time.Now().Before(deadline) && ctx.Err() == nil {
			t0 := time.Now()
			a, err := r.c.public(ctx, "GET", "/me", r.a.Key, nil)
			d := time.Since(t0)
			worst = max(worst, d)
			n++
			if err != nil || a.Status != 200 {
				problems = append(problems, fmt.Sprintf("GET /me failed while slow clients hung: %d %v", a.Status, err))
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		r.note("while %d slowloris and %d slow-body connections hung: %d GET /me answered, slowest %s",
			t.SlowHeaders, t.SlowBodies, n, worst.Round(time.Millisecond))
		served <- slowResult{kase: k, answer: answer{Status: 200}, problems: problems}
	}()
	// The admin listener: reported, not judged (it is private).
	if host := hostOf(r.c.admin); host != "" {
		wg.Go(func() {
			adm := "POST /admin/v1/companies HTTP/1.1\r\nHost: hostile\r\nAuthorization: Bearer " + r.c.adminToken +
				"\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
			s := r.slow(ctx, host, "admin listener slow body", adm, func(int) string { return " " }, start)
			if len(s.problems) > 0 {
				r.note("admin listener: %s (its http.Server sets ReadHeaderTimeout only)", strings.Join(s.problems, "; "))
			} else {
				r.note("admin listener: slow body cut off with %d", s.answer.Status)
			}
		})
	}
	wg.Wait()
	return append(out, <-served)
}

func hostOf(base string) string {
	rest, ok := strings.CutPrefix(base, "http://")
	if !ok {
		return ""
	}
	host, _, _ := strings.Cut(rest, "/")
	return host
}

// slow writes head, then one piece a second, until the server answers or
// closes, or SlowLimit passes.
func (r *run) slow(ctx context.Context, host, name, head string, piece func(int) string, start time.Time) slowResult {
	k := &kase{Category: "slow_clients", Name: name, Req: request{Method: "SLOW", Path: host}}
	if !strings.HasPrefix(name, "admin") {
		k.Expect = expect{Plain: true}
	}
	d := net.Dialer{Timeout: 5 * time.Second}
	conn, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return slowResult{kase: k, problems: []string{"dial: " + err.Error()}}
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(head)); err != nil {
		return slowResult{kase: k, problems: []string{"write: " + err.Error()}}
	}
	t0 := time.Now()
	closed := make(chan answer, 1)
	go func() {
		buf := make([]byte, 64<<10)
		var got []byte
		for {
			n, err := conn.Read(buf)
			got = append(got, buf[:n]...)
			if err != nil {
				closed <- parseRaw(got)
				return
			}
		}
	}()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	limit := time.NewTimer(r.t.SlowLimit - time.Since(start))
	defer limit.Stop()
	for n := 0; ; n++ {
		select {
		case a := <-closed:
			k.Name += fmt.Sprintf(" (cut after %s)", time.Since(t0).Round(time.Second))
			var problems []string
			if a.Status >= 500 {
				problems = append(problems, fmt.Sprintf("server error %d", a.Status))
			}
			return slowResult{kase: k, answer: a, problems: problems}
		case <-limit.C:
			return slowResult{kase: k, problems: []string{fmt.Sprintf("still connected after %s", r.t.SlowLimit)}}
		case <-ctx.Done():
			return slowResult{kase: k, problems: []string{"run ended: " + ctx.Err().Error()}}
		case <-tick.C:
			_, _ = conn.Write([]byte(piece(n)))
		}
	}
}

// parseRaw reads the status line and body of whatever the server wrote
// before closing (nothing: status 0, a silent close).
func parseRaw(b []byte) answer {
	head, body, _ := bytes.Cut(b, []byte("\r\n\r\n"))
	var status int
	if line, _, _ := bytes.Cut(head, []byte("\r\n")); len(line) > 0 {
		_, _ = fmt.Sscanf(string(line), "HTTP/1.1 %d", &status)
	}
	return answer{Status: status, Raw: body}
}
