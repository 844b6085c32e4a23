package bench

import (
	"os"
	"path/filepath"
	"testing"
)

// fakeProc writes a fake /proc: the machine line and each process's stat.
func fakeProc(t *testing.T, dir string, machine string, procs map[string]string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(machine), 0o644); err != nil {
		t.Fatal(err)
	}
	for pid, stat := range procs {
		if err := os.MkdirAll(filepath.Join(dir, pid), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, pid, "stat"), []byte(stat), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// stat is a /proc/<pid>/stat line with the given user, system and
// reaped children's ticks.
func stat(pid, comm string, utime, stime, cutime, cstime string) string {
	return pid + " (" + comm + ") S 1 1 1 0 -1 4194304 100 0 0 0 " + utime + " " + stime + " " + cutime + " " + cstime + " 20 0 1 0 100 1000 10\n"
}

func TestCPUPerOperationIsEachPartysTicksOverTheOperations(t *testing.T) {
	dir := t.TempDir()
	m := &CPUMeter{Proc: dir}
	fakeProc(t, dir, "cpu  100 0 100 800 0 0 0 0 0 0\ncpu0 1 2 3\n", map[string]string{
		"self": stat("7", "oficina", "10", "10", "0", "0"),
		"42":   stat("42", "postgres", "50", "0", "0", "0"),
		"43":   stat("43", "post (gres)", "70", "0", "0", "0"), // a name with a space and parentheses: not postgres
		"99":   stat("99", "redis-server", "500", "0", "0", "0"),
	})
	a, err := m.Read()
	if err != nil {
		t.Fatal(err)
	}
	// 1 s later on 2 cores: 150 ticks busy of 200; PostgreSQL spent 100
	// (one backend ran 40, the postmaster reaped a backend that ran 60),
	// this process 20.
	fakeProc(t, dir, "cpu  200 0 150 850 0 0 0 0 0 0\n", map[string]string{
		"self": stat("7", "oficina", "25", "15", "0", "0"),
		"42":   stat("42", "postgres", "90", "0", "60", "0"),
		"99":   stat("99", "redis-server", "900", "0", "0", "0"),
	})
	b, err := m.Read()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range b.PerOp(a, "x", 10) {
		got[f.Name] = f.Value
	}
	want := map[string]float64{"x_cpu_ms_postgres": 100, "x_cpu_ms_bench": 20, "x_cpu_ms_api": 0, "x_cpu_ms_dispatch": 0, "x_machine_busy": 0.75}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s = %v (present %v), want %v", k, g, ok, v)
		}
	}
}
