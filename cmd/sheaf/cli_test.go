package main

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

func TestIndexAndSearchCommands(t *testing.T) {
	vault := sampleVault(t)
	out, err := exec.Command(bin, "index", "--vault", vault, "--quiet").CombinedOutput()
	if err != nil {
		t.Fatalf("sheaf index: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "44 notes (43 indexed") || !strings.Contains(string(out), "binary.md: binary") {
		t.Errorf("sheaf index output:\n%s", out)
	}
	out, err = exec.Command(bin, "index", "--vault", vault, "--quiet").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "0 indexed, 43 unchanged") {
		t.Errorf("second sheaf index should change nothing: %v\n%s", err, out)
	}

	out, err = exec.Command(bin, "search", "--vault", vault, "--json", "kitchen", "scraps").Output()
	if err != nil {
		t.Fatalf("sheaf search --json: %v", err)
	}
	var res struct {
		Items []struct {
			Path string `json:"path"`
		} `json:"items"`
		Total int `json:"total"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("sheaf search --json is not JSON: %v\n%s", err, out)
	}
	out, err = exec.Command(bin, "search", "--vault", vault, "compost").Output()
	if err != nil || !strings.Contains(string(out), "Projects/Garden/Compost.md") || !strings.Contains(string(out), "matches") {
		t.Errorf("sheaf search compost: %v\n%s", err, out)
	}
	if err := exec.Command(bin, "search", "--vault", vault).Run(); err == nil {
		t.Errorf("sheaf search without a query should fail")
	}
	out, err = exec.Command(bin, "health", "--vault", vault, "--json").Output()
	var h struct {
		Score     int `json:"score"`
		NoteCount int `json:"noteCount"`
		Orphans   int `json:"orphans"`
	}
	if err != nil || json.Unmarshal(out, &h) != nil || h.NoteCount != 43 || h.Orphans != 5 || h.Score <= 0 || h.Score > 100 {
		t.Errorf("sheaf health --json: %v %+v\n%s", err, h, out)
	}
	if out, err := exec.Command(bin, "serve").CombinedOutput(); err == nil || !strings.Contains(string(out), "no vault") {
		t.Errorf("serve without a vault: %v %s", err, out)
	}
}
