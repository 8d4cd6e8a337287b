package s3events

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
)

// Hint is one object event reduced to what the indexer needs: which key
// changed. It is only a hint: Apply re-reads the object and indexes what is
// there now, so the other fields are informational.
type Hint struct {
	Bucket string
	Key    string // the object key, decoded
	// AltKey is a second reading of a key whose encoding could not be told
	// from the payload (a sender that is neither AWS, MinIO nor versitygw);
	// Handle applies both. "" when the key is unambiguous.
	AltKey    string
	Removed   bool // ObjectRemoved:* / "Object Deleted"
	Size      int64
	ETag      string // without quotes
	Sequencer string
	VersionID string
	EventName string // as sent: "ObjectCreated:Put", "s3:ObjectRemoved:Delete", "Object Deleted", ...
	MessageID string // the SQS message that carried the hint, else ""
}

// Event kinds returned by DecodeEvent.
const (
	KindS3          = "s3"          // S3 notification from AWS (direct or via SNS)
	KindSQS         = "sqs"         // SQS batch; see MessageErrors
	KindEventBridge = "eventbridge" // EventBridge "Object Created" / "Object Deleted"
	KindWebhook     = "webhook"     // S3 notification from an S3-compatible server (versitygw, MinIO)
	KindTestEvent   = "test-event"  // s3:TestEvent, sent when notifications are configured
	KindReconcile   = "reconcile"   // {"reconcile": true} or an EventBridge "Scheduled Event"
)

// ErrUnknownEvent is wrapped when a payload is valid JSON but no known event.
var ErrUnknownEvent = errors.New("indexer: unrecognised event")

// MessageErrors is returned by DecodeEvent for an SQS batch in which some
// messages could not be decoded: message id -> why. The hints of the other
// messages are returned with it, so one poison message never fails a batch.
type MessageErrors map[string]error

