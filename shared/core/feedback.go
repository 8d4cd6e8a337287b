package core

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"

	"github.com/sheaf-dev/sheaf/shared/auth"
	"github.com/sheaf-dev/sheaf/shared/store"
)

// FeedbackPrefix is where record_retrieval_feedback writes, one object per
// call under a folder per UTC day: no read-modify-write, so any number of
// servers can record at once.
const FeedbackPrefix = ".sheaf/feedback/"

type feedbackIn struct {
	VaultArg
	ChunkID string `json:"chunk_id" jsonschema:"The chunk_id of a search_and_read item: \"<path>#p<ordinal>\"." schema:"minLength=4,maxLength=1100"`
	Useful  bool   `json:"useful" jsonschema:"Whether the chunk helped answer the query."`
	Query   string `json:"query,omitempty" jsonschema:"The query the chunk was retrieved for." schema:"maxLength=2000"`
	Note    string `json:"note,omitempty" jsonschema:"A short free-text remark, e.g. why it was not useful." schema:"maxLength=2000"`
}

type feedbackOut struct {
	Coverage
	Recorded bool   `json:"recorded"`
	ChunkID  string `json:"chunk_id"`
}

// FeedbackRecord is one stored feedback object.
type FeedbackRecord struct {
	Time    string `json:"time"` // RFC 3339, UTC
	Vault   string `json:"vault"`
	Caller  string `json:"caller"`
	ChunkID string `json:"chunk_id"`
	Path    string `json:"path"`
	Passage int    `json:"passage"`
	Useful  bool   `json:"useful"`
	Query   string `json:"query,omitempty"`
	Note    string `json:"note,omitempty"`
}

// RecordRetrievalFeedback implements record_retrieval_feedback.
func (s *Core) RecordRetrievalFeedback(ctx context.Context, in feedbackIn) (*feedbackOut, error) {
	v, err := s.vault(ctx, in.VaultArg)
	if err != nil {
		return nil, err
	}
	path, ordinal, err := ParseChunkID(in.ChunkID)
	if err != nil {
		return nil, newError(KindArgsInvalid, nil, "%v", err)
	}
	now := s.now().UTC()
	rec := FeedbackRecord{
		Time: now.Format(time.RFC3339Nano), Vault: v.ID, Caller: auth.IdentityFrom(ctx).Subject,
		ChunkID: in.ChunkID, Path: path, Passage: ordinal, Useful: in.Useful, Query: in.Query, Note: in.Note,
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return nil, err
	}
	data = append(data, '\n')
	for attempt := 0; ; attempt++ {
		var suffix [8]byte
		_, _ = rand.Read(suffix[:])
		name := FeedbackPrefix + now.Format("2006-01-02") + "/" + now.Format("150405.000000000") + "Z-" + hex.EncodeToString(suffix[:]) + ".json"
		_, err = v.Store.Put(ctx, name, data, store.PutOptions{IfNoneMatch: true})
		if err == nil || !errors.Is(err, store.ErrConflict) || attempt == 2 {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	return &feedbackOut{Recorded: true, ChunkID: in.ChunkID}, nil
}
