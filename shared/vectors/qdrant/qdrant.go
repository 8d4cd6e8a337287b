// Package qdrant is the vectors adapter for a Qdrant server, over gRPC with
// github.com/qdrant/go-client.
//
// One collection holds one vault's passages: one point per passage and one
// per note's name (vectors.NameOrdinal), an unnamed dense vector with Cosine distance. The index's Space is recorded
// durably in the collection's metadata (Qdrant >= 1.16): "sheaf_model" and
// "sheaf_dim" beside the vector size; Reset drops and recreates the
// collection and checks the metadata reads back.
//
// Point ids are UUIDv5 of (collection, path, ordinal): the collection names
// the vault. Payload per point:
//
//	path       the note's path (keyword index)
//	ordinal    the passage's ordinal
//	hash       the passage's content hash
//	note_hash  the note's content hash
//	heading    the passage's heading
//	tags       vault.ExpandTags of the note's tags (keyword index)
//	dirs       every folder holding the note, "a" and "a/b" for "a/b/c.md"
//	           (keyword index)
//	head       true on exactly one point of each note, written last (bool
//	           index); Notes scrolls these only
//
// Payload strings must be valid UTF-8 in protobuf, so a string that is not
// (or that starts with U+FDD0) is stored as U+FDD0 followed by its base64url
// encoding, and decoded on the way back; equality filters still work.
//
// Filters: Paths is a match on path (the listed paths are first checked
// against PathPrefix and Folder here), Tags one must match per tag on tags,
// Folder a match on dirs. PathPrefix has no native equivalent: its part up
// to its last '/' becomes a match on dirs, and any rest is checked on the
// returned hits, fetching further pages (Search) or more groups
// (SearchNotes) until k hits pass or the candidates run out.
//
// Search pages through Query results (1,024 a request); SearchNotes uses
// QueryGroups (group_by path, group_size 1) and returns at most 10,000
// notes. Scores are Qdrant's cosine scores; the adapter sends unit vectors
// (normalised in float64, so huge or tiny vectors keep their direction).
// Above Qdrant's full-scan threshold its HNSW search is approximate, unlike
// the embedded adapter's.
//
// Upsert deletes the notes' points by filter, then writes the new ones in
// requests of at most 256 points (and 4 MB), each note's head point last,
// all with wait=true so reads see the writes. A write that fails midway
// leaves a note without its head point: Notes does not list it, so the
// indexer re-embeds it. Writes from one Index are serialised; two processes
// writing the same note at once may interleave.
package qdrant

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/google/uuid"
	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sheaf-dev/sheaf/shared/vectors"
)

var _ vectors.Index = (*Index)(nil)

// Scheme and TLSScheme are the URL schemes ParseURL accepts.
const (
	Scheme    = "qdrant"
	TLSScheme = "qdrants"
)

// DefaultPort is Qdrant's gRPC port.
const DefaultPort = 6334

// maxDim is Qdrant's largest vector size.
const maxDim = 65536

// Metadata keys of the collection.
const (
	metaModel = "sheaf_model"
	metaDim   = "sheaf_dim"
)

var errClosed = errors.New("qdrant: index closed")

// Config says where the collection lives.
type Config struct {
	Addr       string // host:port of the gRPC endpoint, e.g. "localhost:6334"
	TLS        bool
	APIKey     string
	Collection string // e.g. "sheaf-<vaultid>"
}

// ParseURL parses "qdrant://host[:port]" or "qdrants://host[:port]" (TLS).
// Parameters: api_key, collection. The port defaults to 6334; the
// collection may be left for the caller to set before Open. Anything else
// (user info, a path, a fragment, unknown or repeated parameters) is an
// error.
func ParseURL(s string) (Config, error) {
	var c Config
	u, err := url.Parse(s)
	if err != nil {
		return c, fmt.Errorf("qdrant: bad URL: %w", err)
	}
	switch u.Scheme {
	case Scheme:
	case TLSScheme:
		c.TLS = true
	default:
		return c, fmt.Errorf("qdrant: URL %q: scheme must be %s:// or %s://", redact(u), Scheme, TLSScheme)
	}
	if u.Opaque != "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.Fragment != "" || u.RawFragment != "" {
		return c, fmt.Errorf("qdrant: URL %q: only host, port and parameters are allowed", redact(u))
	}
	host, port := u.Hostname(), u.Port()
	if host == "" {
		return c, fmt.Errorf("qdrant: URL %q: no host", redact(u))
	}
	if port == "" {
		if strings.HasSuffix(u.Host, ":") {
			return c, fmt.Errorf("qdrant: URL %q: empty port", redact(u))
		}
		port = strconv.Itoa(DefaultPort)
	}
	c.Addr = net.JoinHostPort(host, port)
	if _, err := splitAddr(c.Addr); err != nil {
		return Config{}, err
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return Config{}, fmt.Errorf("qdrant: URL parameters: %w", err)
	}
	for k, v := range q {
		if len(v) != 1 {
			return Config{}, fmt.Errorf("qdrant: URL parameter %q given %d times", k, len(v))
		}
		switch k {
		case "api_key":
			if err := checkAPIKey(v[0]); err != nil {
				return Config{}, err
			}
			c.APIKey = v[0]
		case "collection":
			if err := checkCollection(v[0]); err != nil {
				return Config{}, err
			}
			c.Collection = v[0]
		default:
			return Config{}, fmt.Errorf("qdrant: unknown URL parameter %q (known: api_key, collection)", k)
		}
	}
	return c, nil
}

