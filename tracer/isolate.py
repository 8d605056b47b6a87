# ndb's kernel isolation helpers (docs/tracer.md, "Limits and safety").
# Embedded in the ndb binary (tracer/isolate.py, tracer.IsolationPython): it
# heads the tracer's worker script (tracer.py follows it in the same -c
# program) and is imported by the eval scorer (eval/scorer.py). No side
# effects on import.

import os
import signal
import sys


def _libc():
    try:
        import ctypes
        return ctypes.CDLL(None, use_errno=True)
    except Exception:
        return None


# ---------------------------------------------------------------- kernel isolation
# Per program (docs/tracer.md, "Limits and safety"): the program's process
# is made in new user, PID, mount, IPC and UTS namespaces (and network ones
# without bwrap, see _NS_FLAGS), PID 1 of its PID namespace, by one clone
# (_raw_clone) or by fork + unshare (_enter_namespaces) + fork. It then mounts
# its own /proc and scratch tmpfs, makes the shared mounts read-only, closes
# every descriptor but its record pipe (_isolate_program), drops its
# capabilities (_drop_caps) and installs the seccomp filter
# (_install_seccomp) before the program runs.

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
PROGRAM_NS = CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_RDONLY = 2, 4, 8, 1
MS_REC, MS_PRIVATE = 0x4000, 0x40000
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP = 1, 4, 38, 22
SECCOMP_MODE_FILTER = 2

_SECCOMP = b""  # the filter from ndb (argv[2], hex), see seccomp.go
_PROGRAM_NS = [True]  # cleared when the namespaces cannot be made here
# The namespaces each program gets. Under bwrap the worker already has a
# network namespace of its own, empty (loopback down) and owned by a user
# namespace no program has capabilities in; programs run one at a time and
# all their processes die with them, so a network namespace per program
# would isolate nothing more, and it is the most expensive one to make
# (~3 ms of CPU here, and as much again to tear down): _enter_sandbox drops it.
_NS_FLAGS = [PROGRAM_NS]


def _write_file(path, text):
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _enter_namespaces(libc):
    """In the intermediate child: new namespaces for the program (the PID
    namespace applies to the next fork). Maps only our own uid and gid."""
    if libc is None or not _PROGRAM_NS[0]:
        return False
    uid, gid = os.getuid(), os.getgid()
    if libc.unshare(_NS_FLAGS[0]) != 0:
        return False
    # /proc/self of a non-dumpable process (the worker is one) belongs to
    # root: become dumpable to write our own maps. Nothing outside this
    # namespace can see us.
    libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)
    _write_file("/proc/self/setgroups", "deny")
    _write_file("/proc/self/uid_map", "%d %d 1" % (uid, uid))
    _write_file("/proc/self/gid_map", "%d %d 1" % (gid, gid))
    return True


# One-step clone (the fast path): the worker creates the program's process
# directly in its new namespaces with the clone system call, as os.fork
# would (PyOS_BeforeFork / PyOS_AfterFork_*), instead of fork + unshare +
# fork (one fork less: a fork of the warm worker is its largest cost). The C
# library's fork also stores the child's thread id in its thread descriptor;
# CLONE_CHILD_SETTID does it here, at the offset found by _probe_clone,
# which checks in a throwaway child that raise() and threads work. Without
# it, the two-step path runs.
_CLONE = [None]  # (pydll, syscall number, tid address, arm64 order)
SYS_CLONE = {"x86_64": 56, "aarch64": 220}
SYS_GETTID = {"x86_64": 186, "aarch64": 178}
CLONE_CHILD_SETTID = 0x01000000


def _raw_clone(flags):
    import ctypes
    api, nr, tid_addr, arm = _CLONE[0]
    api.PyOS_BeforeFork()
    fl = ctypes.c_ulong(flags | CLONE_CHILD_SETTID | signal.SIGCHLD)
    z = ctypes.c_void_p(0)
    t = ctypes.c_void_p(tid_addr)
    if arm:
        pid = api.syscall(ctypes.c_long(nr), fl, z, z, z, t)
    else:
        pid = api.syscall(ctypes.c_long(nr), fl, z, z, t, z)
    if pid == 0:
        api.PyOS_AfterFork_Child()
    else:
        api.PyOS_AfterFork_Parent()
    if pid < 0:
        raise OSError(ctypes.get_errno(), "clone failed")
    return pid


