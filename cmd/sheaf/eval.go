package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sheaf-dev/sheaf/shared/core"
)

func evalCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "eval --vault DIR",
		Short: "Score retrieval (and, with an LLM, answer faithfulness) against eval/questions.jsonl",
		Long: "Reads the vault's eval/questions.jsonl, or the file --questions names (kept outside the vault),\n" +
			"({question, expected_paths, must_contain} per line) and\n" +
			"prints recall@k, precision@k, MRR and hit rate over the top k retrieved notes, per question\n" +
			"and overall, for every retrieval lane side by side: the textbook baseline (BM25 over whole\n" +
			"notes, words OR'd, porter stems, title x5), fulltext, and with --embed-* also semantic and\n" +
			"hybrid. --mode scores one lane only (beside the baseline). --explain N shows, for question N,\n" +
			"each lane's top 10 with the features that placed each note. With --llm-base-url and --llm-model it\n" +
			"also answers each question (in hybrid, or fulltext without embeddings, or --mode) and\n" +
			"scores faithfulness. The vault is --vault (or SHEAF_VAULT).",
		Args: cobra.MaximumNArgs(1),
	}
	cfg := withConfig(cmd)
	asJSON := cmd.Flags().Bool("json", false, "print the eval tool's JSON result")
	var in core.EvalIn
	cmd.Flags().IntVar(&in.K, "k", 6, "top-k cutoff (1-50)")
	cmd.Flags().StringVar(&in.Mode, "mode", "", "score one retrieval lane: fulltext, semantic or hybrid (default: every lane configured)")
	cmd.Flags().IntVar(&in.Explain, "explain", 0, "explain question N (1-based): each lane's top 10 with the features that placed each note")
	questions := cmd.Flags().String("questions", "", "read the questions from this JSONL file instead of the vault's "+core.EvalFile)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 1 {
			vaultFirst(cmd, cfg, args)
		}
		if in.K < 1 || in.K > 50 {
			return fmt.Errorf("--k must be 1-50, got %d", in.K)
		}
		if in.Explain < 0 || in.Explain > 500 {
			return fmt.Errorf("--explain must be a question number, 1-500, got %d", in.Explain)
		}
		switch in.Mode {
		case "", "fulltext", "semantic", "hybrid":
		default:
			return fmt.Errorf("--mode must be fulltext, semantic or hybrid, got %q", in.Mode)
		}
		source := core.EvalFile
		if cmd.Flags().Changed("questions") && *questions == "" {
			return fmt.Errorf("--questions needs a file")
		}
		if *questions != "" {
			data, err := readQuestions(*questions)
			if err != nil {
				return err
			}
			in.Questions, source = data, *questions
		}
		l, s, err := indexed(cmd, cfg)
		if err != nil {
			return err
		}
		defer l.Close()
		if in.Mode != "" {
			res, err := s.Eval(cmd.Context(), in)
			if err != nil {
				return err
			}
			if *asJSON {
				return printJSON(res)
			}
			printEval(res, source)
			printExplain(res.Explain)
			return nil
		}
		lanes := []string{"fulltext"}
		if l.Vault.Embedder != nil {
			lanes = append(lanes, "semantic", "hybrid")
		}
		var results []*core.EvalOut
		for i, lane := range lanes {
			lin := in
			lin.Mode = lane
			lin.SkipAnswers = i < len(lanes)-1 // the LLM answers in the last lane only
			if i > 0 {
				lin.Explain = 0 // one trace covers every lane
			}
			res, err := s.Eval(cmd.Context(), lin)
			if err != nil {
				return err
			}
			results = append(results, res)
		}
		if *asJSON {
			return printJSON(map[string]any{"lanes": results})
		}
		printLanes(results, source)
		printExplain(results[0].Explain)
		return nil
	}
	return cmd
}

// readQuestions reads a question set, one byte past core.MaxEvalBytes at
// most: Eval refuses one that large.
func readQuestions(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--questions: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, core.MaxEvalBytes+1))
	if err != nil {
		return nil, fmt.Errorf("--questions: %w", err)
	}
	return data, nil
}

