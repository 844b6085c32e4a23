package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"oficina/http/sse"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Response is an observed answer of the server.
type Response struct {
	Method, Path string // request method and URL path
	Status       int
	Header       http.Header
	Body         []byte
}

// Mismatch is one way an answer differs from its document.
type Mismatch struct {
	Operation string // "POST /public/v1/sales (createSale)", or "webhook sale.paid"
	Status    int    // 0 for webhook bodies
	Pointer   string // JSON pointer in the body ("" when not about the body)
	Reason    string
	Schema    string // JSON pointer of the failing schema in the document, when known
}

func (m Mismatch) String() string {
	var sb strings.Builder
	sb.WriteString(m.Operation)
	if m.Status != 0 {
		fmt.Fprintf(&sb, " → %d", m.Status)
	}
	if m.Pointer != "" {
		fmt.Fprintf(&sb, " at %q", m.Pointer)
	}
	sb.WriteString(": ")
	sb.WriteString(m.Reason)
	if m.Schema != "" {
		fmt.Fprintf(&sb, " [#%s]", m.Schema)
	}
	return sb.String()
}

// Result is what Check found.
type Result struct {
	// Operation is the operation the response answers; "" when the
	// document has none for the method and path (a test-only route, an
	// unknown path, a 405): then nothing is checked.
	Operation  string
	Mismatches []Mismatch
}

// Check compares an observed response with the operation of the document
// it answers: the status must be documented, the documented required
// headers present and valid, the Content-Type one of the documented media
// types, and the body valid against its schema; a body where the document
// declares none, or none where it declares one, is a mismatch.
func (d *Document) Check(r Response) Result {
	op, _ := d.match(r.Method, r.Path)
	if op == nil {
		return Result{}
	}
	res := Result{Operation: op.Name()}
	add := func(ptr, reason, schema string) {
		res.Mismatches = append(res.Mismatches, Mismatch{Operation: res.Operation, Status: r.Status,
			Pointer: ptr, Reason: reason, Schema: schema})
	}
	resp, respPtr, ok := d.response(op, r.Status)
	if !ok {
		add("", fmt.Sprintf("status %d is not documented (documented: %s)", r.Status, d.statuses(op)), "")
		return res
	}
	d.checkHeaders(resp, respPtr, r.Header, add)
	content, _ := resp["content"].(map[string]any)
	hasBody := len(bytes.TrimSpace(r.Body)) > 0 && r.Method != http.MethodHead
	switch {
	case !hasBody && len(content) > 0 && r.Method != http.MethodHead:
		add("", "no body, but the document declares "+strings.Join(keys(content), ", "), "")
		return res
	case !hasBody:
		return res
	case len(content) == 0:
		add("", fmt.Sprintf("a body of %d bytes (%s), but the document declares none", len(r.Body), r.Header.Get("Content-Type")), "")
		return res
	}
	ct := r.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		add("", fmt.Sprintf("Content-Type %q is not a media type", ct), "")
		return res
	}
	key, ok := mediaKey(content, mt)
	if !ok {
		add("", fmt.Sprintf("Content-Type %s is not documented (documented: %s)", mt, strings.Join(keys(content), ", ")), "")
		return res
	}
	media, _ := content[key].(map[string]any)
	if _, ok := media["schema"]; !ok {
		return res
	}
	if mt == sse.ContentType {
		for _, m := range d.eventStream(r.Body) {
			add(m.Pointer, m.Reason, m.Schema)
		}
		return res
	}
	if !isJSON(mt) {
		add("", "cannot check a body of type "+mt, "")
		return res
	}
	schemaPtr := respPtr + "/content/" + escape(key) + "/schema"
	for _, m := range d.validate(schemaPtr, r.Body) {
		add(m.Pointer, m.Reason, m.Schema)
	}
	return res
}