// redact hides an API key in a URL for error messages.
func redact(u *url.URL) string {
	v := *u
	v.User = nil
	v.RawQuery = ""
	return v.String()
}

type hostPort struct {
	host string
	port int
}

func splitAddr(addr string) (hostPort, error) {
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		return hostPort{}, fmt.Errorf("qdrant: address %q: %w", addr, err)
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || n > 65535 {
		return hostPort{}, fmt.Errorf("qdrant: address %q: bad port", addr)
	}
	if h == "" || strings.ContainsAny(h, "/?#@ ") {
		return hostPort{}, fmt.Errorf("qdrant: address %q: bad host", addr)
	}
	if strings.Contains(h, ":") {
		h = "[" + h + "]" // the client joins host and port with fmt
	}
	return hostPort{h, n}, nil
}

// checkCollection accepts 1 to 255 of [A-Za-z0-9_.-], starting with a
// letter or digit: a subset of what Qdrant allows, safe in its URLs.
func checkCollection(name string) error {
	ok := name != "" && len(name) <= 255
	for i := 0; ok && i < len(name); i++ {
		c := name[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		ok = alnum || (i > 0 && (c == '_' || c == '.' || c == '-'))
	}
	if !ok || strings.Contains(name, "..") {
		return fmt.Errorf("qdrant: bad collection name %q (want 1-255 of A-Z a-z 0-9 _ . -, starting with a letter or digit)", name)
	}
	return nil
}

// checkAPIKey accepts what a gRPC header can carry: printable ASCII.
func checkAPIKey(k string) error {
	for i := 0; i < len(k); i++ {
		if k[i] < 0x20 || k[i] > 0x7e {
			return errors.New("qdrant: the API key must be printable ASCII")
		}
	}
	return nil
}

// Index is a vectors.Index over one Qdrant collection. It is safe for
// concurrent use.
type Index struct {
	client *qdrant.Client
	cols   qdrant.CollectionsClient
	pts    qdrant.PointsClient
	name   string
	ns     uuid.UUID // point id namespace: this collection's

	writeMu sync.Mutex // serialises this Index's writes

	mu     sync.Mutex
	closed bool
	space  vectors.Space // cached; zero = not known
}

// Open returns an Index for c's collection. It does no network I/O: the
// connection is made on the first call that needs it.
func Open(ctx context.Context, c Config) (*Index, error) {
	hp, err := splitAddr(c.Addr)
	if err != nil {
		return nil, err
	}
	if err := checkCollection(c.Collection); err != nil {
		return nil, err
	}
	if err := checkAPIKey(c.APIKey); err != nil {
		return nil, err
	}
	client, err := qdrant.NewClient(&qdrant.Config{
		Host: hp.host, Port: hp.port, APIKey: c.APIKey, UseTLS: c.TLS,
		SkipCompatibilityCheck: true, // it would call the server now
		PoolSize:               1,
		GrpcOptions:            []grpc.DialOption{grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64 << 20))},
	})
	if err != nil {
		return nil, fmt.Errorf("qdrant: client: %w", err)
	}
	return &Index{
		client: client,
		cols:   client.GetCollectionsClient(),
		pts:    client.GetPointsClient(),
		name:   c.Collection,
		ns:     uuid.NewSHA1(idSpace, []byte(c.Collection)),
	}, nil
}

// idSpace is the UUIDv5 namespace of the collections' namespaces.
var idSpace = uuid.NewSHA1(uuid.NameSpaceURL, []byte("https://github.com/sheaf-dev/sheaf/vectors/qdrant"))

// pointID is the UUIDv5 of (collection, path, ordinal); the path is length
// prefixed so no two pairs share a name.
func (ix *Index) pointID(path string, ordinal int) string {
	b := binary.AppendUvarint(nil, uint64(len(path)))
	b = append(b, path...)
	b = binary.AppendVarint(b, int64(ordinal))
	return uuid.NewSHA1(ix.ns, b).String()
}

// Close implements vectors.Index.
func (ix *Index) Close() error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.closed {
		return nil
	}
	ix.closed = true
	return ix.client.Close()
}

// check fails on a closed index or a done context.
func (ix *Index) check(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.closed {
		return errClosed
	}
	return nil
}

// wrap names the failed operation; a done context wins over the gRPC error
// it caused, so callers can test errors.Is(err, context.Canceled).
func wrap(ctx context.Context, op string, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("qdrant: %s: %w", op, cerr)
	}
	return fmt.Errorf("qdrant: %s: %w", op, err)
}

func isNotFound(err error) bool { return status.Code(err) == codes.NotFound }

