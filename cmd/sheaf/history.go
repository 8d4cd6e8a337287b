package main

// The history commands: sheaf log, sheaf diff, sheaf restore --version and
// sheaf undo call the history tools' core, so they behave as the tools do
// (docs/history.md).

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sheaf-dev/sheaf/shared/core"
	"github.com/sheaf-dev/sheaf/shared/history"
)

func logCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "log --vault DIR PATH",
		Short: "List a note's versions, newest first (note_history): who wrote each, when, with which tool",
		Long: "log lists the versions of the note PATH (where it is now, or where it was when it was deleted),\n" +
			"newest first, following moves: id, time, op, author, tool, transaction and content hash.\n" +
			"Read one with `sheaf diff`, bring one back with `sheaf restore --version ID PATH`.",
		Args: cobra.ExactArgs(1),
	}
	cfg := withConfig(cmd)
	limit := cmd.Flags().Int("limit", 50, "versions to list")
	after := cmd.Flags().String("after", "", "list the versions older than this version id")
	asJSON := cmd.Flags().Bool("json", false, "print the note_history tool's JSON result (or error)")
	cmd.RunE = withCore(cfg, 0, func(cmd *cobra.Command, s *core.Core, args []string) error {
		out, err := s.NoteHistory(cmd.Context(), core.NoteHistoryIn{Path: args[0], Limit: *limit, After: *after})
		if err != nil {
			return toolError(err, *asJSON)
		}
		if *asJSON {
			return printJSON(out)
		}
		if len(out.Versions) == 0 {
			fmt.Printf("%s has no history\n", plain(out.Path))
			return nil
		}
		for _, v := range out.Versions {
			fmt.Println(versionLine(v))
		}
		if out.More {
			fmt.Printf("(older versions: sheaf log --after %s %q)\n", out.NextAfter, out.Path)
		}
		return nil
	})
	return cmd
}

// versionLine is one version as sheaf log prints it.
func versionLine(v history.Version) string {
	hash := "-"
	if len(v.Hash) >= 12 {
		hash = v.Hash[:12]
	}
	who := v.Author.Subject
	if v.Author.Name != "" && v.Author.Name != v.Author.Subject {
		who += " (" + v.Author.Name + ")"
	}
	parts := []string{v.ID, v.Time.Local().Format(time.DateTime), string(v.Op), plain(v.Path), who, hash}
	if v.Tool != "" {
		parts = append(parts, "tool="+v.Tool)
	}
	if v.Transaction != "" {
		parts = append(parts, "tx="+plain(v.Transaction))
	}
	switch {
	case v.From != "":
		parts = append(parts, "from="+plain(v.From))
	case v.To != "":
		parts = append(parts, "to="+plain(v.To))
	}
	if v.Merged != "" {
		parts = append(parts, "merged="+v.Merged)
	}
	if v.Restored != "" {
		parts = append(parts, "restored="+v.Restored)
	}
	return strings.Join(parts, "  ")
}

func diffCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "diff --vault DIR PATH FROM [TO]",
		Short: "Show the unified diff between two versions of a note, or a version and the note now (diff_note)",
		Args:  cobra.RangeArgs(2, 3),
	}
	cfg := withConfig(cmd)
	cmd.RunE = withCore(cfg, 0, func(cmd *cobra.Command, s *core.Core, args []string) error {
		in := core.DiffNoteIn{Path: args[0], From: args[1]}
		if len(args) == 3 {
			in.To = args[2]
		}
		for first := true; ; first = false {
			out, err := s.DiffNote(cmd.Context(), in)
			if err != nil {
				return toolError(err, false)
			}
			text := out.Diff
			if !first { // the headers again: print the hunks only
				if i := strings.Index(text, "\n@@"); i >= 0 {
					text = text[i+1:]
				}
			}
			fmt.Print(text)
			if out.NextHunk == nil || *out.NextHunk <= in.Hunk {
				return nil
			}
			in.Hunk = *out.NextHunk
		}
	})
	return cmd
}

// restoreVersion is sheaf restore --version: the core's restore_note.
func restoreVersion(cmd *cobra.Command, s *core.Core, path, version, expected string) error {
	out, err := s.RestoreVersion(cmd.Context(), core.RestoreNoteIn{Path: path, Version: version, ExpectedHash: expected})
	if err != nil {
		return toolError(err, false)
	}
	fmt.Printf("restored version %s of %s (new version %s, content_hash %s)\n", version, plain(out.Path), out.Version, out.ContentHash)
	return nil
}

func undoCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "undo --vault DIR TRANSACTION",
		Short: "Revert every change of a transaction_id as new versions (undo_transaction); --dry-run shows them",
		Long: "undo gives every note the transaction TRANSACTION changed its content from before the transaction\n" +
			"(a note it created is deleted, one it deleted or moved away comes back). When any of them was\n" +
			"written since, nothing is written and the conflicting paths are listed.",
		Args: cobra.ExactArgs(1),
	}
	cfg := withConfig(cmd)
	dry := cmd.Flags().Bool("dry-run", false, "show what would be reverted (and any conflict), writing nothing")
	asJSON := cmd.Flags().Bool("json", false, "print the undo_transaction tool's JSON result (or error)")
	cmd.RunE = withCore(cfg, 0, func(cmd *cobra.Command, s *core.Core, args []string) error {
		out, err := s.UndoTransaction(cmd.Context(), core.UndoIn{Transaction: args[0], DryRun: *dry})
		if err != nil {
			if te := core.ToError(err); !*asJSON && te.Kind == "proposal-stale" {
				if cs, ok := te.Fields["conflicts"].([]core.UndoConflict); ok {
					for _, c := range cs {
						fmt.Printf("conflict  %s  %s\n", plain(c.Path), c.Reason)
					}
				}
			}
			return toolError(err, *asJSON)
		}
		if *asJSON {
			return printJSON(out)
		}
		verb := "reverted"
		if *dry {
			verb = "would revert"
		}
		for _, c := range out.Changes {
			fmt.Printf("%s  %s  %s\n", verb, c.Action, plain(c.Path))
		}
		for _, c := range out.Conflicts {
			fmt.Printf("conflict  %s  %s\n", plain(c.Path), c.Reason)
		}
		return nil
	})
	return cmd
}
