// Package lambdahttp serves an http.Handler from Lambda: it turns an API
// Gateway HTTP API event (payload 2.0), a Lambda Function URL event (the
// same shape) or an API Gateway REST API proxy event (payload 1.0) into an
// http.Request, runs the handler, and returns the buffered response in the
// matching shape. Bodies are base64-decoded and -encoded as the events say.
package lambdahttp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"unicode/utf8"
)

// MaxResponseBytes is the largest response body returned: Lambda refuses
// synchronous responses over 6 MB (the whole JSON document, base64 and
// headers included), so bigger ones become a 502 that says why.
const MaxResponseBytes = 6<<20 - 64<<10

// ErrNotHTTP is returned for an event of no known HTTP shape.
var ErrNotHTTP = errors.New("lambdahttp: not an API Gateway or Function URL event")

// Handler adapts an http.Handler to a Lambda handler. Its Invoke method is
// what lambda.Start takes.
type Handler struct {
	H http.Handler
	// MaxBodyBytes, when positive, bounds a request's body: a bigger one
	// is answered 413 before it is decoded or reaches H, as the HTTP
	// server does (see tools.HTTPOptions.MaxRequestBytes).
	MaxBodyBytes int64
}

// event is the union of the fields used from payload 1.0 and 2.0 events.
type event struct {
	Version string `json:"version"`

	// 2.0: API Gateway HTTP API and Function URL.
	RawPath        string   `json:"rawPath"`
	RawQueryString string   `json:"rawQueryString"`
	Cookies        []string `json:"cookies"`

	// 1.0: API Gateway REST API (and HTTP API with payload 1.0).
	HTTPMethod           string              `json:"httpMethod"`
	Path                 string              `json:"path"`
	MultiValueHeaders    map[string][]string `json:"multiValueHeaders"`
	Query                map[string]string   `json:"queryStringParameters"`
	MultiValueQuery      map[string][]string `json:"multiValueQueryStringParameters"`
	Headers              map[string]string   `json:"headers"`
	Body                 string              `json:"body"`
	IsBase64Encoded      bool                `json:"isBase64Encoded"`
	RequestContextFields requestContext      `json:"requestContext"`
}

type requestContext struct {
	Stage      string `json:"stage"`
	DomainName string `json:"domainName"`
	RequestID  string `json:"requestId"`
	HTTP       struct {
		Method   string `json:"method"`
		SourceIP string `json:"sourceIp"`
	} `json:"http"`
	Identity struct {
		SourceIP string `json:"sourceIp"`
	} `json:"identity"`
}

// v2 reports whether e is a payload 2.0 event.
func (e *event) v2() bool {
	return e.Version == "2.0" || (e.HTTPMethod == "" && e.RequestContextFields.HTTP.Method != "")
}

// ResponseV2 is the payload 2.0 response (HTTP API, Function URL).
type ResponseV2 struct {
	StatusCode      int               `json:"statusCode"`
	Headers         map[string]string `json:"headers,omitempty"`
	Cookies         []string          `json:"cookies,omitempty"`
	Body            string            `json:"body"`
	IsBase64Encoded bool              `json:"isBase64Encoded"`
}

// ResponseV1 is the payload 1.0 response (REST API proxy integration).
type ResponseV1 struct {
	StatusCode        int                 `json:"statusCode"`
	MultiValueHeaders map[string][]string `json:"multiValueHeaders,omitempty"`
	Body              string              `json:"body"`
	IsBase64Encoded   bool                `json:"isBase64Encoded"`
}

// Invoke serves one event. It returns a ResponseV2 for a payload 2.0
// event, a ResponseV1 for a payload 1.0 one, and ErrNotHTTP (wrapped) for
// anything else. A request that cannot be built (a bad method, path or
// base64 body) is answered 400 without reaching the handler.
func (h Handler) Invoke(ctx context.Context, raw json.RawMessage) (any, error) {
	var e event
	// A field of the wrong type leaves the others decoded: an event that is
	// still recognisably HTTP is answered 400 rather than failing the
	// invocation (a function error).
	fieldErr := json.Unmarshal(raw, &e)
	var typeErr *json.UnmarshalTypeError
	if fieldErr != nil && !errors.As(fieldErr, &typeErr) {
		return nil, fmt.Errorf("%w: %v", ErrNotHTTP, fieldErr)
	}
	v2 := e.v2()
	if !v2 && e.HTTPMethod == "" {
		return nil, ErrNotHTTP
	}
	rec := newRecorder()
	if h.MaxBodyBytes > 0 && bodySize(&e) > h.MaxBodyBytes {
		rec.Header().Set("Content-Type", "text/plain; charset=utf-8")
		rec.WriteHeader(http.StatusRequestEntityTooLarge)
		_, _ = fmt.Fprintf(rec, "Content Too Large: requests are limited to %d bytes\n", h.MaxBodyBytes)
		return rec.response(v2), nil
	}
	r, err := e.request(ctx, v2)
	if fieldErr != nil {
		err = fmt.Errorf("field %s: %s where %s was expected", typeErr.Field, typeErr.Value, typeErr.Type)
	}
	if err != nil {
		rec.Header().Set("Content-Type", "text/plain; charset=utf-8")
		rec.WriteHeader(http.StatusBadRequest)
		_, _ = rec.Write([]byte("bad request: " + err.Error() + "\n"))
	} else {
		h.H.ServeHTTP(rec, r)
	}
	return rec.response(v2), nil
}

// bodySize is the size of the event's body once decoded, without decoding
// it.
func bodySize(e *event) int64 {
	if e.IsBase64Encoded {
		return int64(base64.StdEncoding.DecodedLen(len(e.Body)))
	}
	return int64(len(e.Body))
}

