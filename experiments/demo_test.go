package experiments

import "testing"

// TestDemo: on the generated task, where a synonym seen a few times only
// fools a standard model, FTML keeps most of its accuracy under PWWS and
// standard training loses much of it, for both architectures.
func TestDemo(t *testing.T) {
	task, rows, err := Demo(DemoOptions{Seed: 1, AttackN: 50})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 || task.AttackN != 50 || task.Train != 3000 {
		t.Fatalf("task %+v, %d rows", task, len(rows))
	}
	byModel := map[[2]string]DemoRow{}
	for _, r := range rows {
		byModel[[2]string{r.Arch, r.Defense}] = r
		if r.TestAcc < 0.9 || r.UnderAttack.N != 50 || r.ModelDir != "" {
			t.Errorf("%s/%s: test accuracy %.3f, %d attacked, dir %q", r.Arch, r.Defense, r.TestAcc, r.UnderAttack.N, r.ModelDir)
		}
	}
	for _, arch := range []string{"cnn", "bilstm"} {
		std, ftml := byModel[[2]string{arch, "standard"}], byModel[[2]string{arch, "ftml"}]
		if !(ftml.UnderAttack.AccuracyUnderAttack > std.UnderAttack.AccuracyUnderAttack+0.2) {
			t.Errorf("%s: accuracy under attack FTML %.2f, standard %.2f: want FTML well above", arch,
				ftml.UnderAttack.AccuracyUnderAttack, std.UnderAttack.AccuracyUnderAttack)
		}
	}
}
