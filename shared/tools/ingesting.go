package tools

import "github.com/sheaf-dev/sheaf/shared/core"

// ingestTools capture sources into the vault's write-once sources/ layer.
// They write no path the caller names (the note's path comes from the
// document), so a folder-scoped credential is forbidden them; a
// propose-only caller's call is queued as a proposal, the document fetched
// when it is applied. They spend on the server's network and CPU (a fetch,
// a PDF read in a child process), so they share the paid rate limit.
func ingestTools(c *core.Core) []Tool {
	return []Tool{
		define(Spec{
			Name:        "ingest_url",
			Title:       "Capture a web page",
			Description: "Fetch a URL (http or https; HTML, Markdown, plain text or PDF, at most 20 MiB and 30 s) and file it as a new note under sources/, the vault's write-once layer: the page's main content as Markdown, with frontmatter source_url (canonical: tracking parameters and the fragment dropped), fetched_at, content_hash and title. The same canonical URL again returns the existing note with duplicate: true and fetches nothing, unless refresh: true files a new dated version beside it. Private, loopback, link-local and cloud metadata addresses are refused (reason address-forbidden). Refusals are args-invalid with a reason (url-invalid, scheme-not-allowed, http-status, too-large, timeout, content-type, ...) and retryable. Link the new note from your pages; never edit under sources/.",
			Hints:       hints{idempotent: true, openWorld: true},
			Access:      edits(proposeQueue),
			Paid:        true,
		}, c.IngestURL),
		define(Spec{
			Name:        "ingest_file",
			Title:       "Capture a file",
			Description: "File a document you send (content_base64: HTML, Markdown, plain text or PDF, at most 10 MiB decoded) as a new note under sources/, the vault's write-once layer, with frontmatter source_file (the name), fetched_at, content_hash and title. media_type is optional: the bytes and the name's extension decide when it is absent, and must agree with it when it is given (content-mismatch). A file too big for one request (on the cloud, over about 4 MB): call with upload: true instead of content_base64, PUT the file to the upload.url answered (S3 vaults, up to 20 MiB), then call with upload_id for the note. Refusals are args-invalid with a reason (base64-invalid, name-invalid, too-large, content-type, encrypted, empty, ...).",
			Hints:       hints{},
			Access:      edits(proposeQueue),
			Paid:        true,
		}, c.IngestFile),
	}
}
