package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime/debug"
	"strconv"
	"time"
)

// The PDF reader runs in a child process: the binary that links this
// package, started again with childEnv set. The library recurses without
// bound on some malformed files (an object stream that contains itself, a
// deeply nested array): a Go stack overflow cannot be recovered and would
// end the whole server. In the child it ends only the child, which also
// gets a time limit, a memory limit, and no environment (no cloud
// credentials, no keys) beside what it is told.
const (
	childEnv       = "SHEAF_INGEST_CHILD"        // "pdf": this process is a PDF reader child
	childLimitsEnv = "SHEAF_INGEST_CHILD_LIMITS" // the ConvertLimits, JSON
	childMaxStack  = 16 << 20                    // a runaway recursion dies at 16 MB, not 1 GB
)

// DefaultPDFTimeout bounds one PDF conversion in the child.
const DefaultPDFTimeout = 30 * time.Second

func init() {
	if os.Getenv(childEnv) == "pdf" {
		os.Exit(runPDFChild(os.Stdin, os.Stdout))
	}
}

// childAnswer is what the child writes to its stdout.
type childAnswer struct {
	Doc *Document `json:"doc,omitempty"`
	Err *struct {
		Reason    Reason         `json:"reason"`
		Message   string         `json:"message"`
		Retryable bool           `json:"retryable"`
		Fields    map[string]any `json:"fields,omitempty"`
		Detail    string         `json:"detail,omitempty"`
	} `json:"err,omitempty"`
}

func runPDFChild(in io.Reader, out io.Writer) int {
	debug.SetMaxStack(childMaxStack)
	var lim ConvertLimits
	_ = json.Unmarshal([]byte(os.Getenv(childLimitsEnv)), &lim)
	lim = lim.withDefaults()
	debug.SetMemoryLimit(lim.MaxPDFContent + 512<<20)
	body, err := io.ReadAll(in)
	if err != nil {
		return 2
	}
	doc, err := pdfInProcess(context.Background(), body, lim)
	var a childAnswer
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			e = &Error{Reason: ReasonUnreadable, Message: "The PDF cannot be read.", Err: err}
		}
		a.Err = &struct {
			Reason    Reason         `json:"reason"`
			Message   string         `json:"message"`
			Retryable bool           `json:"retryable"`
			Fields    map[string]any `json:"fields,omitempty"`
			Detail    string         `json:"detail,omitempty"`
		}{e.Reason, e.Message, e.Retryable, e.Fields, fmt.Sprint(e.Err)}
	} else {
		a.Doc = doc
	}
	if json.NewEncoder(out).Encode(&a) != nil {
		return 2
	}
	return 0
}

// pdfDocument reads a PDF in a child process (see childEnv). Where no
// child can be started (no executable path), it reads in this process,
// with panics recovered but unbounded recursion still fatal; Isolated
// reports which.
func pdfDocument(ctx context.Context, body []byte, lim ConvertLimits) (*Document, error) {
	exe, err := os.Executable()
	if err != nil || lim.InProcessPDF {
		return pdfInProcess(ctx, body, lim)
	}
	timeout := lim.PDFTimeout
	if timeout <= 0 {
		timeout = DefaultPDFTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	limits, _ := json.Marshal(lim)
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = []string{childEnv + "=pdf", childLimitsEnv + "=" + string(limits), "GOMAXPROCS=1", "GOTRACEBACK=none"}
	cmd.Stdin = bytes.NewReader(body)
	stdout := &capped{max: 8*lim.MaxMarkdownBytes + 1<<20}
	stderr := &capped{max: 4 << 10}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = time.Second
	runErr := cmd.Run()
	if ctx.Err() != nil {
		return nil, &Error{Reason: ReasonTimeout, Retryable: false, Fields: map[string]any{"timeout_ms": timeout.Milliseconds()},
			Message: fmt.Sprintf("Reading the PDF took longer than %s and was stopped.", timeout), Err: ctx.Err()}
	}
	if runErr != nil || stdout.over {
		return nil, &Error{Reason: ReasonUnreadable, Message: "The PDF is malformed and cannot be read (the reader stopped).",
			Err: fmt.Errorf("pdf child: %v (exit %s): %s", runErr, exitCode(cmd), bytes.TrimSpace(stderr.buf.Bytes()))}
	}
	var a childAnswer
	if err := json.Unmarshal(stdout.buf.Bytes(), &a); err != nil {
		return nil, &Error{Reason: ReasonUnreadable, Message: "The PDF cannot be read.", Err: fmt.Errorf("pdf child answer: %w", err)}
	}
	if a.Err != nil {
		return nil, &Error{Reason: a.Err.Reason, Message: a.Err.Message, Retryable: a.Err.Retryable, Fields: a.Err.Fields, Err: errors.New(a.Err.Detail)}
	}
	if a.Doc == nil {
		return nil, &Error{Reason: ReasonUnreadable, Message: "The PDF cannot be read.", Err: errors.New("pdf child: empty answer")}
	}
	return a.Doc, nil
}

func exitCode(cmd *exec.Cmd) string {
	if cmd.ProcessState == nil {
		return "none"
	}
	return strconv.Itoa(cmd.ProcessState.ExitCode())
}

// capped is a buffer that keeps at most max bytes and notes the overflow.
type capped struct {
	buf  bytes.Buffer
	max  int
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.buf.Len(); room < len(p) {
		c.over = true
		if room > 0 {
			c.buf.Write(p[:room])
		}
		return len(p), nil
	}
	return c.buf.Write(p)
}