func (e MessageErrors) Error() string {
	ids := make([]string, 0, len(e))
	for id := range e {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var b strings.Builder
	fmt.Fprintf(&b, "indexer: %d undecodable SQS message(s):", len(e))
	for _, id := range ids {
		fmt.Fprintf(&b, " %s (%v)", id, e[id])
	}
	return b.String()
}

// maxNesting bounds envelopes inside envelopes (SQS -> SNS -> S3).
const maxNesting = 4

// DecodeEvent turns any event the indexer can be invoked with into hints,
// from the raw JSON: an S3 notification ({"Records": [...]} as sent by S3,
// versitygw or MinIO, also a bare record or array of records), an SQS batch
// whose bodies hold S3 notifications, SNS envelopes or EventBridge events,
// an SNS Lambda event, an EventBridge S3 event, s3:TestEvent (no hints), and
// the reconcile trigger. It never panics. For KindSQS, err may be a
// MessageErrors next to the hints of the messages that decoded.
//
// Object keys: AWS and MinIO URL-encode them in S3 notifications ('+' is a
// space, %XX a byte) and they are decoded; versitygw sends them as stored
// (recognised by its configurationId "*-global", its bucket ARN holding the
// object path, or an "s3:" prefix on the event name while eventSource is
// "aws:s3") and they are kept as is; EventBridge keys are not encoded. For
// any other sender both readings are kept (Key decoded, AltKey raw).
func DecodeEvent(raw []byte) (hints []Hint, kind string, err error) {
	return decode(raw, 0)
}

// envelope is the union of the top-level fields that tell shapes apart.
type envelope struct {
	Records    []json.RawMessage `json:"Records"`
	Event      string            `json:"Event"` // s3:TestEvent
	Reconcile  bool              `json:"reconcile"`
	DetailType string            `json:"detail-type"`
	Source     string            `json:"source"`
	Detail     json.RawMessage   `json:"detail"`
	Type       string            `json:"Type"` // SNS envelope: "Notification"
	Message    *string           `json:"Message"`
	S3         json.RawMessage   `json:"s3"` // a bare S3 record
}

func decode(raw []byte, depth int) ([]Hint, string, error) {
	if depth > maxNesting {
		return nil, "", fmt.Errorf("%w: envelopes nested too deep", ErrUnknownEvent)
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '[' { // a bare array of S3 records
		var recs []json.RawMessage
		if err := json.Unmarshal(raw, &recs); err != nil {
			return nil, "", fmt.Errorf("decoding event: %w", err)
		}
		return decodeS3Records(recs)
	}
	var env envelope
	if err := unmarshalLoose(raw, &env); err != nil {
		return nil, "", fmt.Errorf("decoding event: %w", err)
	}
	switch {
	case env.Reconcile:
		return nil, KindReconcile, nil
	case env.Event == "s3:TestEvent":
		return nil, KindTestEvent, nil
	case len(env.Records) > 0:
		return decodeRecords(env.Records, depth)
	case env.Records != nil: // {"Records": []}: nothing happened
		return nil, KindS3, nil
	case env.DetailType != "" || env.Source != "":
		return decodeEventBridge(env)
	case env.Type == "Notification" && env.Message != nil:
		return decode([]byte(*env.Message), depth+1)
	case len(env.S3) > 0:
		return decodeS3Records([]json.RawMessage{raw})
	}
	return nil, "", fmt.Errorf("%w: no Records, detail-type or Event field", ErrUnknownEvent)
}

// recordSource peeks at what a record in "Records" is.
type recordSource struct {
	EventSource  string `json:"eventSource"`
	EventSourceU string `json:"EventSource"` // SNS Lambda events capitalise it
}

func decodeRecords(recs []json.RawMessage, depth int) ([]Hint, string, error) {
	var src recordSource
	if err := json.Unmarshal(recs[0], &src); err != nil {
		return nil, "", fmt.Errorf("decoding event record: %w", err)
	}
	// encoding/json matches keys case-insensitively, so either field may hold it.
	switch s := src.EventSource + src.EventSourceU; {
	case strings.HasPrefix(s, "aws:sqs"):
		return decodeSQS(recs, depth)
	case strings.HasPrefix(s, "aws:sns"):
		return decodeSNS(recs, depth)
	}
	return decodeS3Records(recs)
}

// sqsMessage is the part of events.SQSMessage the indexer reads.
type sqsMessage struct {
	MessageID string `json:"messageId"`
	Body      string `json:"body"`
}

func decodeSQS(recs []json.RawMessage, depth int) ([]Hint, string, error) {
	var hints []Hint
	bad := MessageErrors{}
	for i, r := range recs {
		var m sqsMessage
		if err := json.Unmarshal(r, &m); err != nil || m.MessageID == "" {
			// Without an id the failure cannot be reported per message.
			return nil, KindSQS, fmt.Errorf("decoding SQS record %d: no message id (%v)", i, err)
		}
		hs, kind, err := decode([]byte(m.Body), depth+1)
		if err == nil && (kind == KindSQS || kind == KindReconcile) {
			err = fmt.Errorf("%w: a %s event inside an SQS message", ErrUnknownEvent, kind)
		}
		if err != nil {
			bad[m.MessageID] = err
			continue
		}
		for j := range hs {
			hs[j].MessageID = m.MessageID
		}
		hints = append(hints, hs...)
	}
	if len(bad) > 0 {
		return hints, KindSQS, bad
	}
	return hints, KindSQS, nil
}

func decodeSNS(recs []json.RawMessage, depth int) ([]Hint, string, error) {
	var hints []Hint
	kind := KindS3
	for i, r := range recs {
		var rec struct {
			SNS struct {
				Message string `json:"Message"`
			} `json:"Sns"`
		}
		if err := json.Unmarshal(r, &rec); err != nil {
			return nil, "", fmt.Errorf("decoding SNS record %d: %w", i, err)
		}
		hs, k, err := decode([]byte(rec.SNS.Message), depth+1)
		if err != nil {
			return nil, "", fmt.Errorf("decoding SNS record %d: %w", i, err)
		}
		if k == KindWebhook {
			kind = k
		}
		hints = append(hints, hs...)
	}
	return hints, kind, nil
}

// s3Record is the part of an S3 notification record the indexer reads. It
// is our own struct because versitygw sends fields (an empty
// glacierEventData time, null eTag/versionId) that events.S3EventRecord
// rejects.
type s3Record struct {
	EventSource string `json:"eventSource"`
	EventName   string `json:"eventName"`
	S3          *struct {
		ConfigurationID string `json:"configurationId"`
		Bucket          struct {
			Name string `json:"name"`
			ARN  string `json:"arn"`
		} `json:"bucket"`
		Object struct {
			Key       json.RawMessage `json:"key"`
			Size      int64           `json:"size"`
			ETag      *string         `json:"eTag"`
			VersionID *string         `json:"versionId"`
			Sequencer string          `json:"sequencer"`
		} `json:"object"`
	} `json:"s3"`
}

// keyEncoding is how a sender spells object keys in its notifications.
type keyEncoding int

const (
	keyUnknown keyEncoding = iota // both readings kept
	keyForm                       // URL form encoding (AWS, MinIO)
	keyRaw                        // as stored (versitygw, EventBridge)
)

func (r *s3Record) encoding() keyEncoding {
	switch {
	case r.isVersityGW():
		return keyRaw
	case r.EventSource == "aws:s3", r.EventSource == "minio:s3":
		return keyForm
	}
	return keyUnknown
}

// isVersityGW recognises versitygw's notifications, which carry keys
// unencoded: its configuration ids are "kafka-global", "nats-global",
// "webhook-global"..., its bucket ARN is "arn:aws:s3:::/bucket/key" (a real
// bucket ARN has no '/'), and it prefixes event names with "s3:" where AWS,
// whose eventSource it copies, does not.
func (r *s3Record) isVersityGW() bool {
	return strings.HasSuffix(r.S3.ConfigurationID, "-global") ||
		strings.Contains(r.S3.Bucket.ARN, "/") ||
		(r.EventSource == "aws:s3" && strings.HasPrefix(r.EventName, "s3:"))
}

func decodeS3Records(recs []json.RawMessage) ([]Hint, string, error) {
	kind := KindS3
	hints := make([]Hint, 0, len(recs))
	for i, raw := range recs {
		var r s3Record
		if err := unmarshalLoose(raw, &r); err != nil {
			return nil, "", fmt.Errorf("decoding S3 record %d: %w", i, err)
		}
		var raw string
		if r.S3 == nil || json.Unmarshal(r.S3.Object.Key, &raw) != nil || raw == "" {
			return nil, "", fmt.Errorf("%w: S3 record %d has no s3.object.key string", ErrUnknownEvent, i)
		}
		enc := r.encoding()
		if enc == keyRaw || r.EventSource == "minio:s3" {
			kind = KindWebhook
		}
		key, alt := decodeKey(raw, enc)
		hints = append(hints, Hint{
			Bucket: r.S3.Bucket.Name, Key: key, AltKey: alt,
			Removed: isRemoval(r.EventName), Size: r.S3.Object.Size,
			ETag: unquote(deref(r.S3.Object.ETag)), Sequencer: r.S3.Object.Sequencer,
			VersionID: deref(r.S3.Object.VersionID), EventName: r.EventName,
		})
	}
	return hints, kind, nil
}

// decodeKey applies the sender's key encoding; see DecodeEvent.
func decodeKey(raw string, enc keyEncoding) (key, alt string) {
	if enc == keyRaw {
		return raw, ""
	}
	dec, err := url.QueryUnescape(raw)
	switch {
	case err != nil: // not an encoding after all: the key as sent
		return raw, ""
	case enc == keyUnknown && dec != raw:
		return dec, raw
	}
	return dec, ""
}

func isRemoval(eventName string) bool {
	return strings.Contains(eventName, "ObjectRemoved") || strings.HasPrefix(eventName, "LifecycleExpiration")
}

// ebDetail is the detail of an EventBridge S3 event.
type ebDetail struct {
	Bucket struct {
		Name string `json:"name"`
	} `json:"bucket"`
	Object *struct {
		Key       json.RawMessage `json:"key"`
		Size      int64           `json:"size"`
		ETag      string          `json:"etag"`
		VersionID string          `json:"version-id"`
		Sequencer string          `json:"sequencer"`
	} `json:"object"`
}

func decodeEventBridge(env envelope) ([]Hint, string, error) {
	if env.DetailType == "Scheduled Event" {
		return nil, KindReconcile, nil
	}
	if env.Source != "aws.s3" {
		return nil, "", fmt.Errorf("%w: EventBridge event from %q (%q)", ErrUnknownEvent, env.Source, env.DetailType)
	}
	var d ebDetail
	if err := unmarshalLoose(env.Detail, &d); err != nil {
		return nil, "", fmt.Errorf("decoding EventBridge detail: %w", err)
	}
	var key string
	if d.Object == nil || json.Unmarshal(d.Object.Key, &key) != nil || key == "" {
		return nil, "", fmt.Errorf("%w: EventBridge %q event without a detail.object.key string", ErrUnknownEvent, env.DetailType)
	}
	h := Hint{
		Bucket: d.Bucket.Name, Key: key, Removed: env.DetailType == "Object Deleted",
		Size: d.Object.Size, ETag: unquote(d.Object.ETag), Sequencer: d.Object.Sequencer,
		VersionID: d.Object.VersionID, EventName: env.DetailType,
	}
	return []Hint{h}, KindEventBridge, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func unquote(etag string) string { return strings.Trim(etag, `"`) }

// unmarshalLoose is json.Unmarshal that leaves a field of an unexpected
// type (a "source" object where a string was expected, a size in quotes)
// empty instead of failing: the fields that matter are checked after.
func unmarshalLoose(data []byte, v any) error {
	err := json.Unmarshal(data, v)
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		return nil
	}
	return err
}
