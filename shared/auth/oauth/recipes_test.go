package oauth_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"

	"github.com/sheaf-dev/sheaf/shared/auth"
	"github.com/sheaf-dev/sheaf/shared/auth/oauth"
	"github.com/sheaf-dev/sheaf/shared/auth/oauth/oauthtest"
)

// The recipes of docs/oauth.md for outside authorization servers, checked
// on Sheaf's side: oauthtest stands in for each provider, shaped as its
// documentation describes (where its metadata and keys are, what its
// access tokens hold), and a client pasted into Claude (a client id and
// secret) goes through the authorization code flow with PKCE. None of the
// providers can be reached from here: what is tested is that Sheaf,
// configured as the recipe says, accepts the tokens that shape describes
// and refuses the ones it must.

const (
	callback = "https://claude.ai/api/mcp/auth_callback"
	entraAPI = "6f1c3b2a-8d4e-4f6a-9b0c-1d2e3f4a5b6c" // the API's application (client) id
)

// auth0 is an Auth0 tenant with an API whose identifier is the MCP URL:
// issuer with a trailing slash, OpenID discovery at the root, keys at
// /.well-known/jwks.json, aud the API identifier (and the userinfo URL
// when openid is asked), the granted permissions in scope, the client in
// azp, the custom claims an Action sets.
var auth0 = oauthtest.Profile{
	Name: "Auth0", TrailingSlash: true, JWKSPath: "/.well-known/jwks.json",
	MetadataPaths: []string{"/.well-known/openid-configuration"},
	Token: func(c *oauthtest.Client, scope, resource string) jwt.MapClaims {
		aud := []string{resource}
		if strings.Contains(scope, "openid") {
			aud = append(aud, "https://tenant.example.auth0.com/userinfo")
		}
		return jwt.MapClaims{"sub": "auth0|6612f0c1a2b3c4d5e6f70819", "aud": aud, "azp": c.ID, "scope": scope,
			"permissions": strings.Fields(scope)}
	},
}

// cognito is an Amazon Cognito user pool with a resource server whose
// identifier is "sheaf" (scopes sheaf/read, ...): issuer
// https://cognito-idp.REGION.amazonaws.com/POOL_ID, OpenID discovery
// appended, keys at ISSUER/.well-known/jwks.json; access tokens carry no
// aud, the app client in client_id, token_use "access", the scopes.
var cognito = oauthtest.Profile{
	Name: "Cognito", IssuerPath: "/eu-west-1_AbCdEf12", JWKSPath: "/eu-west-1_AbCdEf12/.well-known/jwks.json",
	MetadataPaths: []string{"/eu-west-1_AbCdEf12/.well-known/openid-configuration"},
	Token: func(c *oauthtest.Client, scope, _ string) jwt.MapClaims {
		return jwt.MapClaims{"sub": "2f3e4d5c-6b7a-4890-a1b2-c3d4e5f60718", "token_use": "access", "client_id": c.ID,
			"scope": scope, "username": "alice", "version": 2, "auth_time": 1700000000}
	},
}

// entra is a Microsoft Entra ID tenant with an app registration for the
// API exposing scopes sheaf.read, ...: issuer
// https://login.microsoftonline.com/TENANT/v2.0, OpenID discovery
// appended, keys at /TENANT/discovery/v2.0/keys; v2 access tokens have the
// API's application id in aud, the delegated scopes without the API's URI
// in scp, the client in azp.
var entra = oauthtest.Profile{
	Name: "Entra ID", IssuerPath: "/9188040d-6c67-4c5b-b112-36a304b66dad/v2.0", JWKSPath: "/9188040d-6c67-4c5b-b112-36a304b66dad/discovery/v2.0/keys",
	MetadataPaths: []string{"/9188040d-6c67-4c5b-b112-36a304b66dad/v2.0/.well-known/openid-configuration"},
	Token: func(c *oauthtest.Client, scope, _ string) jwt.MapClaims {
		var scp []string
		for _, s := range strings.Fields(scope) {
			if i := strings.LastIndexByte(s, '/'); i >= 0 {
				scp = append(scp, s[i+1:]) // api://APP_ID/sheaf.read -> sheaf.read
			}
		}
		return jwt.MapClaims{"sub": "AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ", "aud": entraAPI, "azp": c.ID, "ver": "2.0",
			"tid": "9188040d-6c67-4c5b-b112-36a304b66dad", "oid": "00000000-0000-0000-66f3-3332eca7ea81", "scp": strings.Join(scp, " ")}
	},
}

