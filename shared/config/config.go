// Package config turns flags and SHEAF_* environment variables into wired
// adapters. A flag and its variable mean the same (--max-attachment-bytes is
// SHEAF_MAX_ATTACHMENT_BYTES); a flag given on the command line wins.
package config

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// Config is everything a Sheaf process can be told.
type Config struct {
	Vault              string        // a folder, or s3://bucket/prefix?endpoint=...&path_style=true
	VaultID            string        // the `vault` argument's value; default: from the folder name
	State              string        // where derived state lives; default: the user cache folder (see local.Layout)
	HTTP               string        // listen address for streamable HTTP; "" = stdio
	Token              string        // the single shared bearer token for HTTP (a full-scope key)
	Keys               string        // API keys: "" the vault's keys (see local.Layout), a file, ssm:NAME, or "none"
	OAuthIssuer        string        // OAuth authorization server (issuer URL); "" = no OAuth
	OAuthAudience      string        // this server's MCP URL, the audience tokens must carry
	OAuthJWKSURL       string        // the issuer's JWKS; "" = discovered from its metadata
	OAuthScopePrefix   string        // token scopes are <prefix>read, <prefix>write, <prefix>admin
	OAuthAudiences     []string      // more aud values accepted (Entra ID: the API's application id)
	OAuthClientIDs     []string      // clients whose tokens without aud are accepted (Cognito)
	OAuthBuiltin       bool          // serve the built-in authorization server (owner keys approve clients)
	OAuthPrivateHosts  []string      // client metadata document hosts that may resolve to private addresses
	AllowedOrigins     []string      // extra browser origins allowed on HTTP
	Profile            string        // tool profile: core or full
	ImmutablePaths     []string      // write-once prefixes
	Ledger             string        // the note every write is logged in; "off" for none
	History            string        // note history: "on" (default) or "off"
	HistoryDays        int           // a folder vault keeps versions at least this many days
	HistoryKeep        int           // and at least this many versions of each note before the current one
	HistoryNoPrune     bool          // record versions but never prune them (one-shot commands: retention is the server's)
	MaxAttachmentBytes int64         // read_attachment cap
	MaxNoteBytes       int64         // largest note indexed or read
	CursorKey          string        // HMAC key of search_and_read cursors
	IngestAllow        []string      // address ranges ingest_url may fetch from besides public ones
	NoAudit            bool          // record no reads (no read audit, no retrieval_count)
	MaxResponseBytes   int           // response budget of one tool result, both copies counted
	MaxRequestBytes    int64         // largest HTTP request body or stdio message; 0: what a write of the largest note needs
	IndexWait          time.Duration // how long a call waits for a running index pass
	NoWatch            bool          // do not follow file changes
	LogLevel           string        // debug, info, warn, error
	LogFormat          string        // text or json

	Search     string // full-text index: "embedded" (SQLite FTS5) or a Meilisearch URL
	SearchKey  string // Meilisearch API key
	Vectors    string // vector index: "embedded" or qdrant://host:6334 (qdrants:// for TLS)
	VectorsKey string // Qdrant API key

	EmbedBaseURL        string // OpenAI-compatible embeddings endpoint; "" = no embeddings
	EmbedModel          string
	EmbedKey            string
	EmbedDimensions     int    // ask the provider for this many dimensions; 0 = its default
	EmbedQueryPrefix    string // put before every question embedded ("search_query: " for nomic)
	EmbedDocumentPrefix string // put before every passage and name embedded ("search_document: ")

	LLMBaseURL string // OpenAI-compatible chat endpoint; "" = no LLM
	LLMModel   string
	LLMKey     string
	RerankURL  string // hosted cross-encoder for answer's rerank; "" = rerank with the LLM
	RerankKey  string

	// given reports whether a setting was given (see Given); nil before
	// Flags. Neither this field nor a method of Config mentions pflag: the
	// site registry puts Config's type in an interface, and in a program
	// that calls methods by reflection (cmd/sheaf until it was built with
	// grpcnotrace, through gRPC's x/net/trace and html/template; the
	// Lambda bootstraps until protobuf v1.36.12) every exported method
	// of what that type reaches is kept: pflag.FlagSet's pull in every
	// pflag value type (0.26 MB).
	given func(name string) bool
}

// Given reports whether the setting name (a flag's name) was given, on
// the command line or in its SHEAF_* variable, rather than defaulted.
func (c *Config) Given(name string) bool {
	return c.given != nil && c.given(name)
}

