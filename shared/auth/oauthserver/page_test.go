package oauthserver

import (
	"html/template"
	"strings"
	"testing"
)

// The templates the pages were written with before (html/template): the
// pages must render exactly as they did, escaping included.
var (
	consentTemplate = template.Must(template.New("consent").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Allow access to your Sheaf vault?</title>` + pageStyle + `</head><body>
<h1>Allow access to your Sheaf vault?</h1>
<div class="who"><p><strong>{{.ClientName}}</strong>{{if .Unverified}} <span class="small">(the name the app gave itself)</span>{{end}}</p>
{{if .ClientHost}}<p class="small">Identified by {{.ClientHost}}</p>{{end}}
<p class="small">Client id: {{.ClientID}}<br>Approval is sent to: {{.RedirectTo}}<br>It asked for: {{range $i, $s := .Asked}}{{if $i}}, {{end}}{{$s}}{{end}}</p></div>
{{if .Error}}<p class="err">{{.Error}}</p>{{end}}
<form method="post" action="authorize">
<input type="hidden" name="request" value="{{.RequestID}}"><input type="hidden" name="csrf" value="{{.CSRF}}">
<h2>What it may do</h2>
{{range .Scopes}}<label><input type="radio" name="scope" value="{{.Value}}"{{if .Checked}} checked{{end}}> {{.Label}}</label>{{end}}
<label><input type="checkbox" name="propose_only"> Its writes become proposals that you apply</label>
<h2>Which folders</h2>
<label for="folders" class="small">One rule a line: a glob such as <code>Projects/**</code>, or <code>!Projects/secret/**</code> to leave some out; the last matching rule wins. Empty: the whole vault.</label>
<textarea id="folders" name="folders" rows="4">{{.FolderRules}}</textarea>
<h2>Your owner key</h2>
<label for="owner_key" class="small">The key <code>sheaf keys add --owner</code> printed. It only approves; it is not given to the app.</label>
<input id="owner_key" type="password" name="owner_key" autocomplete="off" required>
<p><button type="submit" name="action" value="approve">Allow</button><button type="submit" name="action" value="deny" formnovalidate>Deny</button></p>
</form></body></html>`))
	errorTemplate = template.Must(template.New("error").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sheaf: authorization refused</title>` + pageStyle + `</head><body>
<h1>Authorization refused</h1><p class="err">{{.}}</p></body></html>`))
)

func TestPagesRenderAsTheTemplatesDid(t *testing.T) {
	hostile := `<script>alert("x")</script> & 'q' </textarea>`
	views := []consentView{
		{ClientName: "An unnamed app", ClientID: "c1", RedirectTo: "http://127.0.0.1:9", RequestID: "r", CSRF: "k",
			Unverified: true, Asked: []string{"read"}, Scopes: []scopeChoice{{Value: "read", Label: "Read", Checked: true}}},
		{ClientName: hostile, ClientID: hostile, ClientHost: hostile, RedirectTo: hostile, RequestID: hostile, CSRF: hostile,
			Error: hostile, FolderRules: hostile + "\nProjects/**", Asked: []string{"read", hostile},
			Scopes: []scopeChoice{{Value: hostile, Label: hostile}, {Value: "write", Label: "Write", Checked: true}}},
	}
	for i, v := range views {
		var want strings.Builder
		if err := consentTemplate.Execute(&want, v); err != nil {
			t.Fatal(err)
		}
		if got := v.html(); got != want.String() {
			t.Errorf("consent page %d:\n got %s\nwant %s", i, got, want.String())
		}
	}
	var want strings.Builder
	if err := errorTemplate.Execute(&want, hostile); err != nil {
		t.Fatal(err)
	}
	if got := errorHTML(hostile); got != want.String() {
		t.Errorf("error page:\n got %s\nwant %s", got, want.String())
	}
}
