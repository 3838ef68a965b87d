package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/attack"
)

// writeResults writes an attack results file with one row per result type,
// at test indices 0, 1, ….
func writeResults(t *testing.T, path string, types ...attack.ResultType) {
	t.Helper()
	var b strings.Builder
	b.WriteString(strings.Join(attack.Columns, ",") + "\n")
	for i, ty := range types {
		fmt.Fprintf(&b, "a b,a c,0,1,0,3,%s,%d,0.01,2,1,4\n", ty, i)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A keeps 3 of the 4 shared examples, B 2: AA 75 and 50, per-example
// differences 0, +1, +1, −1, so the mean is 0.25 and the paired SE, the
// sample standard deviation over √n, √((3 − 4·0.25²)/3/4).
func TestBenchPaired(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.csv"), filepath.Join(dir, "b.csv")
	writeResults(t, a, attack.Failed, attack.Failed, attack.Failed, attack.Skipped)
	writeResults(t, b, attack.Failed, attack.Successful, attack.Successful, attack.Failed, attack.Failed)
	code, stdout, stderr := runCmd(t, "bench", "paired", "--json", a, b)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	m := map[string]any{}
	if err := json.Unmarshal([]byte(stdout), &m); err != nil {
		t.Fatal(err)
	}
	wantSE := 100 * math.Sqrt((3-4*0.0625)/3/4)
	for k, want := range map[string]float64{"shared": 4, "only_a": 0, "only_b": 1, "aa_a": 75, "aa_b": 50, "difference": 25, "difference_se": wantSE} {
		if v, _ := m[k].(float64); math.Abs(v-want) > 1e-9 {
			t.Errorf("%s = %v, want %v", k, m[k], want)
		}
	}
	code, stdout, _ = runCmd(t, "bench", "paired", a, b)
	if want := fmt.Sprintf("A − B +25.00 ± %.2f (paired SE)", wantSE); code != 0 || !strings.Contains(stdout, want) || !strings.Contains(stdout, "1 only in B") {
		t.Errorf("text output %q lacks %q", stdout, want)
	}
	for _, bad := range [][]string{{a}, {a, filepath.Join(dir, "missing.csv")}} {
		if code, _, stderr := runCmd(t, append([]string{"bench", "paired"}, bad...)...); code == 0 || !strings.Contains(stderr, "bench paired") {
			t.Errorf("%v: exit %d, %q", bad, code, stderr)
		}
	}
}
