package vaultgen

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"unicode"
)

// Question is one question about a generated vault and the note that
// answers it, a line of eval/questions.jsonl.
type Question struct {
	Question string   `json:"question"`
	Expected []string `json:"expected_paths"`
}

// QuestionsFile is where WriteQuestions puts the question set in a vault.
const QuestionsFile = "eval/questions.jsonl"

// Questions returns n questions, in whole sentences as agents ask them,
// about the vault Generate(dir, opt) writes, each with the note it is about.
// A question names two or three of its note's topic words (the words its
// prose keeps coming back to), sometimes with a heading or a few words of
// the title; about a third of the English words are inflected
// differently from how the note writes them (plural for singular, -ing),
// as people do. Prose in a generated vault is a bag of Zipf-drawn words,
// so this set measures known-item retrieval at scale (ranking, stemming,
// common-word handling), not understanding: the sample vault's question
// set does that. The same opt and n always give the same questions.
func Questions(opt Options, n int) []Question {
	if opt.Notes <= 0 || n <= 0 {
		return nil
	}
	p := newPlan(opt)
	r := rand.New(rand.NewPCG(uint64(opt.Seed), 0x51e57104))
	english := make(map[string]bool, p.english)
	for _, w := range p.vocab[:p.english] {
		english[w] = true
	}
	var out []Question
	for len(out) < n {
		i := r.IntN(opt.Notes)
		np := &p.notes[i]
		topic := p.drawTopic(p.noteRand(i), nil)
		r.Shuffle(len(topic), func(a, b int) { topic[a], topic[b] = topic[b], topic[a] })
		ws := uniq(topic)
		if len(ws) < 2 {
			continue
		}
		for k, w := range ws {
			if english[w] && r.IntN(3) == 0 {
				ws[k] = inflect(w)
			}
		}
		var q string
		switch x := r.IntN(20); {
		case x < 5 && np.headings > 0:
			h := words(strings.ToLower(p.headingTitle(i, r.IntN(np.headings))))
			if h == "" {
				continue
			}
			q = pick(r, "What does the section on %s say about %s?", "In the part about %s, what did we note on %s?")
			q = fmt.Sprintf(q, h, ws[0])
		case x < 7:
			title := strings.Fields(strings.ToLower(np.name))
			if len(title) > 2 {
				title = title[:2]
			}
			q = fmt.Sprintf(pick(r, "What did I write about %s in the note on %s?", "Where is %s mentioned with %s?"), ws[0], strings.Join(title, " "))
		case x < 13:
			q = fmt.Sprintf(pick(r,
				"What do my notes say about %s and %s?",
				"How does %s relate to %s?",
				"Where did we write about %s and the %s?",
				"Is there anything on %s with %s?",
				"Why is the %s important for %s?"), ws[0], ws[1])
		default:
			if len(ws) < 3 {
				continue
			}
			q = fmt.Sprintf(pick(r,
				"What did we decide about %s, %s and %s?",
				"Which note covers %s and %s for the %s?",
				"Can you find what we know about %s, %s and the %s?"), ws[0], ws[1], ws[2])
		}
		out = append(out, Question{Question: q, Expected: []string{np.path()}})
	}
	return out
}

// WriteQuestions writes Questions(opt, n) to dir/eval/questions.jsonl, so
// that `sheaf eval` scores a generated vault.
func WriteQuestions(dir string, opt Options, n int) error {
	var b strings.Builder
	for _, q := range Questions(opt, n) {
		line, err := json.Marshal(q)
		if err != nil {
			return fmt.Errorf("vaultgen: %w", err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	file := filepath.Join(dir, filepath.FromSlash(QuestionsFile))
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return fmt.Errorf("vaultgen: %w", err)
	}
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("vaultgen: %w", err)
	}
	return nil
}

func pick(r *rand.Rand, options ...string) string { return options[r.IntN(len(options))] }

func uniq(ws []string) []string {
	var out []string
	for _, w := range ws {
		dup := false
		for _, o := range out {
			dup = dup || o == w
		}
		if !dup {
			out = append(out, w)
		}
	}
	return out
}

// words keeps the words of s that hold a letter (no emoji).
func words(s string) string {
	var out []string
	for _, f := range strings.Fields(s) {
		if strings.IndexFunc(f, unicode.IsLetter) >= 0 {
			out = append(out, f)
		}
	}
	return strings.Join(out, " ")
}

// inflect gives another form of an English word: the singular of a plural,
// the plural of a noun-like word, or an -ing form, by plain spelling rules.
func inflect(w string) string {
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		return w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "ss"):
		return w + "es"
	case strings.HasSuffix(w, "s") && len(w) > 3:
		return w[:len(w)-1]
	case strings.HasSuffix(w, "y") && len(w) > 3 && !strings.ContainsAny(w[len(w)-2:len(w)-1], "aeiou"):
		return w[:len(w)-1] + "ies"
	case strings.HasSuffix(w, "e") && len(w) > 3:
		return w[:len(w)-1] + "ing"
	case strings.HasSuffix(w, "ch") || strings.HasSuffix(w, "sh") || strings.HasSuffix(w, "x"):
		return w + "es"
	}
	return w + "s"
}
