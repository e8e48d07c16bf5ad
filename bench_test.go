package loopbreaker

import (
	"fmt"
	"strings"
	"testing"
)

// The hot path of a healthy loop: Check and RecordSuccess on a closed
// circuit.
func BenchmarkCheckRecordSuccess(b *testing.B) {
	cb, err := New(DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if !cb.Check().Allow {
			b.Fatal("refused")
		}
		cb.RecordSuccess()
	}
}

func BenchmarkCheckRecordSuccessParallel(b *testing.B) {
	cb, err := New(DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			cb.Check()
			cb.RecordSuccess()
		}
	})
}

// stackTrace returns a Node-style error with frames, about size bytes.
func stackTrace(size int) string {
	var sb strings.Builder
	sb.WriteString("TypeError: Cannot read properties of undefined (reading 'id')\n")
	for i := 0; sb.Len() < size; i++ {
		sb.WriteString("    at UserController.show (/home/dev/app/src/controllers/user.ts:42:15)\n")
	}
	return sb.String()[:size]
}

func BenchmarkRecordFailure1KB(b *testing.B) {
	cb, err := New(Config{Failures: FailureRules{MaxConsecutive: -1, MaxSameError: -1}})
	if err != nil {
		b.Fatal(err)
	}
	msg := stackTrace(1 << 10)
	b.ReportAllocs()
	b.SetBytes(int64(len(msg)))
	for i := 0; i < b.N; i++ {
		cb.RecordFailure(msg)
	}
}

// goPanic returns a Go panic with a goroutine trace, about size bytes.
func goPanic(size int) string {
	var sb strings.Builder
	sb.WriteString("panic: runtime error: invalid memory address or nil pointer dereference\n[signal SIGSEGV: segmentation violation code=0x1 addr=0x18 pc=0x4a2f1c]\n\ngoroutine 1 [running]:\n")
	for sb.Len() < size {
		sb.WriteString("main.(*Server).handle(0xc000126000, {0x5b3e60, 0xc00012a0f0})\n\t/tmp/go-build2281/app/server.go:117 +0x1bc\n")
	}
	return sb.String()[:size]
}

// Fingerprint as users call it, which also renders the 8-character string
// (the engine alone: BenchmarkFingerprint2KB in internal/errtext).
func BenchmarkFingerprintString2KB(b *testing.B) {
	msg := goPanic(2 << 10)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		Fingerprint(msg)
	}
}

// A host that reports everything: progress, an approach label, the kind
// of work, a plan and its calls, with the autonomous preset's signals all
// on, so that every rule is evaluated on every iteration.
func BenchmarkCheckRecordMeasured(b *testing.B) {
	cfg, err := Preset("autonomous")
	if err != nil {
		b.Fatal(err)
	}
	cfg.Spend.MaxCallsPerHour = -1 // the budget's clock reads are measured apart
	cb, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	it := Iteration{
		Progress: &Progress{FilesChanged: 2, TestsPassing: 40, OutputLength: 1200},
		Approach: "split the handler",
		Work:     WorkImplementation,
		Plan:     &Plan{Done: 3, Remaining: 4},
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if !cb.Check().Allow {
			b.Fatal("refused")
		}
		cb.Record(it)
	}
}

// The call budget reads the clock on every Check and Record.
func BenchmarkCheckRecordWithCallBudget(b *testing.B) {
	cb, err := New(Config{Spend: SpendRules{MaxCallsPerHour: 1 << 30}})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if !cb.Check().Allow {
			b.Fatal("refused")
		}
		cb.RecordSuccess()
	}
}

// A healthy loop that names its tasks, ten iterations each: the task's
// name is compared, not copied, while it stays the same.
func BenchmarkCheckRecordSuccessOnTasks(b *testing.B) {
	cb, err := New(DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	tasks := []string{"05-01 add login", "05-02 add logout"}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if !cb.Check().Allow {
			b.Fatal("refused")
		}
		cb.Record(Iteration{Task: tasks[i/10%2]})
	}
}

// A loop whose task has gone past MaxTaskIterations: every decision
// carries the long-task warning.
func BenchmarkCheckWithAWarning(b *testing.B) {
	cb, err := New(DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	for range DefaultConfig().Progress.MaxTaskIterations + 1 {
		cb.Record(Iteration{Task: "05-01 add login"})
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if len(cb.Check().Warnings) != 1 {
			b.Fatal("no warning")
		}
	}
}

// Failures whose text changes every time (a line number): the latest
// sample of the fingerprint is copied, at most 200 runes.
func BenchmarkRecordFailureChangingText(b *testing.B) {
	cb, err := New(Config{Failures: FailureRules{MaxConsecutive: -1, MaxSameError: -1}})
	if err != nil {
		b.Fatal(err)
	}
	msg := stackTrace(1 << 10)
	msgs := []string{msg, strings.Replace(msg, ":42:15", ":43:15", 1)}
	if fingerprint32(msgs[0]) != fingerprint32(msgs[1]) || sampleOf(msgs[0]) == sampleOf(msgs[1]) {
		b.Fatal("not one error with two texts")
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		cb.RecordFailure(msgs[i%2])
	}
}

// BenchmarkCheckActionRecordStep is a tool-calling host's work per call
// under tool-steps: CheckAction before the call, Record of its 1 KB
// result after it, with the step window full (every step signal judging
// 30 steps).
func BenchmarkCheckActionRecordStep(b *testing.B) {
	cfg, _ := Preset("tool-steps")
	cb, _ := New(cfg)
	result := strings.Repeat("main.go:12: func main() { fmt.Println(\"hello\") }\n", 20)
	actions := make([]Action, 64)
	for i := range actions {
		actions[i] = Action{Tool: "read_file", Args: fmt.Sprintf(`{"path":"pkg/file%d.go","limit":200}`, i)}
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		a := actions[i%len(actions)]
		if d := cb.CheckAction(a); !d.Allow {
			b.Fatal(d.Reason)
		}
		cb.Record(Iteration{Action: &a, Observation: result})
	}
}
