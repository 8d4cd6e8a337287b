package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/sheaf-dev/sheaf/shared/auth"
	"github.com/sheaf-dev/sheaf/shared/config"
	"github.com/sheaf-dev/sheaf/shared/store"
)

func keysCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "keys",
		Short: "Manage the API keys of the HTTP endpoint",
		Long: `keys adds, lists and revokes API keys. A key has a name, scopes (read,
write, admin; each includes the ones before it), an optional folder
allowlist (globs, the last match winning, e.g. --folder 'Projects/**'
--folder '!Projects/secret/**'), propose-only (its writes become proposals),
a tool profile (core or full) and an optional expiry.

Keys of a folder vault live in keys.json (mode 0600) in a folder named
after the vault in the user config folder (e.g. ~/.config/sheaf/notes-1a2b3c4d;
an existing <vault>/.sheaf/keys.json is used as it is), keys of an s3://
vault in the bucket's .sheaf/keys.json, unless --keys names another
file. Only hashes are stored: a
new key is printed once, on standard output. A running server picks up
changes within seconds.`,
	}
	cmd.AddCommand(keysAddCmd(), keysListCmd(), keysRevokeCmd())
	return cmd
}

// keysFlags registers where the keys are (--vault, --keys) and fills them
// from SHEAF_* before the command runs.
func keysFlags(cmd *cobra.Command) *config.Config {
	cfg := &config.Config{}
	f := cmd.Flags()
	f.StringVar(&cfg.Vault, "vault", "", "the vault whose keys to manage: a folder (its keys live in your config folder: sheaf state where prints it) or s3://bucket/prefix (in the bucket's .sheaf/keys.json)")
	f.StringVar(&cfg.Keys, "keys", "", "a keys file to use instead of the vault's (ssm: parameters are read-only here)")
	cmd.PreRunE = func(cmd *cobra.Command, _ []string) error { return config.Env(cmd.Flags()) }
	return cfg
}

// keySource opens the keys file.
func keySource(ctx context.Context, cfg *config.Config) (auth.KeySource, error) {
	var st store.Store
	if cfg.Keys == "" {
		if cfg.Vault == "" {
			return nil, fmt.Errorf("say where the keys are: --vault DIR|s3://BUCKET/PREFIX or --keys FILE")
		}
		site, err := config.OpenSite(ctx, cfg) // a folder's keys live outside it, a bucket's under .sheaf/
		if err != nil {
			return nil, err
		}
		st = site.Store
	}
	src, _, _, err := cfg.KeySource(ctx, st)
	if err == nil && src == nil {
		err = fmt.Errorf("--keys none: there are no keys")
	}
	return src, err
}

// keyWriter opens the keys file for changes.
func keyWriter(ctx context.Context, cfg *config.Config) (auth.KeyWriter, error) {
	src, err := keySource(ctx, cfg)
	if err != nil {
		return nil, err
	}
	w, ok := src.(auth.KeyWriter)
	if !ok {
		return nil, fmt.Errorf("%v cannot be changed from here: edit a keys file with --keys FILE, then upload it (aws ssm put-parameter --type SecureString --overwrite --value file://FILE)", src)
	}
	return w, nil
}

func keysAddCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "add NAME",
		Short: "Create a key and print it (once)",
		Args:  cobra.ExactArgs(1),
	}
	cfg := keysFlags(cmd)
	var scopes []string
	var o auth.NewKeyOptions
	var expires string
	f := cmd.Flags()
	f.StringSliceVar(&scopes, "scopes", []string{"read"}, "scopes: read, write, admin (comma-separated)")
	f.StringArrayVar(&o.Folders, "folder", nil, "an allowlist rule, repeatable: a glob such as 'Projects/**', or '!glob' to deny (default: the whole vault)")
	f.BoolVar(&o.ProposeOnly, "propose-only", false, "the key's writes become proposals for a write-scoped caller to apply")
	f.StringVar(&o.Profile, "profile", "", "limit the key to a tool profile: core or full (default: the server's)")
	f.StringVar(&expires, "expires", "", "expiry: a duration (90d, 12h) or a date (2026-12-31, RFC 3339); default never")
	f.BoolVar(&o.Owner, "owner", false, "the vault owner's key: it approves OAuth clients on the built-in authorization server's consent page (and is no API key)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		o.Name = args[0]
		if o.Owner {
			if cmd.Flags().Changed("scopes") || len(o.Folders) > 0 || o.ProposeOnly || o.Profile != "" {
				return fmt.Errorf("--owner takes no --scopes, --folder, --propose-only or --profile: an owner key approves clients over the whole vault, and chooses what each may do")
			}
			scopes = []string{"admin"}
		}
		for _, s := range scopes {
			sc, err := auth.ParseScope(s)
			if err != nil {
				return err
			}
			o.Scopes = append(o.Scopes, sc)
		}
		now := time.Now()
		if expires != "" {
			t, err := parseExpiry(expires, now)
			if err != nil {
				return err
			}
			o.Expires = t
		}
		w, err := keyWriter(cmd.Context(), cfg)
		if err != nil {
			return err
		}
		var token string
		var k auth.Key
		first := false
		if err := w.Update(cmd.Context(), func(kf *auth.KeyFile) error {
			first = len(kf.Keys) == 0
			token, k, err = kf.Add(o, now)
			return err
		}); err != nil {
			return err
		}
		fmt.Fprintln(cmd.OutOrStdout(), token)
		fmt.Fprintf(cmd.ErrOrStderr(), "added key %q (id %s, %s) to %v; it is shown only this once\n", k.Name, k.ID, describeKey(k), w)
		if first {
			fmt.Fprintln(cmd.ErrOrStderr(), "this is the vault's first key: from now on its servers over HTTP (sheaf serve --http, already running ones too) ask every client for a key (401 without one); stdio is not affected")
		}
		return nil
	}
	return cmd
}

func keysListCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "list", Short: "List the keys (never their secrets)", Args: cobra.NoArgs}
	cfg := keysFlags(cmd)
	asJSON := cmd.Flags().Bool("json", false, "print the keys file's entries as JSON")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		src, err := keySource(cmd.Context(), cfg)
		if err != nil {
			return err
		}
		data, _, err := src.Load(cmd.Context())
		if err != nil {
			return err
		}
		kf, err := auth.ParseKeyFile(data)
		if err != nil {
			return err
		}
		if *asJSON {
			for i := range kf.Keys {
				kf.Keys[i].Hash = "" // of no use to a reader
			}
			return printJSON(kf.Keys)
		}
		tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tNAME\tSTATUS\tSCOPES\tFOLDERS\tPROPOSE-ONLY\tPROFILE\tCREATED\tEXPIRES")
		now := time.Now()
		for _, k := range kf.Keys {
			scopes := scopeList(k.Scopes)
			if k.Owner {
				scopes = "owner"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%v\t%s\t%s\t%s\n", k.ID, strconv.Quote(k.Name), k.Status(now), scopes,
				or(strings.Join(k.Folders, " "), "(whole vault)"), k.ProposeOnly, or(k.Profile, "-"), k.Created.Format(time.DateOnly), expiry(k))
		}
		return tw.Flush()
	}
	return cmd
}

func keysRevokeCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "revoke ID|NAME", Short: "Revoke a key (it stays listed, refused everywhere)", Args: cobra.ExactArgs(1)}
	cfg := keysFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		w, err := keyWriter(cmd.Context(), cfg)
		if err != nil {
			return err
		}
		var k auth.Key
		if err := w.Update(cmd.Context(), func(kf *auth.KeyFile) error {
			k, err = kf.Revoke(args[0], time.Now())
			return err
		}); err != nil {
			return err
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "revoked key %q (id %s)\n", k.Name, k.ID)
		return nil
	}
	return cmd
}

// parseExpiry reads "90d", a Go duration, a date or an RFC 3339 time.
func parseExpiry(s string, now time.Time) (time.Time, error) {
	if d, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(d); err == nil && n > 0 {
			return now.AddDate(0, 0, n), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return now.Add(d), nil
	}
	for _, layout := range []string{time.DateOnly, time.RFC3339} {
		if t, err := time.Parse(layout, s); err == nil {
			if !t.After(now) {
				return time.Time{}, fmt.Errorf("--expires %s is in the past", s)
			}
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("--expires %q: want a duration (90d, 12h) or a date (2026-12-31)", s)
}

func describeKey(k auth.Key) string {
	if k.Owner {
		return "the owner key: it approves OAuth clients, expires " + expiry(k)
	}
	parts := []string{"scopes " + scopeList(k.Scopes)}
	if len(k.Folders) > 0 {
		parts = append(parts, "folders "+strings.Join(k.Folders, " "))
	}
	if k.ProposeOnly {
		parts = append(parts, "propose-only")
	}
	if k.Profile != "" {
		parts = append(parts, "profile "+k.Profile)
	}
	return strings.Join(parts, ", ") + ", expires " + expiry(k)
}

func scopeList(ss []auth.Scope) string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = string(s)
	}
	return strings.Join(out, ",")
}

func expiry(k auth.Key) string {
	if k.Expires == nil {
		return "never"
	}
	return k.Expires.Format(time.RFC3339)
}

func or(s, dflt string) string {
	if s == "" {
		return dflt
	}
	return s
}