// request builds the http.Request an event describes.
func (e *event) request(ctx context.Context, v2 bool) (*http.Request, error) {
	method, path, query := e.HTTPMethod, e.Path, ""
	header := http.Header{}
	if v2 {
		method, path, query = e.RequestContextFields.HTTP.Method, e.RawPath, e.RawQueryString
		// A named stage shows in rawPath ("/prod/mcp"); $default does not.
		if st := e.RequestContextFields.Stage; st != "" && st != "$default" {
			if rest, ok := strings.CutPrefix(path, "/"+st+"/"); ok {
				path = "/" + rest
			}
		}
		for k, v := range e.Headers {
			header.Set(k, v) // values of repeated headers arrive comma-joined
		}
		if len(e.Cookies) > 0 {
			header.Set("Cookie", strings.Join(e.Cookies, "; "))
		}
	} else {
		for k, v := range e.Headers {
			header.Set(k, v)
		}
		for k, vs := range e.MultiValueHeaders {
			header.Del(k)
			for _, v := range vs {
				header.Add(k, v)
			}
		}
		q := url.Values{}
		for k, v := range e.Query {
			q.Set(k, v)
		}
		for k, vs := range e.MultiValueQuery {
			q[k] = vs
		}
		query = q.Encode()
	}
	if method == "" {
		return nil, errors.New("no HTTP method (requestContext.http.method or httpMethod)")
	}
	if path == "" {
		path = "/"
	}
	if err := checkHeader(header); err != nil {
		return nil, err
	}
	if !strings.HasPrefix(path, "/") {
		return nil, fmt.Errorf("path %q does not start with /", path)
	}
	body := []byte(e.Body)
	if e.IsBase64Encoded {
		var err error
		if body, err = base64.StdEncoding.DecodeString(e.Body); err != nil {
			return nil, fmt.Errorf("body: %v", err)
		}
	}
	target := path
	if query != "" {
		target += "?" + query
	}
	r, err := http.NewRequestWithContext(ctx, method, target, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	r.RequestURI = target
	r.Header = header
	r.Host = header.Get("Host")
	if r.Host == "" {
		r.Host = e.RequestContextFields.DomainName
	}
	r.URL.Host = r.Host
	r.URL.Scheme = "https"
	ip := e.RequestContextFields.HTTP.SourceIP
	if !v2 {
		ip = e.RequestContextFields.Identity.SourceIP
	}
	if ip != "" {
		r.RemoteAddr = net.JoinHostPort(ip, "0")
	}
	return r, nil
}

// checkHeader refuses what no HTTP server would have passed on: header
// names that are no token, values with CR, LF or NUL.
func checkHeader(h http.Header) error {
	for k, vs := range h {
		if k == "" || strings.IndexFunc(k, func(r rune) bool { return r <= ' ' || r >= 0x7f || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r) }) >= 0 {
			return fmt.Errorf("header name %q is not a token", k)
		}
		for _, v := range vs {
			if strings.ContainsAny(v, "\r\n\x00") {
				return fmt.Errorf("header %s: value with CR, LF or NUL", k)
			}
		}
	}
	return nil
}

// recorder is a buffering http.ResponseWriter.
type recorder struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func newRecorder() *recorder { return &recorder{header: http.Header{}} }

func (w *recorder) Header() http.Header { return w.header }

func (w *recorder) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}

func (w *recorder) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	if w.body.Len()+len(p) > MaxResponseBytes+1 {
		p = p[:max(0, MaxResponseBytes+1-w.body.Len())]
	}
	return w.body.Write(p)
}

// Flush is a no-op: the response is sent whole.
func (w *recorder) Flush() {}

// response renders the recorded response in the event's shape.
func (w *recorder) response(v2 bool) any {
	code := w.code
	if code == 0 {
		code = http.StatusOK
	}
	header, body := w.header, w.body.Bytes()
	isText := textual(header.Get("Content-Type"), body)
	if len(body) > MaxResponseBytes || (!isText && base64.StdEncoding.EncodedLen(len(body)) > MaxResponseBytes) {
		code, header, isText = http.StatusBadGateway, http.Header{"Content-Type": {"application/json"}}, true
		body = []byte(`{"error":"the response is larger than Lambda can return (6 MB)"}` + "\n")
	}
	text, b64 := string(body), false
	if !isText {
		text, b64 = base64.StdEncoding.EncodeToString(body), true
	}
	if !v2 {
		mv := make(map[string][]string, len(header))
		for k, vs := range header {
			mv[k] = vs
		}
		return ResponseV1{StatusCode: code, MultiValueHeaders: mv, Body: text, IsBase64Encoded: b64}
	}
	res := ResponseV2{StatusCode: code, Headers: make(map[string]string, len(header)), Body: text, IsBase64Encoded: b64}
	keys := make([]string, 0, len(header))
	for k := range header {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if http.CanonicalHeaderKey(k) == "Set-Cookie" {
			res.Cookies = append(res.Cookies, header[k]...)
			continue
		}
		res.Headers[k] = strings.Join(header[k], ",")
	}
	return res
}

// textual reports whether a body can travel as a JSON string: valid UTF-8
// of a text media type (text/*, JSON, XML, JavaScript, forms), or empty.
func textual(contentType string, body []byte) bool {
	if len(body) == 0 {
		return true
	}
	if !utf8.Valid(body) {
		return false
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return contentType == ""
	}
	switch {
	case strings.HasPrefix(mt, "text/"),
		strings.HasSuffix(mt, "/json"), strings.HasSuffix(mt, "+json"),
		strings.HasSuffix(mt, "/xml"), strings.HasSuffix(mt, "+xml"),
		mt == "application/javascript", mt == "application/x-www-form-urlencoded":
		return true
	}
	return false
}
