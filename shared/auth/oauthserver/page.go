package oauthserver

import (
	"html"
	"strings"
)

// The pages are written with html.EscapeString, not html/template: every
// value lands in element text, a textarea or a double-quoted attribute,
// where escaping <, >, &, ' and " is what html/template does too, and a
// program that executes templates keeps every exported method of every
// type it links (text/template calls methods by name), which cost the
// Lambda bootstrap 0.46 MB.

const pageStyle = `<style>
body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:2rem auto;padding:0 1rem;color:#222}
h1{font-size:1.4rem}.who{background:#f4f4f4;padding:.75rem 1rem;border-radius:6px}
.err{background:#fde8e8;color:#8a1111;padding:.5rem 1rem;border-radius:6px}
label{display:block;margin:.4rem 0}textarea,input[type=password]{width:100%;box-sizing:border-box;font:inherit;padding:.4rem}
.small{font-size:.85rem;color:#555}button{font:inherit;padding:.5rem 1.2rem;margin-right:.5rem}
</style>`

// html is the consent page of v.
func (v consentView) html() string {
	e := html.EscapeString
	var b strings.Builder
	b.WriteString(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Allow access to your Sheaf vault?</title>` + pageStyle + `</head><body>
<h1>Allow access to your Sheaf vault?</h1>
<div class="who"><p><strong>` + e(v.ClientName) + `</strong>`)
	if v.Unverified {
		b.WriteString(` <span class="small">(the name the app gave itself)</span>`)
	}
	b.WriteString("</p>\n")
	if v.ClientHost != "" {
		b.WriteString(`<p class="small">Identified by ` + e(v.ClientHost) + `</p>`)
	}
	asked := make([]string, len(v.Asked))
	for i, s := range v.Asked {
		asked[i] = e(s)
	}
	b.WriteString("\n" + `<p class="small">Client id: ` + e(v.ClientID) + `<br>Approval is sent to: ` + e(v.RedirectTo) +
		`<br>It asked for: ` + strings.Join(asked, ", ") + "</p></div>\n")
	if v.Error != "" {
		b.WriteString(`<p class="err">` + e(v.Error) + `</p>`)
	}
	b.WriteString(`
<form method="post" action="authorize">
<input type="hidden" name="request" value="` + e(v.RequestID) + `"><input type="hidden" name="csrf" value="` + e(v.CSRF) + `">
<h2>What it may do</h2>
`)
	for _, s := range v.Scopes {
		checked := ""
		if s.Checked {
			checked = " checked"
		}
		b.WriteString(`<label><input type="radio" name="scope" value="` + e(s.Value) + `"` + checked + `> ` + e(s.Label) + `</label>`)
	}
	b.WriteString(`
<label><input type="checkbox" name="propose_only"> Its writes become proposals that you apply</label>
<h2>Which folders</h2>
<label for="folders" class="small">One rule a line: a glob such as <code>Projects/**</code>, or <code>!Projects/secret/**</code> to leave some out; the last matching rule wins. Empty: the whole vault.</label>
<textarea id="folders" name="folders" rows="4">` + e(v.FolderRules) + `</textarea>
<h2>Your owner key</h2>
<label for="owner_key" class="small">The key <code>sheaf keys add --owner</code> printed. It only approves; it is not given to the app.</label>
<input id="owner_key" type="password" name="owner_key" autocomplete="off" required>
<p><button type="submit" name="action" value="approve">Allow</button><button type="submit" name="action" value="deny" formnovalidate>Deny</button></p>
</form></body></html>`)
	return b.String()
}

// errorHTML is the page of a refusal that cannot go back to the client.
func errorHTML(msg string) string {
	return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sheaf: authorization refused</title>` + pageStyle + `</head><body>
<h1>Authorization refused</h1><p class="err">` + html.EscapeString(msg) + `</p></body></html>`
}