// Webhook validates a webhook body against the document's entry for its
// type: webhooks.<type>.post.requestBody.content.application/json.schema.
func (d *Document) Webhook(body []byte) []Mismatch {
	var env struct {
		Type string `json:"type"`
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return []Mismatch{{Operation: "webhook", Reason: "body is not JSON: " + err.Error()}}
	}
	if m, ok := v.(map[string]any); ok {
		env.Type, _ = m["type"].(string)
	}
	name := "webhook " + env.Type
	fail := func(reason string) []Mismatch { return []Mismatch{{Operation: name, Reason: reason}} }
	if env.Type == "" {
		return fail("body has no string \"type\"")
	}
	hooks, ok := d.root["webhooks"].(map[string]any)
	if !ok {
		return fail("the document has no webhooks section")
	}
	if _, ok := hooks[env.Type]; !ok {
		return fail(fmt.Sprintf("event type %q has no entry in webhooks", env.Type))
	}
	item, ptr := d.resolve(hooks[env.Type], "/webhooks/"+escape(env.Type))
	post, ok := item["post"].(map[string]any)
	if !ok {
		return fail("webhooks." + env.Type + " has no post operation")
	}
	rb, rbPtr := d.resolve(post["requestBody"], ptr+"/post/requestBody")
	media, _ := rb["content"].(map[string]any)
	if _, ok := media["application/json"]; !ok {
		return fail("webhooks." + env.Type + " has no application/json request body")
	}
	out := d.validate(rbPtr+"/content/application~1json/schema", body)
	for i := range out {
		out[i].Operation = name
	}
	return out
}

// response finds the response object for status: the exact code, then
// its range (4XX), then default.
func (d *Document) response(op *operation, status int) (map[string]any, string, bool) {
	responses, _ := op.node["responses"].(map[string]any)
	code := strconv.Itoa(status)
	for _, k := range []string{code, code[:1] + "XX", code[:1] + "xx", "default"} {
		if v, ok := responses[k]; ok {
			m, ptr := d.resolve(v, op.ptr+"/responses/"+k)
			return m, ptr, m != nil
		}
	}
	return nil, "", false
}

func (d *Document) statuses(op *operation) string {
	responses, _ := op.node["responses"].(map[string]any)
	return strings.Join(keys(responses), ", ")
}

// checkHeaders: a header the document marks required must be present, and
// a documented header that is present must match its schema. Header values
// are strings; one that reads as a JSON number is also tried as a number,
// so an integer schema accepts "60".
func (d *Document) checkHeaders(resp map[string]any, respPtr string, h http.Header, add func(ptr, reason, schema string)) {
	headers, _ := resp["headers"].(map[string]any)
	for _, name := range keys(headers) {
		if strings.EqualFold(name, "Content-Type") {
			continue // OpenAPI: ignored when defined
		}
		hdr, hptr := d.resolve(headers[name], respPtr+"/headers/"+escape(name))
		if hdr == nil {
			continue
		}
		vals, present := h[http.CanonicalHeaderKey(name)]
		if !present {
			if req, _ := hdr["required"].(bool); req {
				add("", "header "+name+" is documented as required but absent", hptr)
			}
			continue
		}
		if _, ok := hdr["schema"]; !ok || len(vals) == 0 {
			continue
		}
		s, err := d.schema(hptr + "/schema")
		if err != nil {
			add("", err.Error(), hptr)
			continue
		}
		err = s.Validate(vals[0])
		if err != nil {
			if n, nerr := jsonschema.UnmarshalJSON(strings.NewReader(vals[0])); nerr == nil && s.Validate(n) == nil {
				err = nil
			}
		}
		if err != nil {
			add("", fmt.Sprintf("header %s: %q: %s", name, vals[0], leafReasons(err)), hptr+"/schema")
		}
	}
}

// validate parses body as JSON and validates it against the schema at ptr.
func (d *Document) validate(ptr string, body []byte) []Mismatch {
	s, err := d.schema(ptr)
	if err != nil {
		return []Mismatch{{Reason: err.Error(), Schema: ptr}}
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return []Mismatch{{Reason: "body is not JSON: " + err.Error()}}
	}
	err = s.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []Mismatch{{Reason: err.Error(), Schema: ptr}}
	}
	var out []Mismatch
	seen := map[string]bool{}
	for _, l := range leaves(ve) {
		m := Mismatch{Pointer: pointer(l.InstanceLocation), Reason: l.ErrorKind.LocalizedString(printer), Schema: schemaPointer(l)}
		if m.Pointer == "" {
			m.Pointer = "/"
		}
		if k := m.Pointer + "\x00" + m.Reason; !seen[k] {
			seen[k] = true
			out = append(out, m)
		}
	}
	return out
}

var printer = message.NewPrinter(language.English)

// leaves are the innermost causes: each says where and why.
func leaves(e *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		return []*jsonschema.ValidationError{e}
	}
	var out []*jsonschema.ValidationError
	for _, c := range e.Causes {
		out = append(out, leaves(c)...)
	}
	return out
}

func leafReasons(err error) string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err.Error()
	}
	var rs []string
	for _, l := range leaves(ve) {
		rs = append(rs, l.ErrorKind.LocalizedString(printer))
	}
	return strings.Join(rs, "; ")
}

