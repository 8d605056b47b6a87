package tracer

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Unprivileged users (docs/tracer.md, "Unprivileged users"). When ndb is
// not root, bwrap's own user namespace maps the sandbox uid onto the
// user's: what the sandbox can reach (the folders bound in it, a socket
// in them) it reaches with the user's identity. Where the system gives the
// user subordinate ids (/etc/subuid and /etc/subgid, with the setuid
// helpers newuidmap and newgidmap), the namespace maps them instead: uid 0
// onto the user (bwrap sets the sandbox up with it, as when ndb is root)
// and 1..65536 onto the subordinate range, and the worker drops to 65534
// before it reads a request, exactly as when ndb is root. The kernel then
// sees a uid that is not the user's: the user's files are the
// program's only where "others" may read them.

// subIDs is the user's subordinate uid and gid ranges (start), when the
// system allows mapping them.
type subIDs struct {
	uid, gid  int // the user's own
	uidBase   int // first subordinate uid (65536 of them at least)
	gidBase   int
	newuidmap string
	newgidmap string
}

var (
	subIDsOnce sync.Once
	subIDsRes  *subIDs
)

// subordinateIDs returns the user's subordinate ids, or nil (root, no
// ranges of at least 65536 ids, no helpers, or NDB_NO_SUBUID=1).
func subordinateIDs() *subIDs {
	subIDsOnce.Do(func() {
		if isRoot() || os.Getenv("NDB_NO_SUBUID") == "1" {
			return
		}
		s := &subIDs{uid: os.Getuid(), gid: os.Getgid()}
		var err error
		if s.newuidmap, err = exec.LookPath("newuidmap"); err != nil {
			return
		}
		if s.newgidmap, err = exec.LookPath("newgidmap"); err != nil {
			return
		}
		names := []string{strconv.Itoa(s.uid)}
		if u, err := user.Current(); err == nil {
			names = append(names, u.Username)
		}
		var ok1, ok2 bool
		if s.uidBase, ok1 = subRange("/etc/subuid", names); !ok1 {
			return
		}
		gnames := []string{strconv.Itoa(s.gid)}
		gnames = append(gnames, names[1:]...) // subgid is keyed by user name too
		if s.gidBase, ok2 = subRange("/etc/subgid", gnames); !ok2 {
			return
		}
		subIDsRes = s
	})
	return subIDsRes
}

// subRange finds the first range of at least 65536 ids for one of names
// in a subuid/subgid file (lines NAME:START:COUNT).
func subRange(path string, names []string) (int, bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		p := strings.Split(strings.TrimSpace(sc.Text()), ":")
		if len(p) != 3 {
			continue
		}
		start, e1 := strconv.Atoi(p[1])
		count, e2 := strconv.Atoi(p[2])
		if e1 != nil || e2 != nil || count < 65536 || start < 1 {
			continue
		}
		for _, n := range names {
			if p[0] == n {
				return start, true
			}
		}
	}
	return 0, false
}

// subIDArgs are bwrap's options for a sandbox on subordinate ids: its
// user namespace waits (--userns-block-fd 3) until mapIDs has written the
// maps for the pid bwrap reports (--info-fd 4).
func subIDArgs() []string {
	return []string{"--unshare-user", "--uid", "0", "--gid", "0",
		"--userns-block-fd", "3", "--info-fd", "4"}
}

// mapIDs prepares cmd (a bwrap command with subIDArgs) and, in the
// background, maps the subordinate ids into its user namespace once it
// starts; if bwrap never reports (never started, or failed), it gives up
// after a minute. The pipes' ends are closed when it is done.
func (s *subIDs) mapIDs(cmd *exec.Cmd) error {
	blockR, blockW, err := os.Pipe()
	if err != nil {
		return err
	}
	infoR, infoW, err := os.Pipe()
	if err != nil {
		blockR.Close()
		blockW.Close()
		return err
	}
	cmd.ExtraFiles = []*os.File{blockR, infoW} // fds 3 and 4
	go func() {
		defer blockR.Close()
		defer infoW.Close()
		defer infoR.Close()
		defer blockW.Close()
		infoR.SetReadDeadline(time.Now().Add(time.Minute))
		var info struct {
			ChildPID int `json:"child-pid"`
		}
		if err := json.NewDecoder(infoR).Decode(&info); err != nil || info.ChildPID <= 0 {
			return // bwrap did not start: it reports its own error
		}
		pid := strconv.Itoa(info.ChildPID)
		for _, m := range [][]string{
			{s.newuidmap, pid, "0", strconv.Itoa(s.uid), "1", "1", strconv.Itoa(s.uidBase), "65536"},
			{s.newgidmap, pid, "0", strconv.Itoa(s.gid), "1", "1", strconv.Itoa(s.gidBase), "65536"},
		} {
			if out, err := exec.Command(m[0], m[1:]...).CombinedOutput(); err != nil {
				// unmapped, the sandbox cannot start: bwrap fails and says so
				fmt.Fprintf(os.Stderr, "ndb: %s: %v: %s\n", m[0], err, strings.TrimSpace(string(out)))
				return
			}
		}
		blockW.Write([]byte{1})
	}()
	return nil
}
