package tracer

import (
	"encoding/binary"
	"fmt"
	"runtime"
)

// A classic BPF program for seccomp (SECCOMP_MODE_FILTER), built here and
// handed to the worker as bytes: each child installs it (after
// PR_SET_NO_NEW_PRIVS) right before it runs the program. It denies, with
// EPERM, the system calls a program could use to leave or inspect its
// sandbox or the kernel, and kills a process that uses another system call
// ABI (x32, i386 on x86-64). See docs/tracer.md, "Limits and safety".

// bpfInsn is struct sock_filter.
type bpfInsn struct {
	code   uint16
	jt, jf uint8
	k      uint32
}

const (
	bpfLdWAbs  = 0x20 // BPF_LD | BPF_W | BPF_ABS
	bpfJeqK    = 0x15 // BPF_JMP | BPF_JEQ | BPF_K
	bpfJgeK    = 0x35 // BPF_JMP | BPF_JGE | BPF_K
	bpfJsetK   = 0x45 // BPF_JMP | BPF_JSET | BPF_K
	bpfRetK    = 0x06 // BPF_RET | BPF_K
	secAllow   = 0x7fff0000
	secErrno   = 0x00050000
	secKillPro = 0x80000000
	ePerm      = 1
	eNoSys     = 38

	auditArchX8664   = 0xc000003e
	auditArchAArch64 = 0xc00000b7

	// clone flags that create namespaces (CLONE_NEWNS, NEWCGROUP, NEWUTS,
	// NEWIPC, NEWUSER, NEWPID, NEWNET, NEWTIME)
	cloneNSFlags = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000 | 0x00000080
)

// deniedSyscalls names each denied call, for documentation and tests.
var deniedSyscalls = []string{
	"unshare", "setns", "mount", "umount2", "pivot_root", "chroot",
	"ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
	"bpf", "perf_event_open", "userfaultfd",
	"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
	"keyctl", "add_key", "request_key",
	"open_by_handle_at", "name_to_handle_at",
	"swapon", "swapoff", "reboot", "acct", "quotactl", "quotactl_fd", "syslog",
	"open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
	"io_uring_setup", "io_uring_enter", "io_uring_register",
	"iopl", "ioperm", "uselib", "_sysctl", "lookup_dcookie", "vhangup", "nfsservctl",
}

// System call numbers per architecture (absent: the call does not exist there).
var syscallNumbers = map[string]map[string]uint32{
	"amd64": {
		"unshare": 272, "setns": 308, "mount": 165, "umount2": 166, "pivot_root": 155, "chroot": 161,
		"ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311, "kcmp": 312, "pidfd_getfd": 438,
		"bpf": 321, "perf_event_open": 298, "userfaultfd": 323,
		"kexec_load": 246, "kexec_file_load": 320, "init_module": 175, "finit_module": 313, "delete_module": 176,
		"keyctl": 250, "add_key": 248, "request_key": 249,
		"open_by_handle_at": 304, "name_to_handle_at": 303,
		"swapon": 167, "swapoff": 168, "reboot": 169, "acct": 163, "quotactl": 179, "quotactl_fd": 443, "syslog": 103,
		"open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433, "mount_setattr": 442,
		"io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
		"iopl": 172, "ioperm": 173, "uselib": 134, "_sysctl": 156, "lookup_dcookie": 212, "vhangup": 153, "nfsservctl": 180,
		"clone": 56, "clone3": 435,
	},
	"arm64": {
		"unshare": 97, "setns": 268, "mount": 40, "umount2": 39, "pivot_root": 41, "chroot": 51,
		"ptrace": 117, "process_vm_readv": 270, "process_vm_writev": 271, "kcmp": 272, "pidfd_getfd": 438,
		"bpf": 280, "perf_event_open": 241, "userfaultfd": 282,
		"kexec_load": 104, "kexec_file_load": 294, "init_module": 105, "finit_module": 273, "delete_module": 106,
		"keyctl": 219, "add_key": 217, "request_key": 218,
		"open_by_handle_at": 265, "name_to_handle_at": 264,
		"swapon": 224, "swapoff": 225, "reboot": 142, "acct": 89, "quotactl": 60, "quotactl_fd": 443, "syslog": 116,
		"open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433, "mount_setattr": 442,
		"io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
		"lookup_dcookie": 18, "vhangup": 58,
		"clone": 220, "clone3": 435,
	},
}

// seccompFilter returns the filter for arch (a GOARCH name) as the bytes of
// a struct sock_filter array in native (little-endian) order.
func seccompFilter(arch string) ([]byte, error) {
	nums, ok := syscallNumbers[arch]
	if !ok {
		return nil, fmt.Errorf("tracer: no seccomp filter for %s", arch)
	}
	var auditArch uint32 = auditArchX8664
	if arch == "arm64" {
		auditArch = auditArchAArch64
	}
	// Jumps are to labels resolved below: "deny", "nosys", "kill", "allow".
	type insn struct {
		bpfInsn
		jt, jf string
	}
	var prog []insn
	add := func(code uint16, k uint32, jt, jf string) {
		prog = append(prog, insn{bpfInsn: bpfInsn{code: code, k: k}, jt: jt, jf: jf})
	}
	add(bpfLdWAbs, 4, "", "") // seccomp_data.arch
	add(bpfJeqK, auditArch, "", "kill")
	add(bpfLdWAbs, 0, "", "") // seccomp_data.nr
	if arch == "amd64" {
		add(bpfJgeK, 0x40000000, "kill", "") // x32 ABI
	}
	for _, name := range deniedSyscalls {
		if nr, ok := nums[name]; ok {
			add(bpfJeqK, nr, "deny", "")
		}
	}
	// clone3 passes its flags in memory, out of the filter's sight: ENOSYS
	// makes the C library fall back to clone, whose flags are checked.
	add(bpfJeqK, nums["clone3"], "nosys", "")
	add(bpfJeqK, nums["clone"], "", "allow")
	add(bpfLdWAbs, 16, "", "") // low 32 bits of args[0] (little-endian)
	add(bpfJsetK, cloneNSFlags, "deny", "allow")
	labels := map[string]int{}
	labels["allow"] = len(prog)
	add(bpfRetK, secAllow, "", "")
	labels["deny"] = len(prog)
	add(bpfRetK, secErrno|ePerm, "", "")
	labels["nosys"] = len(prog)
	add(bpfRetK, secErrno|eNoSys, "", "")
	labels["kill"] = len(prog)
	add(bpfRetK, secKillPro, "", "")
	out := make([]byte, 0, 8*len(prog))
	for i, in := range prog {
		for _, j := range []struct {
			label string
			dst   *uint8
		}{{in.jt, &in.bpfInsn.jt}, {in.jf, &in.bpfInsn.jf}} {
			if j.label == "" {
				continue
			}
			off := labels[j.label] - i - 1
			if off < 0 || off > 255 {
				return nil, fmt.Errorf("tracer: seccomp jump out of range")
			}
			*j.dst = uint8(off)
		}
		out = binary.LittleEndian.AppendUint16(out, in.code)
		out = append(out, in.bpfInsn.jt, in.bpfInsn.jf)
		out = binary.LittleEndian.AppendUint32(out, in.k)
	}
	return out, nil
}

// hostSeccompFilter is seccompFilter for the machine ndb runs on.
func hostSeccompFilter() ([]byte, error) { return seccompFilter(runtime.GOARCH) }