// schemaPointer is the document pointer of the schema that failed, with
// the keyword ("#/components/schemas/Task/type").
func schemaPointer(l *jsonschema.ValidationError) string {
	_, frag, _ := strings.Cut(l.SchemaURL, "#")
	if u, err := url.PathUnescape(frag); err == nil {
		frag = u
	}
	if kp := l.ErrorKind.KeywordPath(); len(kp) > 0 {
		frag += pointer(kp)
	}
	return frag
}

func pointer(tokens []string) string {
	var sb strings.Builder
	for _, t := range tokens {
		sb.WriteByte('/')
		sb.WriteString(escape(t))
	}
	return sb.String()
}

// mediaKey finds the content entry for a media type: exact, type/*, */*.
func mediaKey(content map[string]any, mt string) (string, bool) {
	main, _, _ := strings.Cut(mt, "/")
	for _, k := range []string{mt, main + "/*", "*/*"} {
		if _, ok := content[k]; ok {
			return k, true
		}
	}
	for k := range content { // keys may carry parameters or differ in case
		if kt, _, err := mime.ParseMediaType(k); err == nil && strings.EqualFold(kt, mt) {
			return k, true
		}
	}
	return "", false
}

func isJSON(mt string) bool {
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Examples validates every request body example of the document against
// its request schema, so an example an integrator copies is accepted: the
// operations' and the webhooks' (an event body as the server sends it).
func (d *Document) Examples() []Mismatch {
	var out []Mismatch
	for _, section := range []string{"paths", "webhooks"} {
		items, _ := d.root[section].(map[string]any)
		for _, p := range keys(items) {
			item, itemPtr := d.resolve(items[p], "/"+section+"/"+escape(p))
			for _, method := range keys(item) {
				op, ok := item[method].(map[string]any)
				if !ok || op["requestBody"] == nil {
					continue
				}
				name := strings.ToUpper(method) + " " + p
				if section == "webhooks" {
					name = "webhook " + p
				}
				out = append(out, d.bodyExamples(name, op["requestBody"], itemPtr+"/"+method+"/requestBody")...)
			}
		}
	}
	return out
}

// WebhooksWithoutExample lists the webhooks entries whose body has no
// example.
func (d *Document) WebhooksWithoutExample() []string {
	var out []string
	hooks, _ := d.root["webhooks"].(map[string]any)
	for _, name := range keys(hooks) {
		item, _ := d.resolve(hooks[name], "")
		post, _ := item["post"].(map[string]any)
		rb, _ := d.resolve(post["requestBody"], "")
		content, _ := rb["content"].(map[string]any)
		media, _ := content["application/json"].(map[string]any)
		if ex, _ := media["examples"].(map[string]any); len(ex) == 0 && media["example"] == nil {
			out = append(out, name)
		}
	}
	return out
}

// bodyExamples validates the examples of one request body.
func (d *Document) bodyExamples(name string, requestBody any, ptr string) []Mismatch {
	var out []Mismatch
	rb, rbPtr := d.resolve(requestBody, ptr)
	content, _ := rb["content"].(map[string]any)
	media, _ := content["application/json"].(map[string]any)
	examples, _ := media["examples"].(map[string]any)
	for _, ex := range keys(examples) {
		e, _ := d.resolve(examples[ex], "")
		body, err := json.Marshal(e["value"])
		if err != nil {
			continue
		}
		for _, m := range d.validate(rbPtr+"/content/application~1json/schema", body) {
			m.Operation = name + " example " + ex
			out = append(out, m)
		}
	}
	return out
}

// eventStream checks a text/event-stream body (GET /events/stream): every
// message is an id (the stream position, digits), an event (the type) and
// data that is a webhook body of that type, valid against the document's
// webhooks section.
func (d *Document) eventStream(body []byte) []Mismatch {
	var out []Mismatch
	i := 0
	err := sse.Read(bytes.NewReader(body), func(m sse.Message) error {
		at := fmt.Sprintf("/%d", i)
		i++
		if _, err := strconv.ParseUint(m.ID, 10, 64); err != nil {
			out = append(out, Mismatch{Pointer: at, Reason: "message id " + strconv.Quote(m.ID) + " is not a position"})
		}
		if !strings.Contains(m.Data, `"type":"`+m.Event+`"`) {
			out = append(out, Mismatch{Pointer: at, Reason: "event " + strconv.Quote(m.Event) + " is not the data's type"})
		}
		out = append(out, d.Webhook([]byte(m.Data))...)
		return nil
	})
	if err != nil {
		out = append(out, Mismatch{Reason: "unreadable event stream: " + err.Error()})
	}
	return out
}