// Space implements vectors.Index; it always asks the server.
func (ix *Index) Space(ctx context.Context) (vectors.Space, error) {
	if err := ix.check(ctx); err != nil {
		return vectors.Space{}, err
	}
	return ix.loadSpace(ctx)
}

// loadSpace reads the collection's space and caches it.
func (ix *Index) loadSpace(ctx context.Context) (vectors.Space, error) {
	resp, err := ix.cols.Get(ctx, &qdrant.GetCollectionInfoRequest{CollectionName: ix.name})
	if isNotFound(err) && ctx.Err() == nil {
		ix.setSpace(vectors.Space{})
		return vectors.Space{}, nil
	}
	if err != nil {
		return vectors.Space{}, wrap(ctx, "get collection", err)
	}
	cfg := resp.GetResult().GetConfig()
	p := cfg.GetParams().GetVectorsConfig().GetParams()
	if p == nil || p.Distance != qdrant.Distance_Cosine || p.Size == 0 || p.Size > maxDim {
		return vectors.Space{}, fmt.Errorf("qdrant: collection %q is not a sheaf collection (want one unnamed Cosine vector)", ix.name)
	}
	// A collection without our metadata has an unknown model: "" never
	// equals a configured one, so the indexer resets it.
	sp := vectors.Space{Model: dec(cfg.GetMetadata()[metaModel].GetStringValue()), Dim: int(p.Size)}
	ix.setSpace(sp)
	return sp, nil
}

func (ix *Index) setSpace(sp vectors.Space) {
	ix.mu.Lock()
	ix.space = sp
	ix.mu.Unlock()
}

// cachedSpace returns the cached space, asking the server when none is
// known (an index with no space asks every time, so it sees a Reset made
// elsewhere).
func (ix *Index) cachedSpace(ctx context.Context) (vectors.Space, error) {
	ix.mu.Lock()
	sp := ix.space
	ix.mu.Unlock()
	if sp.Dim > 0 {
		return sp, nil
	}
	return ix.loadSpace(ctx)
}

// spaceFor returns the space, re-reading it once when dim disagrees with
// the cache (another process may have Reset the collection).
func (ix *Index) spaceFor(ctx context.Context, dim int) (vectors.Space, error) {
	sp, err := ix.cachedSpace(ctx)
	if err != nil || sp.Dim == 0 || sp.Dim == dim {
		return sp, err
	}
	return ix.loadSpace(ctx)
}

// Reset implements vectors.Index: it drops and recreates the collection.
func (ix *Index) Reset(ctx context.Context, sp vectors.Space) error {
	if sp.Dim <= 0 || sp.Dim > maxDim {
		return fmt.Errorf("qdrant: reset: dimension %d out of range 1..%d", sp.Dim, maxDim)
	}
	if err := ix.check(ctx); err != nil {
		return err
	}
	ix.writeMu.Lock()
	defer ix.writeMu.Unlock()
	ix.setSpace(vectors.Space{})
	if _, err := ix.cols.Delete(ctx, &qdrant.DeleteCollection{CollectionName: ix.name}); err != nil && !isNotFound(err) {
		return wrap(ctx, "reset: delete collection", err)
	}
	_, err := ix.cols.Create(ctx, &qdrant.CreateCollection{
		CollectionName: ix.name,
		VectorsConfig:  qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: uint64(sp.Dim), Distance: qdrant.Distance_Cosine}),
		Metadata: map[string]*qdrant.Value{
			metaModel: qdrant.NewValueString(enc(sp.Model)),
			metaDim:   qdrant.NewValueInt(int64(sp.Dim)),
		},
	})
	if err != nil {
		return wrap(ctx, "reset: create collection", err)
	}
	for _, f := range []struct {
		name string
		typ  qdrant.FieldType
	}{
		{fPath, qdrant.FieldType_FieldTypeKeyword},
		{fTags, qdrant.FieldType_FieldTypeKeyword},
		{fDirs, qdrant.FieldType_FieldTypeKeyword},
		{fHead, qdrant.FieldType_FieldTypeBool},
	} {
		_, err := ix.pts.CreateFieldIndex(ctx, &qdrant.CreateFieldIndexCollection{
			CollectionName: ix.name, Wait: qdrant.PtrOf(true), FieldName: f.name, FieldType: qdrant.PtrOf(f.typ),
		})
		if err != nil {
			return wrap(ctx, "reset: index "+f.name, err)
		}
	}
	got, err := ix.loadSpace(ctx)
	if err != nil {
		return err
	}
	if got != sp {
		ix.setSpace(vectors.Space{})
		return fmt.Errorf("qdrant: reset: the server kept space %+v, not %+v (collection metadata needs Qdrant >= 1.16)", got, sp)
	}
	return nil
}

// drop deletes the collection (tests clean up with it).
func (ix *Index) drop(ctx context.Context) error {
	ix.setSpace(vectors.Space{})
	if _, err := ix.cols.Delete(ctx, &qdrant.DeleteCollection{CollectionName: ix.name}); err != nil && !isNotFound(err) {
		return wrap(ctx, "drop collection", err)
	}
	return nil
}
