package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sheaf-dev/sheaf/shared/llm/llmtest"
	"github.com/sheaf-dev/sheaf/shared/tools/toolstest"
)

const soilNote = "Projects/Garden/2026/Soil test results.md"

// groundingReply is a model reply that cites a page it was shown and one it
// was not, with one real quote (copied from what it was shown) and one
// invented quote.
func groundingReply(r llmtest.Request) (string, int) {
	user := r.User()
	if !strings.Contains(user, `path="`+soilNote+`"`) {
		return `{"answer": "The notes don't say.", "citations": []}`, 0
	}
	real := "pH 6.4"
	if !strings.Contains(user, real) {
		return `{"answer": "missing", "citations": []}`, 0
	}
	b, _ := json.Marshal(map[string]any{
		"answer":    "Bed 4 tested at pH 6.4.",
		"citations": []string{soilNote, "Secret/Plans.md"},
		"quotes": []map[string]string{
			{"path": soilNote, "quote": real},
			{"path": soilNote, "quote": "pH 9.9, alarmingly alkaline"},
		},
	})
	return string(b), 0
}

func TestAnswerCommand(t *testing.T) {
	vault := sampleVault(t)
	fake := llmtest.Start(t)
	fake.Script(groundingReply)
	out, err := exec.Command(bin, "answer", vault, "--llm-base-url", fake.URL, "--llm-model", "fake",
		"What", "pH", "did", "the", "soil", "test", "show", "for", "bed", "4?").CombinedOutput()
	if err != nil {
		t.Fatalf("sheaf answer: %v\n%s", err, out)
	}
	text := string(out)
	if !strings.Contains(text, "Bed 4 tested at pH 6.4.") || !strings.Contains(text, "[1] "+soilNote) ||
		strings.Contains(text, "Secret/Plans.md") || !strings.Contains(text, `"pH 6.4"`) || strings.Contains(text, "alkaline") {
		t.Errorf("sheaf answer output:\n%s", text)
	}
	if q := fake.Requests()[0].User(); !strings.Contains(q, "What pH did the soil test show for bed 4?") {
		t.Errorf("the model was not asked the question:\n%s", q)
	}

	out, err = exec.Command(bin, "answer", vault, "what pH?").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "No LLM provider configured") {
		t.Errorf("sheaf answer without an LLM: %v\n%s", err, out)
	}
}