// pastedClientToken runs the authorization code flow with PKCE as Claude
// does with a client id and secret pasted into it.
func pastedClientToken(t *testing.T, as *oauthtest.Server, id, secret, scope string) string {
	t.Helper()
	verifier := strings.Repeat("v", 50)
	sum := sha256.Sum256([]byte(verifier))
	q := url.Values{"client_id": {id}, "redirect_uri": {callback}, "response_type": {"code"}, "scope": {scope},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"}, "resource": {resource}}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(as.Base + "/authorize?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || loc.Query().Get("code") == "" {
		t.Fatalf("authorize: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	form := url.Values{"grant_type": {"authorization_code"}, "code": {loc.Query().Get("code")}, "code_verifier": {verifier},
		"redirect_uri": {callback}, "resource": {resource}}
	req, _ := http.NewRequest(http.MethodPost, as.Base+"/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(id, secret)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("token: %d %v", resp.StatusCode, err)
	}
	return tok.AccessToken
}

func TestRecipes(t *testing.T) {
	folders := map[string]any{oauth.ClaimFolders: []string{"Projects/**"}}
	for _, tc := range []struct {
		profile oauthtest.Profile
		scope   string // as the client asks, in the provider's names
		config  func(as *oauthtest.Server) oauth.Config
		claims  map[string]any // added by the provider's hook (Auth0 Action, Cognito pre token generation trigger)
		refused func(as *oauthtest.Server) map[string]string
	}{{
		profile: auth0, scope: "openid sheaf:write",
		config: func(as *oauthtest.Server) oauth.Config { return oauth.Config{Issuer: as.URL, Audience: resource} },
		claims: folders,
		refused: func(as *oauthtest.Server) map[string]string {
			return map[string]string{
				"only userinfo": as.Issue(jwt.MapClaims{"sub": "x", "aud": "https://tenant.example.auth0.com/userinfo", "scope": "sheaf:read"}),
				"another API":   as.Issue(jwt.MapClaims{"sub": "x", "aud": "https://api.example.com", "scope": "sheaf:read"}),
			}
		},
	}, {
		profile: cognito, scope: "sheaf/write",
		config: func(as *oauthtest.Server) oauth.Config {
			return oauth.Config{Issuer: as.URL, Audience: resource, ScopePrefix: "sheaf/", ClientIDs: []string{"claude-app-client"}}
		},
		claims: folders,
		refused: func(as *oauthtest.Server) map[string]string {
			return map[string]string{
				"an ID token":          as.Issue(jwt.MapClaims{"sub": "x", "aud": "claude-app-client", "token_use": "id", "scope": "sheaf/read"}),
				"another app client":   as.Issue(jwt.MapClaims{"sub": "x", "token_use": "access", "client_id": "other-app", "scope": "sheaf/read"}),
				"token_use id, no aud": as.Issue(jwt.MapClaims{"sub": "x", "token_use": "id", "client_id": "claude-app-client"}),
			}
		},
	}, {
		profile: entra, scope: "api://" + entraAPI + "/sheaf.write offline_access",
		config: func(as *oauthtest.Server) oauth.Config {
			return oauth.Config{Issuer: as.URL, Audience: resource, Audiences: []string{entraAPI}, ScopePrefix: "sheaf."}
		},
		refused: func(as *oauthtest.Server) map[string]string {
			return map[string]string{
				"Microsoft Graph": as.Issue(jwt.MapClaims{"sub": "x", "aud": "00000003-0000-0000-c000-000000000000", "scp": "User.Read"}),
				"another API":     as.Issue(jwt.MapClaims{"sub": "x", "aud": "11111111-2222-3333-4444-555555555555", "scp": "sheaf.read"}),
			}
		},
	}} {
		t.Run(tc.profile.Name, func(t *testing.T) {
			as := oauthtest.NewProfile(t, tc.profile)
			as.AddClient(oauthtest.Client{ID: "claude-app-client", Secret: "pasted-secret", RedirectURIs: []string{callback}, Claims: tc.claims})
			v, err := oauth.New(tc.config(as))
			if err != nil {
				t.Fatal(err)
			}
			defer v.Close()
			ctx := context.Background()
			id, err := v.Verify(ctx, pastedClientToken(t, as, "claude-app-client", "pasted-secret", tc.scope))
			if err != nil {
				t.Fatalf("the recipe's token: %v", err)
			}
			if !id.Has(auth.ScopeWrite) || id.Has(auth.ScopeAdmin) {
				t.Errorf("scopes: %+v", id)
			}
			if tc.claims != nil && (!id.Folders.Allows("Projects/a.md") || id.Folders.Allows("Journal/a.md")) {
				t.Errorf("folders: %s", id.Folders)
			}
			for name, tok := range tc.refused(as) {
				if _, err := v.Verify(ctx, tok); err == nil {
					t.Errorf("%s: accepted", name)
				}
			}
			if as.JWKSFetches.Load() == 0 {
				t.Error("the keys were not fetched from where the provider publishes them")
			}
		})
	}
}