def _own_maps(libc):
    """In a new user namespace: map our own uid and gid (only those)."""
    uid, gid = os.getuid(), os.getgid()
    libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)  # /proc/self of a non-dumpable process is root's
    _write_file("/proc/self/setgroups", "deny")
    _write_file("/proc/self/uid_map", "%d %d 1" % (uid, uid))
    _write_file("/proc/self/gid_map", "%d %d 1" % (gid, gid))


def _probe_clone(libc):
    """Set _CLONE when the one-step clone works here (see above)."""
    if libc is None or os.environ.get("NDB_NO_FAST_CLONE") == "1":
        return
    try:
        import ctypes
        import platform
        mach = platform.machine()
        if mach not in SYS_CLONE or sys.implementation.name != "cpython":
            return
        api = ctypes.PyDLL(None, use_errno=True)
        api.syscall.restype = ctypes.c_long
        api.PyOS_BeforeFork.restype = None
        api.PyOS_AfterFork_Child.restype = None
        api.PyOS_AfterFork_Parent.restype = None
        libc.pthread_self.restype = ctypes.c_void_p
        self_ = libc.pthread_self()
        tid = libc.syscall(SYS_GETTID[mach])
        offs = [o for o in range(0, 0x800, 4) if ctypes.c_int.from_address(self_ + o).value == tid]
    except Exception:
        return
    for off in offs:
        _CLONE[0] = (api, SYS_CLONE[mach], self_ + off, mach == "aarch64")
        try:
            pid = _raw_clone(_NS_FLAGS[0])
        except Exception:
            _CLONE[0] = None
            return
        if pid == 0:
            ok = False
            try:
                _own_maps(libc)
                got = []
                signal.signal(signal.SIGUSR2, lambda n, f: got.append(n))
                signal.raise_signal(signal.SIGUSR2)
                import threading
                th = threading.Thread(target=got.append, args=(0,))
                th.start()
                th.join()
                ok = (os.getpid() == 1 and ctypes.c_int.from_address(self_ + off).value == 1
                      and libc.pthread_kill(ctypes.c_void_p(self_), 0) == 0 and got == [signal.SIGUSR2, 0])
            except BaseException:
                ok = False
            os._exit(0 if ok else 1)
        _, st = os.waitpid(pid, 0)
        if os.WIFEXITED(st) and os.WEXITSTATUS(st) == 0:
            return
        _CLONE[0] = None


def _mount(libc, src, target, fstype, flags, data):
    import ctypes
    return libc.mount(src, os.fsencode(target), fstype, ctypes.c_ulong(flags),
                      None if data is None else ctypes.c_char_p(data)) == 0


_WRITABLE_MOUNTS = ["/", "/tmp", "/dev", "/dev/shm", "/dev/mqueue"]
MS_REMOUNT, MS_BIND, MS_NOATIME, MS_NODIRATIME, MS_RELATIME = 32, 4096, 1024, 2048, 1 << 21


def _remount_ro(libc, path):
    """Make the mount at path read-only in this mount namespace, keeping its
    other flags (a mount inherited from the worker's namespace is locked:
    its flags may only be tightened)."""
    try:
        st = os.statvfs(path)
    except OSError:
        return False
    f = st.f_flag
    if f & os.ST_RDONLY:
        return True
    flags = MS_REMOUNT | MS_BIND | MS_RDONLY
    for st_flag, ms_flag in ((os.ST_NOSUID, MS_NOSUID), (os.ST_NODEV, MS_NODEV), (os.ST_NOEXEC, MS_NOEXEC),
                             (os.ST_NOATIME, MS_NOATIME), (os.ST_NODIRATIME, MS_NODIRATIME),
                             (os.ST_RELATIME, MS_RELATIME)):
        if f & st_flag:
            flags |= ms_flag
    return _mount(libc, None, path, None, flags, None)