// printLanes prints several lanes' results side by side: the totals, then
// per question the rank of the first expected note in each lane.
func printLanes(rs []*core.EvalOut, source string) {
	first := rs[0]
	names := make([]string, len(rs))
	for i, r := range rs {
		names[i] = r.Mode
	}
	fmt.Printf("%d questions, k=%d, lanes %s\n\n", first.Count, first.K, strings.Join(names, ", "))
	fmt.Printf("%-9s  %-9s  %-12s  %-6s  %-8s  %s\n", "lane", fmt.Sprintf("recall@%d", first.K), fmt.Sprintf("precision@%d", first.K), "MRR", "hit rate", "faithfulness")
	if b := first.Baseline; b != nil {
		fmt.Printf("%-9s  %-9.3f  %-12.3f  %-6.3f  %-8.3f  %s\n", "baseline", b.RecallAtK, b.PrecisionAtK, b.MRR, b.HitRate, "-")
	} else if first.BaselineNote != "" {
		fmt.Printf("%-9s  %s\n", "baseline", first.BaselineNote)
	}
	for _, r := range rs {
		faith := "-"
		if r.FaithfulnessRate != nil {
			faith = fmt.Sprintf("%.3f", *r.FaithfulnessRate)
		}
		fmt.Printf("%-9s  %-9.3f  %-12.3f  %-6.3f  %-8.3f  %s\n", r.Mode, r.RecallAtK, r.PrecisionAtK, r.MRR, r.HitRate, faith)
	}
	fmt.Printf("\nrank of the first expected note in each lane (- = not in the top %d)\n", first.K)
	for _, n := range names {
		fmt.Printf("%-9s ", n)
	}
	fmt.Println("question")
	for i, q := range first.PerQuestion {
		missed := false
		for _, r := range rs {
			rank := "-"
			if rr := r.PerQuestion[i].ReciprocalRank; rr > 0 {
				rank = fmt.Sprint(int(1/rr + 0.5))
			} else {
				missed = true
			}
			fmt.Printf("%-9s ", rank)
		}
		fmt.Println(plain(q.Question))
		if missed {
			fmt.Printf("%*s expected %s\n", 10*len(rs), "", plain(strings.Join(q.Expected, ", ")))
			for _, r := range rs {
				if r.PerQuestion[i].ReciprocalRank == 0 {
					fmt.Printf("%*s %s got %s\n", 10*len(rs), "", r.Mode, plain(strings.Join(r.PerQuestion[i].Retrieved, ", ")))
				}
			}
		}
		for _, r := range rs {
			if e := r.PerQuestion[i].AnswerError; e != "" {
				fmt.Printf("%*s answer failed: %s\n", 10*len(rs), "", plain(e))
			}
		}
	}
	for _, e := range first.Errors {
		fmt.Printf("line %d of %s skipped: %s\n", e.Line, plain(source), plain(e.Message))
	}
	if first.Skipped > 0 {
		fmt.Printf("%d more questions not scored (500 per run)\n", first.Skipped)
	}
}

// printEval prints eval's result as a table.
func printEval(r *core.EvalOut, source string) {
	fmt.Printf("%d questions, k=%d, mode %s\n", r.Count, r.K, r.Mode)
	faith := "-"
	if r.FaithfulnessRate != nil {
		faith = fmt.Sprintf("%.3f", *r.FaithfulnessRate)
	}
	fmt.Printf("recall@%d %.3f  precision@%d %.3f  MRR %.3f  hit rate %.3f  faithfulness %s\n",
		r.K, r.RecallAtK, r.K, r.PrecisionAtK, r.MRR, r.HitRate, faith)
	if b := r.Baseline; b != nil {
		fmt.Printf("baseline (BM25, words OR'd, porter, title x5): recall@%d %.3f  precision@%d %.3f  MRR %.3f  hit rate %.3f\n", r.K, b.RecallAtK, r.K, b.PrecisionAtK, b.MRR, b.HitRate)
	} else if r.BaselineNote != "" {
		fmt.Printf("baseline %s\n", r.BaselineNote)
	}
	fmt.Println()
	fmt.Printf("%-4s  %-6s  %-6s  %-5s  %s\n", "hit", "recall", "RR", "faith", "question")
	for _, q := range r.PerQuestion {
		hit, f := "miss", "-"
		if q.Hit {
			hit = "hit"
		}
		if q.Faithful != nil {
			f = map[bool]string{true: "yes", false: "no"}[*q.Faithful]
		}
		fmt.Printf("%-4s  %-6.2f  %-6.2f  %-5s  %s\n", hit, q.Recall, q.ReciprocalRank, f, plain(q.Question))
		if !q.Hit {
			fmt.Printf("%28s expected %s, got %s\n", "", plain(strings.Join(q.Expected, ", ")), plain(strings.Join(q.Retrieved, ", ")))
		}
		if q.AnswerError != "" {
			fmt.Printf("%28s answer failed: %s\n", "", plain(q.AnswerError))
		}
	}
	for _, e := range r.Errors {
		fmt.Printf("line %d of %s skipped: %s\n", e.Line, plain(source), plain(e.Message))
	}
	if r.Skipped > 0 {
		fmt.Printf("%d more questions not scored (500 per run)\n", r.Skipped)
	}
}

// printExplain prints each lane's top 10 for the explained question.
func printExplain(x *core.EvalExplain) {
	if x == nil {
		return
	}
	fmt.Printf("\nquestion %d: %s\nexpected %s\n", x.Question, plain(x.Text), plain(strings.Join(x.Expected, ", ")))
	for _, l := range x.Lanes {
		fmt.Printf("\n%s: %s\n", l.Lane, plain(l.Note))
		if l.Share != nil {
			fmt.Printf("  vector share for this question %.3f\n", *l.Share)
		}
		if len(l.Terms) > 0 {
			var ts []string
			for _, t := range l.Terms {
				ts = append(ts, fmt.Sprintf("%s (idf %.2f)", t.Stem, t.IDF))
			}
			fmt.Printf("  words %s\n", plain(strings.Join(ts, ", ")))
		}
		for _, n := range l.Notes {
			mark := " "
			if n.Expected {
				mark = "*"
			}
			keys := make([]string, 0, len(n.Features))
			for k, v := range n.Features {
				if v != 0 {
					keys = append(keys, k)
				}
			}
			sort.Strings(keys)
			var fs []string
			for _, k := range keys {
				fs = append(fs, fmt.Sprintf("%s=%.3g", k, n.Features[k]))
			}
			fmt.Printf("%s %2d  %-8.4g %s\n      %s\n", mark, n.Rank, n.Score, plain(n.Path), plain(strings.Join(fs, " ")))
		}
	}
}
