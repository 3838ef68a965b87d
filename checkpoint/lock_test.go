package checkpoint

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestLockDir(t *testing.T) {
	dir := t.TempDir()
	unlock, err := LockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	// A second claim while the first holds it fails, naming the holder.
	if _, err := LockDir(dir); err == nil || !strings.Contains(err.Error(), strconv.Itoa(os.Getpid())) {
		t.Fatalf("second lock: %v", err)
	}
	unlock()
	unlock2, err := LockDir(dir)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	unlock2()
	// A lock left by a process that has exited is taken over.
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Skipf("cannot run a child process: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".lock"), []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	unlock3, err := LockDir(dir)
	if err != nil {
		if processAlive(cmd.Process.Pid) {
			t.Skipf("pid %d was reused or cannot be checked here", cmd.Process.Pid)
		}
		t.Fatalf("stale lock not taken over: %v", err)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, ".lock"))
	if strings.TrimSpace(string(raw)) != strconv.Itoa(os.Getpid()) {
		t.Errorf("lock holds %q, want this process", raw)
	}
	unlock3()
}
