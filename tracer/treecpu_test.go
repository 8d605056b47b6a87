package tracer

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// treeCPU returns the CPU seconds (user + system, of the processes and of
// their reaped children) used so far by pid and all its live descendants:
// the worker, bwrap and every program's process.
func treeCPU(pid int) float64 {
	type proc struct {
		ppid int
		cpu  float64
	}
	procs := map[int]proc{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 15 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		var ticks float64
		for _, k := range []int{11, 12, 13, 14} { // utime stime cutime cstime
			v, _ := strconv.ParseFloat(f[k], 64)
			ticks += v
		}
		procs[p] = proc{ppid, ticks / 100}
	}
	var total float64
	in := map[int]bool{pid: true}
	for changed := true; changed; {
		changed = false
		for p, pr := range procs {
			if !in[p] && in[pr.ppid] {
				in[p] = true
				changed = true
			}
		}
	}
	for p := range in {
		total += procs[p].cpu
	}
	return total
}
