package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sheaf-dev/sheaf/shared/config"
	"github.com/sheaf-dev/sheaf/shared/core"
	"github.com/sheaf-dev/sheaf/shared/store"
)

// writer opens the vault (a folder, indexed first, or a cloud vault) and
// the tool server over it; the write commands call the write tools
// themselves, so they behave exactly as they do over MCP.
func writer(cmd *cobra.Command, cfg *config.Config) (*core.Core, store.Store, func(), error) {
	cmd.SetContext(core.WithTool(cmd.Context(), "sheaf "+cmd.Name())) // history names the command of each version
	o, err := config.Open(cmd.Context(), cfg, logger(cfg.LogLevel))
	if err != nil {
		return nil, nil, nil, err
	}
	if o.Site.Indexes() { // a folder: this process indexes it first
		if _, err := o.Indexer.Sync(cmd.Context(), nil); err != nil {
			o.Close()
			return nil, nil, nil, err
		}
	}
	s, err := core.New(o.Vault)
	if err != nil {
		o.Close()
		return nil, nil, nil, err
	}
	return s, o.Vault.Store, func() { o.Close() }, nil
}

// vaultArg takes VAULT from the arguments when there is one more than want
// (the deprecated form).
func vaultArg(cmd *cobra.Command, cfg *config.Config, args []string, want int) []string {
	if len(args) == want+1 {
		return vaultFirst(cmd, cfg, args)
	}
	return args
}

// toolError reports a tool error: with --json its object on stdout, and
// always "kind: message" as the command's error.
func toolError(err error, asJSON bool) error {
	te := core.ToError(err)
	if asJSON {
		obj := map[string]any{"kind": te.Kind, "message": te.Message}
		for k, v := range te.Fields {
			obj[k] = v
		}
		_ = printJSON(obj)
	}
	return fmt.Errorf("%s: %s", te.Kind, te.Message)
}

func writeCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "write --vault DIR PATH [FILE]",
		Short: "Create, overwrite or append to a note (content from FILE or stdin), as write_note does",
		Long: "write puts the content of FILE (or of stdin) into the note PATH, through the write_note tool:\n" +
			"--mode create (the default) fails if the note exists; overwrite needs --expected-hash (the\n" +
			"content_hash read_note or an earlier write printed), or --force to take whatever is there now;\n" +
			"append adds the content at the end (creating the note if it does not exist, unless --key is\n" +
			"given), --key making a retried append land once. A note that\n" +
			"changed since --expected-hash is not written (proposal-stale, with its current hash). The\n" +
			"write is logged in log.md and indexed before the command returns.",
		Args: cobra.RangeArgs(1, 3),
	}
	cfg := withConfig(cmd)
	mode := cmd.Flags().String("mode", "create", "create, overwrite or append")
	expected := cmd.Flags().String("expected-hash", "", "write only if the note still has this content_hash")
	force := cmd.Flags().Bool("force", false, "overwrite: compare-and-swap against the note as it is now, instead of --expected-hash")
	key := cmd.Flags().String("key", "", "append: an idempotency key; the same append retried with it lands once")
	asJSON := cmd.Flags().Bool("json", false, "print the write_note tool's JSON result (or error)")
	tx := cmd.Flags().String("transaction", "", "a transaction_id: note history groups the write with others of the same id (sheaf undo reverts them together)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 3 || (len(args) == 2 && cfg.Vault == "") {
			args = vaultFirst(cmd, cfg, args)
		}
		var content []byte
		var err error
		if len(args) == 2 {
			content, err = os.ReadFile(args[1])
		} else {
			content, err = io.ReadAll(io.LimitReader(cmd.InOrStdin(), cfg.MaxNoteBytes+1))
		}
		if err != nil {
			return err
		}
		s, st, closeFn, err := writer(cmd, cfg)
		if err != nil {
			return err
		}
		defer closeFn()
		in := core.WriteNoteIn{Path: args[0], Content: string(content), Mode: *mode, ExpectedHash: *expected, IdempotencyKey: *key}
		in.TransactionID = *tx
		if *force && in.ExpectedHash == "" && *mode == "overwrite" {
			if data, _, err := st.Get(cmd.Context(), args[0], 0); err == nil {
				in.ExpectedHash = core.ContentHash(data)
			}
		}
		res, err := s.WriteNote(cmd.Context(), in)
		if err != nil && in.Mode == "append" && in.ExpectedHash == "" && in.IdempotencyKey == "" && core.AsError(err).Kind == "note-not-found" {
			// Appending to a note that does not exist yet starts it (the
			// write_note tool itself keeps append to existing notes).
			create := in
			create.Mode = "create"
			if res, err = s.WriteNote(cmd.Context(), create); err != nil && core.AsError(err).Kind == "note-exists" {
				res, err = s.WriteNote(cmd.Context(), in) // someone created it meanwhile
			}
		}
		if err != nil {
			return toolError(err, *asJSON)
		}
		if *asJSON {
			return printJSON(res)
		}
		verb := map[string]string{"create": "created", "overwrite": "overwrote", "append": "appended to"}[res.Mode]
		if res.Replayed {
			verb = "already appended to (same --key)"
		}
		fmt.Printf("%s %s\ncontent_hash %s\n", verb, plain(res.Path), res.ContentHash)
		return nil
	}
	return cmd
}

func mvCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mv --vault DIR PATH NEW_PATH",
		Short: "Move or rename a note and rewrite every link to it, as move_note does",
		Long: "mv moves the note PATH to NEW_PATH through the move_note tool: every link that pointed to it,\n" +
			"in every note, is rewritten in its own form (file name, path, relative path, .md, %20,\n" +
			"#heading, |alias kept), and links the new name would make ambiguous are lengthened.\n" +
			"--dry-run prints the rewrites without writing.",
		Args: cobra.RangeArgs(2, 3),
	}
	cfg := withConfig(cmd)
	dry := cmd.Flags().Bool("dry-run", false, "print what would be rewritten; write nothing")
	expected := cmd.Flags().String("expected-hash", "", "move only if the note still has this content_hash")
	asJSON := cmd.Flags().Bool("json", false, "print the move_note tool's JSON result (or error)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		args = vaultArg(cmd, cfg, args, 2)
		s, _, closeFn, err := writer(cmd, cfg)
		if err != nil {
			return err
		}
		defer closeFn()
		res, err := s.MoveNote(cmd.Context(), core.MoveNoteIn{Path: args[0], NewPath: args[1], DryRun: *dry, ExpectedHash: *expected})
		if err != nil {
			return toolError(err, *asJSON)
		}
		if *asJSON {
			return printJSON(res)
		}
		verb := "moved"
		if res.DryRun {
			verb = "would move"
		}
		fmt.Printf("%s %s -> %s\n", verb, plain(res.From), plain(res.To))
		for _, r := range res.Rewritten {
			for _, c := range r.Changes {
				fmt.Printf("  %s:%d  %s  ->  %s\n", plain(r.Path), c.Line, plain(c.Old), plain(c.New))
			}
		}
		for _, n := range res.NotRewritten {
			fmt.Printf("  NOT rewritten %s: %s\n", plain(n.Path), plain(n.Reason))
		}
		for _, n := range res.NowResolved {
			fmt.Printf("  now resolves %s:%d  %s -> %s\n", plain(n.Path), n.Line, plain(n.Link), plain(n.Target))
		}
		fmt.Printf("%s rewritten in %s\n", count(res.LinksChanged, "link"), count(len(res.Rewritten), "note"))
		return nil
	}
	return cmd
}

func rmCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rm --vault DIR PATH --yes",
		Short: "Delete a note to the vault's trash, as delete_note does (sheaf restore brings it back)",
		Args:  cobra.RangeArgs(1, 2),
	}
	cfg := withConfig(cmd)
	yes := cmd.Flags().Bool("yes", false, "confirm the deletion (delete_note's confirm: true)")
	expected := cmd.Flags().String("expected-hash", "", "delete only if the note still has this content_hash")
	asJSON := cmd.Flags().Bool("json", false, "print the delete_note tool's JSON result (or error)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		args = vaultArg(cmd, cfg, args, 1)
		s, _, closeFn, err := writer(cmd, cfg)
		if err != nil {
			return err
		}
		defer closeFn()
		res, err := s.DeleteNote(cmd.Context(), core.DeleteNoteIn{Path: args[0], Confirm: *yes, ExpectedHash: *expected})
		if err != nil {
			if te := core.ToError(err); te.Kind == "confirmation-required" && !*asJSON {
				return errors.New("confirmation-required: pass --yes to delete " + args[0])
			}
			return toolError(err, *asJSON)
		}
		if *asJSON {
			return printJSON(res)
		}
		fmt.Printf("deleted %s (kept as %s; `sheaf restore --vault %q %q` brings it back)\n", plain(res.Path), plain(res.TrashPath), cfg.Vault, res.TrashPath)
		if res.Backlinks > 0 {
			fmt.Printf("%s to it are now unresolved (sheaf health lists them)\n", count(res.Backlinks, "link"))
		}
		return nil
	}
	return cmd
}

func restoreCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "restore --vault DIR TRASH_PATH | restore --vault DIR --version ID PATH",
		Short: "Put a note sheaf rm (or delete_note) deleted back where it was, or bring back a past version of a note (--version, as restore_note)",
		Long: "restore TRASH_PATH puts a note deleted into the trash back where it was.\n" +
			"restore --version ID PATH makes version ID of the note PATH (see `sheaf log`) its content\n" +
			"again, as a new version (--expected-hash: only if the note still has that content_hash); a\n" +
			"deleted note is restored by its old path.",
		Args: cobra.RangeArgs(1, 2),
	}
	cfg := withConfig(cmd)
	version := cmd.Flags().String("version", "", "restore this version (an id from sheaf log) of the note PATH")
	expected := cmd.Flags().String("expected-hash", "", "with --version: restore only if the note still has this content_hash")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		args = vaultArg(cmd, cfg, args, 1)
		s, _, closeFn, err := writer(cmd, cfg)
		if err != nil {
			return err
		}
		defer closeFn()
		if *version != "" {
			return restoreVersion(cmd, s, args[0], *version, *expected)
		}
		p, _, err := s.RestoreNote(cmd.Context(), core.VaultArg{}, args[0])
		if err != nil {
			return toolError(err, false)
		}
		fmt.Printf("restored %s\n", plain(p))
		return nil
	}
	return cmd
}

func count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, strings.TrimSuffix(what, "s"))
}
