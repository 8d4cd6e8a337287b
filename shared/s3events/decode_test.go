package s3events

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func fixtureBytes(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sqsBatch wraps bodies in an SQS Lambda event, as Lambda delivers it.
func sqsBatch(t testing.TB, bodies ...string) []byte {
	t.Helper()
	type msg struct {
		MessageID      string            `json:"messageId"`
		ReceiptHandle  string            `json:"receiptHandle"`
		Body           string            `json:"body"`
		Attributes     map[string]string `json:"attributes"`
		EventSource    string            `json:"eventSource"`
		EventSourceARN string            `json:"eventSourceARN"`
		AWSRegion      string            `json:"awsRegion"`
	}
	var ev struct {
		Records []msg `json:"Records"`
	}
	for i, b := range bodies {
		ev.Records = append(ev.Records, msg{
			MessageID: "msg-" + string(rune('a'+i)), ReceiptHandle: "AQEB" + strings.Repeat("x", 8), Body: b,
			Attributes:  map[string]string{"ApproximateReceiveCount": "1", "SentTimestamp": "1714644672000"},
			EventSource: "aws:sqs", EventSourceARN: "arn:aws:sqs:us-east-1:123456789012:sheaf-indexer", AWSRegion: "us-east-1",
		})
	}
	out, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// snsEnvelope wraps an S3 notification as SNS delivers it to SQS.
func snsEnvelope(t testing.TB, message string) string {
	t.Helper()
	b, err := json.Marshal(map[string]string{
		"Type": "Notification", "MessageId": "22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324",
		"TopicArn": "arn:aws:sns:us-east-1:123456789012:sheaf-vault-events", "Subject": "Amazon S3 Notification",
		"Message": message, "Timestamp": "2024-05-02T10:11:12.456Z", "SignatureVersion": "1",
		"Signature": "EXAMPLE", "SigningCertURL": "https://sns.us-east-1.amazonaws.com/cert.pem",
		"UnsubscribeURL": "https://sns.us-east-1.amazonaws.com/?Action=Unsubscribe",
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestDecodeEventShapes(t *testing.T) {
	put := string(fixtureBytes(t, "aws-s3-put.json"))
	del := string(fixtureBytes(t, "aws-s3-delete.json"))
	created := string(fixtureBytes(t, "eventbridge-created.json"))
	const putKey = "vault/Café/menu + prices 💡.md"
	tests := []struct {
		name  string
		raw   []byte
		kind  string
		hints []Hint
	}{
		{"s3 put", []byte(put), KindS3, []Hint{{Bucket: "sheaf-vault", Key: putKey, Size: 1024,
			ETag: "d41d8cd98f00b204e9800998ecf8427e", Sequencer: "0055AED6DCD90281E5",
			VersionID: "096fKKXTRTtl3on89fVO.nfljtsv6qko", EventName: "ObjectCreated:Put"}}},
		{"s3 delete", []byte(del), KindS3, []Hint{{Bucket: "sheaf-vault", Key: "vault/Inbox/old note.md", Removed: true,
			Sequencer: "0066336A80A1B2C3D4", EventName: "ObjectRemoved:Delete"}}},
		{"s3 delete marker", fixtureBytes(t, "aws-s3-delete-marker.json"), KindS3, []Hint{{Bucket: "sheaf-vault",
			Key: "vault/庭の記録.md", Removed: true, ETag: "d41d8cd98f00b204e9800998ecf8427e",
			Sequencer: "0066336A80B2C3D4E5", VersionID: "bo9RvLl3b9H0xMfXbP2.yF0dGq8n5cQm", EventName: "ObjectRemoved:DeleteMarkerCreated"}}},
		{"s3 test event", fixtureBytes(t, "aws-s3-test-event.json"), KindTestEvent, nil},
		{"eventbridge created", []byte(created), KindEventBridge, []Hint{{Bucket: "sheaf-vault", Key: "vault/Ideas 💡/a+b 100%.md",
			Size: 5, ETag: "b1946ac92492d2347c6235b4d2611184", Sequencer: "617f08299329d189",
			VersionID: "IYV3p45BT0ac8hjHg1houSdS1a.Mro8e", EventName: "Object Created"}}},
		{"eventbridge deleted", fixtureBytes(t, "eventbridge-deleted.json"), KindEventBridge, []Hint{{Bucket: "sheaf-vault",
			Key: "vault/old note.md", Removed: true, ETag: "d41d8cd98f00b204e9800998ecf8427e", Sequencer: "617f0837b476e463",
			VersionID: "1QW9g1Z99LUNbvaaYVpW9xDlOLU.qxgF", EventName: "Object Deleted"}}},
		{"eventbridge schedule", fixtureBytes(t, "eventbridge-scheduled.json"), KindReconcile, nil},
		{"reconcile", []byte(`{"reconcile": true}`), KindReconcile, nil},
		{"minio", fixtureBytes(t, "minio-put.json"), KindWebhook, []Hint{{Bucket: "sheaf-vault", Key: "vault/a+b c.md", Size: 12,
			ETag: "d8e8fca2dc0f896fd7cb4cb0031ba249", Sequencer: "17CB9E1E6B4F2A10", EventName: "s3:ObjectCreated:Put"}}},
		{"versitygw put", fixtureBytes(t, "versitygw-put.json"), KindWebhook, []Hint{{Bucket: "notes", Key: "vault/Café/Résumé notes+1 💡.md",
			Size: 11, ETag: "1839392a1892bffb82f10c0f882dbb36", Sequencer: "1", EventName: "s3:ObjectCreated:Put"}}},
		{"versitygw put with + and %", fixtureBytes(t, "vgw-put-plus.json"), KindWebhook, []Hint{{Bucket: "vault-bkt",
			Key: "dir/x y+z%20.md", Size: 18, ETag: "da7aabf3d5235e1636ae535d5218cbf3", Sequencer: "6", EventName: "s3:ObjectCreated:Put"}}},
		{"versitygw delete", fixtureBytes(t, "versitygw-delete.json"), KindWebhook, []Hint{{Bucket: "notes",
			Key: "vault/Café/Résumé notes+1 💡.md", Removed: true, Sequencer: "2", EventName: "s3:ObjectRemoved:Delete"}}},
		{"versitygw delete objects", fixtureBytes(t, "vgw-delete-objects.json"), KindWebhook, []Hint{{Bucket: "vault-bkt",
			Key: "with space.md", Removed: true, Sequencer: "8", EventName: "s3:ObjectRemoved:DeleteObjects"}}},
		{"versitygw test event", fixtureBytes(t, "vgw-test-event.json"), KindTestEvent, nil},
		{"sns lambda event", []byte(`{"Records":[{"EventSource":"aws:sns","EventVersion":"1.0","Sns":` + snsEnvelope(t, del) + `}]}`),
			KindS3, []Hint{{Bucket: "sheaf-vault", Key: "vault/Inbox/old note.md", Removed: true,
				Sequencer: "0066336A80A1B2C3D4", EventName: "ObjectRemoved:Delete"}}},
		{"empty records", []byte(`{"Records":[]}`), KindS3, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hints, kind, err := DecodeEvent(tc.raw)
			if err != nil {
				t.Fatal(err)
			}
			if kind != tc.kind {
				t.Errorf("kind %q, want %q", kind, tc.kind)
			}
			if !reflect.DeepEqual(hints, tc.hints) {
				t.Errorf("hints\n got %+v\nwant %+v", hints, tc.hints)
			}
		})
	}
}

func TestDecodeSQS(t *testing.T) {
	put := string(fixtureBytes(t, "aws-s3-put.json"))
	del := string(fixtureBytes(t, "aws-s3-delete.json"))
	created := string(fixtureBytes(t, "eventbridge-created.json"))

	// Three records, the second one garbage: exactly that one fails.
	hints, kind, err := DecodeEvent(sqsBatch(t, put, "this is {not json", del))
	var bad MessageErrors
	if kind != KindSQS || !errors.As(err, &bad) {
		t.Fatalf("kind %q, err %v; want sqs with MessageErrors", kind, err)
	}
	if len(bad) != 1 || bad["msg-b"] == nil {
		t.Errorf("failed messages %v, want only msg-b", bad)
	}
	if len(hints) != 2 || hints[0].MessageID != "msg-a" || hints[1].MessageID != "msg-c" || !hints[1].Removed {
		t.Errorf("hints %+v", hints)
	}

	// SNS in SQS, EventBridge in SQS, a test event, valid JSON of no known shape.
	hints, _, err = DecodeEvent(sqsBatch(t, snsEnvelope(t, put), created,
		string(fixtureBytes(t, "aws-s3-test-event.json")), `{"hello":"world"}`, snsEnvelope(t, `{"reconcile":true}`)))
	bad = nil
	if !errors.As(err, &bad) || len(bad) != 2 || bad["msg-d"] == nil || bad["msg-e"] == nil {
		t.Errorf("err %v, want msg-d and msg-e undecodable", err)
	}
	if len(hints) != 2 || hints[0].Key != "vault/Café/menu + prices 💡.md" || hints[0].MessageID != "msg-a" ||
		hints[1].Key != "vault/Ideas 💡/a+b 100%.md" || hints[1].MessageID != "msg-b" {
		t.Errorf("hints %+v", hints)
	}
}

func TestDecodeEventRejects(t *testing.T) {
	for _, raw := range []string{
		``, `null`, `"str"`, `42`, `[1]`, `{}`, `{"Records":[null]}`, `{"Records":[{"s3":{}}]}`,
		`{"Records":[{"eventSource":"aws:s3","s3":{"object":{"key":7}}}]}`, `{"Records":[{"s3":{"object":{"key":null}}}]}`,
		`{"detail-type":"Object Created","source":"aws.s3","detail":{"bucket":{"name":"b"}}}`,
		`{"detail-type":"EC2 Instance State-change Notification","source":"aws.ec2","detail":{}}`,
		`{"Type":"Notification","Message":"{\"Type\":\"Notification\",\"Message\":\"{\\\"Type\\\":\\\"Notification\\\",\\\"Message\\\":\\\"{\\\\\\\"Type\\\\\\\":\\\\\\\"Notification\\\\\\\",\\\\\\\"Message\\\\\\\":\\\\\\\"{}\\\\\\\"}\\\"}\"}"}`,
		`{"Records":[{"eventSource":"aws:sqs","body":"{}"}]}`, // no message id
	} {
		if hints, kind, err := DecodeEvent([]byte(raw)); err == nil {
			t.Errorf("%s: decoded as %s %+v", raw, kind, hints)
		}
	}
	// A bare record (old versitygw) and a record with odd field types decode.
	hints, _, err := DecodeEvent([]byte(`{"eventSource":"aws:s3","eventName":"s3:ObjectCreated:Put","s3":{"configurationId":"webhook-global","bucket":{"name":"b"},"object":{"key":"a b.md","size":"12"}}}`))
	if err != nil || len(hints) != 1 || hints[0].Key != "a b.md" {
		t.Errorf("bare record: %+v %v", hints, err)
	}
}

func TestKeyDecoding(t *testing.T) {
	const nfd = "Cafe\u0301.md"
	tests := []struct {
		raw      string
		enc      keyEncoding
		key, alt string
	}{
		{"plain.md", keyForm, "plain.md", ""},
		{"with+space.md", keyForm, "with space.md", ""},
		{"a%2Bb.md", keyForm, "a+b.md", ""},
		{"a%2Bb+c.md", keyForm, "a+b c.md", ""},
		{"dir%2Fx.md", keyForm, "dir/x.md", ""},
		{"Caf%C3%A9.md", keyForm, "Café.md", ""},
		{"Cafe%CC%81.md", keyForm, nfd, ""},
		{"%F0%9F%92%A1+idea.md", keyForm, "💡 idea.md", ""},
		{"%E5%BA%AD%E3%81%AE%E8%A8%98%E9%8C%B2.md", keyForm, "庭の記録.md", ""},
		{"100%.md", keyForm, "100%.md", ""}, // not an encoding: kept
		{"a+b.md", keyRaw, "a+b.md", ""},
		{"pct%2B.md", keyRaw, "pct%2B.md", ""},
		{"x y+z%20.md", keyRaw, "x y+z%20.md", ""},
		{nfd, keyRaw, nfd, ""},
		{"😀 emoji.md", keyRaw, "😀 emoji.md", ""},
		{"a+b.md", keyUnknown, "a b.md", "a+b.md"},
		{"a b.md", keyUnknown, "a b.md", ""},
		{"100%.md", keyUnknown, "100%.md", ""},
	}
	for _, tc := range tests {
		key, alt := decodeKey(tc.raw, tc.enc)
		if key != tc.key || alt != tc.alt {
			t.Errorf("decodeKey(%q, %d) = %q, %q; want %q, %q", tc.raw, tc.enc, key, alt, tc.key, tc.alt)
		}
	}

	// The sender is recognised from the payload.
	record := func(source, name, config, arn, key string) []byte {
		b, _ := json.Marshal(map[string]any{"Records": []any{map[string]any{
			"eventSource": source, "eventName": name,
			"s3": map[string]any{"configurationId": config, "bucket": map[string]any{"name": "b", "arn": arn},
				"object": map[string]any{"key": key}},
		}}})
		return b
	}
	senders := []struct {
		name     string
		raw      []byte
		key, alt string
	}{
		{"aws", record("aws:s3", "ObjectCreated:Put", "rule", "arn:aws:s3:::b", "a+%2B.md"), "a +.md", ""},
		{"minio", record("minio:s3", "s3:ObjectCreated:Put", "Config", "arn:aws:s3:::b", "a+%2B.md"), "a +.md", ""},
		{"versitygw config", record("aws:s3", "ObjectCreated:Put", "kafka-global", "", "a+%2B.md"), "a+%2B.md", ""},
		{"versitygw arn", record("aws:s3", "ObjectCreated:Put", "", "arn:aws:s3:::/b/a+%2B.md", "a+%2B.md"), "a+%2B.md", ""},
		{"versitygw name", record("aws:s3", "s3:ObjectCreated:Put", "", "", "a+%2B.md"), "a+%2B.md", ""},
		{"unknown", record("", "ObjectCreated:Put", "", "", "a+%2B.md"), "a +.md", "a+%2B.md"},
	}
	for _, s := range senders {
		hints, _, err := DecodeEvent(s.raw)
		if err != nil || len(hints) != 1 || hints[0].Key != s.key || hints[0].AltKey != s.alt {
			t.Errorf("%s: %+v %v; want key %q alt %q", s.name, hints, err, s.key, s.alt)
		}
	}
}

func FuzzDecodeEvent(f *testing.F) {
	for _, name := range []string{"aws-s3-put.json", "aws-s3-delete.json", "eventbridge-created.json", "minio-put.json", "versitygw-put.json", "versitygw-delete.json"} {
		f.Add(fixtureBytes(f, name))
	}
	f.Add(sqsBatch(f, string(fixtureBytes(f, "aws-s3-put.json")), "garbage", snsEnvelope(f, "{}")))
	f.Add([]byte(`[{"s3":{"object":{"key":"%zz"}}}]`))
	f.Add([]byte(`{"reconcile":true}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		hints, kind, err := DecodeEvent(raw)
		if err != nil && kind != KindSQS && len(hints) > 0 {
			t.Fatalf("hints with an error: %v", err)
		}
		for _, h := range hints {
			if kind != KindSQS && h.MessageID != "" {
				t.Fatalf("message id outside SQS: %+v", h)
			}
		}
	})
}