def _isolate_program(libc, scratch, wfd, scratch_bytes=128 << 20, cfd=None):
    """In the program's process, PID 1 of its namespaces: own /proc, a
    fresh tmpfs of scratch_bytes as scratch directory, no descriptors but
    wfd (records out), cfd (a live run's requests in) and 0-2. Returns
    (proc, tmpfs)."""
    proc = tmpfs = False
    # No MS_PRIVATE pass over the copied mounts: a mount namespace made
    # together with a new user namespace is less privileged, and the kernel
    # has already turned every shared mount in it into a slave, so nothing
    # mounted here propagates back to the worker.
    if _mount(libc, b"proc", "/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None):
        proc = True
    else:
        # Never show the worker's /proc: an empty read-only one instead.
        _mount(libc, b"tmpfs", "/proc", b"tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY, b"size=4k")
    # What the worker's uid may write (its /tmp, /dev, the root) is shared by
    # every program: read-only here, so that nothing a program writes
    # outside its own scratch tmpfs reaches the next one.
    for m in _WRITABLE_MOUNTS:
        _remount_ro(libc, m)
    opts = ("size=%d,mode=0700" % scratch_bytes).encode()
    tmpfs = _mount(libc, b"tmpfs", scratch, b"tmpfs", MS_NOSUID | MS_NODEV, opts)
    low = 3
    for fd in sorted({wfd} | ({cfd} if cfd is not None else set())):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, 1 << 16)
    return proc, tmpfs


_CAPS = []  # capset's header and zeroed data, built once before any fork


def _drop_caps(libc):
    """Clear the capabilities this process holds in its own user namespace
    (the creator of a namespace has all of them there)."""
    if not _CAPS:
        _prepare_caps()
    return libc.capset(_CAPS[0], _CAPS[1]) == 0


def _prepare_caps():
    import ctypes
    hdr = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    data = (ctypes.c_uint32 * 6)()
    _CAPS[:] = [hdr, data]


_FPROG = []  # the sock_fprog (and its buffer) built once, before any fork


def _prepare_seccomp():
    import ctypes

    class _Fprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
    buf = ctypes.create_string_buffer(_SECCOMP, len(_SECCOMP))
    _FPROG[:] = [_Fprog(len(_SECCOMP) // 8, ctypes.addressof(buf)), buf]


def _install_seccomp(libc):
    """no_new_privs, then the seccomp filter. True when installed."""
    if libc is None:
        return False
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or not _SECCOMP:
        return False
    import ctypes
    if not _FPROG:
        _prepare_seccomp()
    return libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(_FPROG[0]), 0, 0) == 0


def _enter_sandbox(libc):
    """Worker start under ndb's bwrap sandbox (NDB_SANDBOX set by Go).
    "root": bwrap ran as root without a user namespace and left this process
    CAP_SYS_ADMIN, CAP_SETUID and CAP_SETGID: mount a plain /proc of this PID
    namespace (bwrap's --proc puts read-only binds over parts of it, which
    would stop the programs' own namespaces from mounting theirs), then drop
    to the sandbox uid and gid, which clears every capability. "user": bwrap
    already runs this process as the sandbox uid in a user namespace.
    Either way the worker becomes non-dumpable: its /proc entries (its
    descriptors, memory, environment) are closed to its own uid."""
    mode = os.environ.pop("NDB_SANDBOX", "")
    uid = int(os.environ.pop("NDB_SANDBOX_UID", "65534"))
    if mode == "root":
        if libc is None or not _mount(libc, b"proc", "/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None):
            raise OSError("ndb sandbox: cannot mount /proc")
    if mode in ("root", "sub"):
        # "sub": an ordinary user's subordinate ids (tracer/subuid.go):
        # uid 0 of bwrap's user namespace is the user, 65534 a subordinate
        # uid; bwrap mounted /proc (a user namespace may not mount a fresh
        # one where none is visible)
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    if libc is not None:
        libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    if mode:
        _NS_FLAGS[0] = PROGRAM_NS & ~CLONE_NEWNET
    return mode




def _set_seccomp(hexstr):
    """The filter from ndb (hex of struct sock_filter[], see seccomp.go)."""
    global _SECCOMP
    _SECCOMP = bytes.fromhex(hexstr) if hexstr else b""
    if _SECCOMP:
        _prepare_seccomp()
    _prepare_caps()