// Flags registers the settings of c on fs. Call Env after fs.Parse.
func Flags(c *Config, fs *pflag.FlagSet) {
	c.given = func(name string) bool {
		f := fs.Lookup(name)
		return f != nil && f.Changed
	}
	fs.StringVar(&c.Vault, "vault", "", "the vault: a folder of Markdown notes, or, for the commands that serve or index a cloud vault, s3://bucket/prefix?endpoint=...&path_style=true (with --search http://meili:7700)")
	fs.StringVar(&c.VaultID, "vault-id", "", "the vault's id, the value of the tools' vault argument (default: from the folder name)")
	fs.StringVar(&c.State, "state", "", "folder for the index, the catalog and Sheaf's own objects (default: a folder named after the vault in the user cache folder, e.g. ~/.cache/sheaf/notes-1a2b3c4d; an existing <vault>/.sheaf is used as it is)")
	fs.StringVar(&c.HTTP, "http", "", "serve streamable HTTP on this address (e.g. 127.0.0.1:8787) instead of stdio")
	fs.StringVar(&c.Token, "token", "", "a single shared bearer token for the HTTP endpoint, with every scope (see sheaf keys for scoped keys)")
	fs.StringVar(&c.Keys, "keys", "", "API keys file: a path, ssm:/parameter/name (AWS SSM SecureString), or none (default: keys.json in a folder named after the vault in the user config folder, e.g. ~/.config/sheaf/notes-1a2b3c4d; a cloud vault's .sheaf/keys.json in the bucket)")
	fs.StringVar(&c.OAuthIssuer, "oauth-issuer", "", "OAuth 2.1 authorization server (issuer URL) whose JWT access tokens the HTTP endpoint accepts")
	fs.StringVar(&c.OAuthAudience, "oauth-audience", "", "this server's public MCP URL (e.g. https://notes.example.com/mcp): the audience access tokens must be issued for")
	fs.StringVar(&c.OAuthJWKSURL, "oauth-jwks-url", "", "the authorization server's JWKS URL (default: discovered from the issuer's metadata)")
	fs.StringVar(&c.OAuthScopePrefix, "oauth-scope-prefix", "sheaf:", "prefix of the token scopes read, write and admin (Cognito resource servers: e.g. sheaf/)")
	fs.StringSliceVar(&c.OAuthAudiences, "oauth-token-audiences", nil, "more values of the tokens' aud to accept besides --oauth-audience (Entra ID: the API's application id)")
	fs.StringSliceVar(&c.OAuthClientIDs, "oauth-client-ids", nil, "accept tokens with no aud claim from these clients (Amazon Cognito access tokens: the app client made for this server)")
	fs.BoolVar(&c.OAuthBuiltin, "oauth-builtin", false, "serve Sheaf's own OAuth authorization server (for claude.ai and other remote MCP clients): the vault owner approves each client with an owner key (sheaf keys add --owner)")
	fs.StringSliceVar(&c.OAuthPrivateHosts, "oauth-private-client-hosts", nil, "with --oauth-builtin: hosts whose client metadata documents may be fetched from private or loopback addresses (internal clients)")
	fs.StringSliceVar(&c.AllowedOrigins, "allowed-origins", nil, "browser origins allowed to call the HTTP endpoint besides loopback ones")
	fs.StringVar(&c.Profile, "profile", "full", "tool profile: core (the dozen most used tools) or full")
	fs.StringSliceVar(&c.ImmutablePaths, "immutable-paths", []string{"sources/"}, "write-once folder prefixes: notes there can be created, never changed, moved or deleted")
	fs.StringVar(&c.Ledger, "ledger", "log.md", "note the write tools log every write in (one \"- YYYY-MM-DD op: title\" line each, as recent_activity reads); off: none")
	fs.StringVar(&c.History, "history", "on", "note history: on keeps every version of every note written through Sheaf (a folder vault in the state folder, an S3 vault in the bucket's object versions); off: none")
	fs.IntVar(&c.HistoryDays, "history-days", 30, "a folder vault's history keeps every version for at least this many days after it stopped being current (negative: no minimum; an S3 vault: the bucket's lifecycle rule)")
	fs.IntVar(&c.HistoryKeep, "history-keep", 10, "a folder vault's history keeps at least this many versions of each note before the current one, whatever their age (negative: none)")
	fs.Int64Var(&c.MaxAttachmentBytes, "max-attachment-bytes", 5<<20, "largest file read_attachment returns")
	fs.Int64Var(&c.MaxNoteBytes, "max-note-bytes", 16<<20, "largest note indexed (bigger ones are listed as problems; read_note still reads them, by pages)")
	fs.StringSliceVar(&c.IngestAllow, "ingest-allow", nil, "address ranges ingest_url may fetch from although they are private, loopback or link-local (CIDR prefixes or addresses, e.g. 10.20.0.0/16 for an intranet wiki); public addresses need none")
	fs.BoolVar(&c.NoAudit, "no-audit", false, "keep no read audit: record no document the read tools return (who, agent_id, tool, path, time, under the state folder's audit/ or the bucket's .sheaf/audit/) and answer no retrieval_count")
	fs.StringVar(&c.CursorKey, "cursor-key", "", "key that signs search_and_read cursors, at least 16 bytes (default: a key created once in the state folder, or under a cloud vault's .sheaf/ prefix)")
	fs.IntVar(&c.MaxResponseBytes, "max-response-bytes", 1<<20, "largest tool result in serialized bytes (structuredContent and its text copy together); longer answers page (read_note, read_attachment) or are cut with partial/clipped and next_offset; at most 8 MiB (the TypeScript SDK client buffers at most 10 MiB)")
	fs.Int64Var(&c.MaxRequestBytes, "max-request-bytes", 0, "largest request: an HTTP body (bigger ones are answered 413 before they are read) or a stdio message (bigger ones are read through unkept and answered invalid request) (0: 2 x --max-note-bytes + 1 MiB, what a write of the largest note needs)")
	fs.DurationVar(&c.IndexWait, "index-wait", 5*time.Second, "how long a tool call arriving during an index pass waits for it before answering from what is indexed so far (marked partial); 0: do not wait")
	fs.BoolVar(&c.NoWatch, "no-watch", false, "do not follow changes to the vault folder")
	fs.StringVar(&c.LogLevel, "log-level", "info", "log level: debug, info, warn, error")
	fs.StringVar(&c.LogFormat, "log-format", "text", "log format: text or json")
	fs.StringVar(&c.Search, "search", "embedded", "full-text index: embedded (SQLite FTS5 under the state folder) or a Meilisearch URL (http://127.0.0.1:7700)")
	fs.StringVar(&c.SearchKey, "search-key", "", "Meilisearch API key")
	fs.StringVar(&c.Vectors, "vectors", "embedded", "vector index: embedded (under the state folder) or qdrant://host:6334 (qdrants:// for TLS)")
	fs.StringVar(&c.VectorsKey, "vectors-key", "", "Qdrant API key")
	fs.StringVar(&c.EmbedBaseURL, "embed-base-url", "", "OpenAI-compatible embeddings endpoint, e.g. http://127.0.0.1:8088/v1 (unset: no semantic tools)")
	fs.StringVar(&c.EmbedModel, "embed-model", "", "embedding model name")
	fs.StringVar(&c.EmbedKey, "embed-key", "", "embeddings API key (not needed by local servers)")
	fs.IntVar(&c.EmbedDimensions, "embed-dimensions", 0, "ask the embeddings provider for this many dimensions (0: the model's own)")
	fs.StringVar(&c.EmbedQueryPrefix, "embed-query-prefix", "", `put before every question embedded, for models trained with task prefixes ("search_query: " for nomic-embed-text, "query: " for e5)`)
	fs.StringVar(&c.EmbedDocumentPrefix, "embed-document-prefix", "", `put before every passage and name embedded ("search_document: " for nomic-embed-text, "passage: " for e5); changing it embeds the vault again`)
	fs.StringVar(&c.LLMBaseURL, "llm-base-url", "", "OpenAI-compatible chat endpoint, e.g. http://127.0.0.1:11434/v1 (unset: no answer, lint_semantic, suggest_tags)")
	fs.StringVar(&c.LLMModel, "llm-model", "", "chat model name")
	fs.StringVar(&c.LLMKey, "llm-key", "", "chat API key")
	fs.StringVar(&c.RerankURL, "rerank-url", "", "hosted cross-encoder rerank endpoint (Cohere/Jina/TEI API) for the rerank option of answer, search_and_read, semantic_search and search (unset: the LLM reranks)")
	fs.StringVar(&c.RerankKey, "rerank-key", "", "rerank API key")
}

// Env fills every flag not set on the command line from its SHEAF_*
// variable, e.g. --vault from SHEAF_VAULT.
func Env(fs *pflag.FlagSet) error {
	var err error
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Changed || err != nil {
			return
		}
		name := "SHEAF_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v, ok := os.LookupEnv(name); ok {
			if serr := fs.Set(f.Name, v); serr != nil {
				err = fmt.Errorf("%s: %w", name, serr)
			}
		}
	})
	return err
}

var nonID = regexp.MustCompile(`[^a-z0-9_-]+`)

// VaultIDFrom derives a vault id (^[a-z0-9_-]{1,64}$) from a folder path.
func VaultIDFrom(dir string) string {
	id := nonID.ReplaceAllString(strings.ToLower(filepath.Base(filepath.Clean(dir))), "-")
	id = strings.Trim(id, "-")
	if len(id) > 64 {
		id = id[:64]
	}
	if id == "" {
		return "vault"
	}
	return id
}