func TestEvalCommand(t *testing.T) {
	vault := sampleVault(t)
	out, err := exec.Command(bin, "eval", vault, "--json", "--k", "6", "--mode", "fulltext").Output()
	if err != nil {
		t.Fatalf("sheaf eval --json: %v", err)
	}
	var res struct {
		K                int      `json:"k"`
		Count            int      `json:"count"`
		HitRate          float64  `json:"hitRate"`
		MRR              float64  `json:"mrr"`
		FaithfulnessRate *float64 `json:"faithfulnessRate"`
	}
	if err := json.Unmarshal(out, &res); err != nil || res.K != 6 || res.Count < 40 || res.HitRate < 0.5 || res.MRR <= 0 || res.FaithfulnessRate != nil {
		t.Errorf("sheaf eval --json: %v %+v\n%s", err, res, out)
	}
	out, err = exec.Command(bin, "eval", vault, "--k", "3").CombinedOutput()
	if err != nil || !strings.Contains(string(out), fmt.Sprintf("%d questions, k=3, lanes fulltext", res.Count)) || !strings.Contains(string(out), "recall@3") {
		t.Errorf("sheaf eval table: %v\n%s", err, out)
	}
	if out, err := exec.Command(bin, "eval", vault, "--mode", "psychic").CombinedOutput(); err == nil {
		t.Errorf("a bad --mode must fail:\n%s", out)
	}

	// --questions: a set kept outside the vault, its bad lines named by its path.
	set := filepath.Join(t.TempDir(), "mine.jsonl")
	line, _ := json.Marshal(map[string]any{"question": "what pH did the soil test show for bed 4?", "expected_paths": []string{soilNote}})
	if err := os.WriteFile(set, append(line, "\nnot json\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = exec.Command(bin, "eval", "--vault", vault, "--questions", set, "--k", "3").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "1 questions, k=3") || !strings.Contains(string(out), "line 2 of "+set+" skipped") {
		t.Errorf("sheaf eval --questions: %v\n%s", err, out)
	}
	if out, err := exec.Command(bin, "eval", "--vault", vault, "--questions", set+".missing").CombinedOutput(); err == nil || !strings.Contains(string(out), "--questions") {
		t.Errorf("a missing --questions file must fail: %v\n%s", err, out)
	}
}

// TestAnswerOverMCP runs `sheaf serve` with a scripted fake model and checks
// answer's validation end to end: the page it was not shown and the
// invented quote are dropped, the real quote kept with its heading and
// passage ordinal; eval then also scores faithfulness.
func TestAnswerOverMCP(t *testing.T) {
	vault := sampleVault(t)
	fake := llmtest.Start(t)
	fake.Script(groundingReply)
	c := toolstest.NewClient(t, stdioSession(t, vault, "--llm-base-url", fake.URL, "--llm-model", "fake"))
	c.WaitIndexed()
	var res struct {
		Answer    string `json:"answer"`
		Citations []struct {
			Path string `json:"path"`
		} `json:"citations"`
		QuotedSpans []struct {
			Path    string `json:"path"`
			Quote   string `json:"quote"`
			Heading string `json:"heading"`
			Ordinal int    `json:"ordinal"`
		} `json:"quotedSpans"`
		Retrieved []struct {
			Path string `json:"path"`
		} `json:"retrieved"`
		DroppedCitations []string `json:"droppedCitations"`
		DroppedQuotes    int      `json:"droppedQuotes"`
		Model            string   `json:"model"`
	}
	c.MustOK("answer", map[string]any{"query": "What pH did the soil test show for bed 4?", "limit": 4}, &res)
	if res.Answer != "Bed 4 tested at pH 6.4." || res.Model != "fake" {
		t.Fatalf("answer %+v", res)
	}
	if len(res.Citations) != 1 || res.Citations[0].Path != soilNote || len(res.DroppedCitations) != 1 || res.DroppedCitations[0] != "Secret/Plans.md" {
		t.Errorf("citations %+v, dropped %v", res.Citations, res.DroppedCitations)
	}
	if len(res.QuotedSpans) != 1 || res.QuotedSpans[0].Quote != "pH 6.4" || res.DroppedQuotes != 1 {
		t.Fatalf("quoted spans %+v, dropped %d", res.QuotedSpans, res.DroppedQuotes)
	}
	// The heading and ordinal must be those of the passage holding the quote.
	var note struct {
		Content string `json:"content"`
	}
	c.MustOK("read_note", map[string]any{"path": soilNote}, &note)
	var outline struct {
		Headings []struct {
			Title string `json:"title"`
		} `json:"headings"`
	}
	c.MustOK("read_outline", map[string]any{"path": soilNote}, &outline)
	q := res.QuotedSpans[0]
	if !strings.Contains(note.Content, "pH 6.4") {
		t.Fatalf("the fixture changed: %s no longer says pH 6.4", soilNote)
	}
	found := false
	for _, h := range outline.Headings {
		found = found || h.Title == q.Heading
	}
	if !found {
		t.Errorf("quote heading %q is not a heading of the note (%+v)", q.Heading, outline.Headings)
	}
	if !passageHas(t, fake, q.Ordinal, q.Heading, "pH 6.4") {
		t.Errorf("the passage shown with ordinal %d under %q does not hold the quote", q.Ordinal, q.Heading)
	}

	var ev struct {
		FaithfulnessRate *float64 `json:"faithfulnessRate"`
		PerQuestion      []struct {
			Faithful *bool `json:"faithful"`
		} `json:"perQuestion"`
	}
	c.MustOK("eval", map[string]any{"k": 4, "mode": "fulltext"}, &ev)
	if ev.FaithfulnessRate == nil || len(ev.PerQuestion) < 40 || ev.PerQuestion[0].Faithful == nil || *ev.PerQuestion[0].Faithful {
		t.Errorf("eval with an LLM should score faithfulness (citing Secret/Plans.md is unfaithful): %+v", ev)
	}
}

// passageHas reports whether the model was shown, in its first request,
// a passage of soilNote with the given ordinal and innermost heading that
// contains text.
func passageHas(t *testing.T, fake *llmtest.Server, ordinal int, heading, text string) bool {
	t.Helper()
	user := fake.Requests()[0].User()
	for _, block := range strings.Split(user, "<<<PASSAGE-")[1:] {
		header, body, _ := strings.Cut(block, ">>>\n")
		if !strings.Contains(header, `path="`+soilNote+`"`) || !strings.Contains(header, " ordinal="+strconv.Itoa(ordinal)) {
			continue
		}
		section := header[strings.Index(header, "section=")+len("section="):]
		if strings.Contains(body, text) && strings.Contains(section, heading) {
			return true
		}
	}
	return false
}
