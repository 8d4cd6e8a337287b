package main

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sheaf-dev/sheaf/indexer"
	"github.com/sheaf-dev/sheaf/shared/config/local"
	"github.com/sheaf-dev/sheaf/shared/core"
	"github.com/sheaf-dev/sheaf/shared/vault/vaultgen"
)

func indexCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "index --vault DIR",
		Short: "Build or refresh the vault's index, reporting progress",
		Long: `index brings the vault's index up to date and says what it did. Progress is a
bar on a terminal, a plain line every 2 seconds otherwise (--quiet: none).`,
		Args: cobra.NoArgs,
	}
	cfg := withConfig(cmd)
	quiet := cmd.Flags().Bool("quiet", false, "no progress report")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		l, err := local.Open(cmd.Context(), cfg, logger(cfg.LogLevel))
		if err != nil {
			return err
		}
		defer l.Close()
		var report func(done, total int)
		if !*quiet {
			p := newProgress(cmd.ErrOrStderr())
			defer p.finish()
			report = p.update
		}
		st, err := l.Indexer.Sync(cmd.Context(), report)
		if err != nil {
			return err
		}
		printSync(st, l.Indexer)
		return nil
	}
	return cmd
}

// printSync prints what a sync or reconcile did, then the problem of each
// file it skipped or indexed only in part, by path.
func printSync(st indexer.SyncStats, ix *indexer.Indexer) {
	fmt.Printf("%d notes (%d indexed, %d unchanged, %d removed, %d skipped), %d attachments in %s\n",
		st.Notes, st.Indexed, st.Kept, st.Removed, st.Skipped, st.Attachments, st.Elapsed.Round(time.Millisecond))
	probs := ix.Status().Problems
	paths := make([]string, 0, len(probs))
	for p := range probs {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		fmt.Printf("  %s: %s\n", p, probs[p])
	}
}

func searchCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "search --vault DIR QUERY...",
		Short: "Search the vault from the shell (refreshes the index first)",
		Args:  cobra.MinimumNArgs(1),
	}
	cfg := withConfig(cmd)
	asJSON := cmd.Flags().Bool("json", false, "print the search tool's JSON result")
	limit := cmd.Flags().Int("limit", 10, "how many results")
	anyWord := cmd.Flags().Bool("any", false, "rank notes matching any word (for questions)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		l, s, err := indexed(cmd, cfg)
		if err != nil {
			return err
		}
		defer l.Close()
		match := "all"
		if *anyWord {
			match = "any"
		}
		res, err := s.Search(cmd.Context(), core.SearchArgs{Query: strings.Join(args, " "), Limit: *limit, Mode: "fulltext", Match: match})
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(res)
		}
		for i, h := range res.Items {
			fmt.Printf("%2d. %s  (%s, %.2f)\n    %s\n", i+1, h.Path, h.Title, h.Score, strings.ReplaceAll(h.Snippet, "\n", " "))
		}
		fmt.Printf("%d of %d matches\n", len(res.Items), res.Total)
		if res.Hint != "" {
			fmt.Println(res.Hint)
		}
		return nil
	}
	return cmd
}

func genCmd() *cobra.Command {
	var opt vaultgen.Options
	var questions int
	cmd := &cobra.Command{
		Use:    "gen DIR",
		Short:  "Write a deterministic synthetic vault (for benchmarks)",
		Args:   cobra.ExactArgs(1),
		Hidden: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := vaultgen.Generate(args[0], opt)
			if err != nil {
				return err
			}
			fmt.Printf("%d notes, %d bytes, %d links, %d tags\n", st.Notes, st.Bytes, st.Links, st.Tags)
			if questions > 0 {
				if err := vaultgen.WriteQuestions(args[0], opt, questions); err != nil {
					return err
				}
				fmt.Printf("%d questions in %s (score them with sheaf eval)\n", questions, vaultgen.QuestionsFile)
			}
			return nil
		},
	}
	cmd.Flags().IntVar(&questions, "questions", 0, "also write this many questions about the vault to eval/questions.jsonl")
	cmd.Flags().IntVar(&opt.Notes, "notes", 10000, "how many notes")
	cmd.Flags().Int64Var(&opt.Seed, "seed", 1, "random seed (same seed, same vault)")
	return cmd
}
