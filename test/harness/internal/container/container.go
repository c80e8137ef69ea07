// Package container sets up a container of the harness's pod runner and
// executes its program, as a container runtime's init does: the podinit
// command runs Exec, started by the harness as root with the container's
// Spec. The container gets new mount and UTS namespaces and its pod's
// network namespace, a root file system of its own (a tmpfs with /proc, a
// few devices and the bind mounts), then the user, groups and
// environment of the spec; or, to run a process in a running container
// (exec hooks and probes), it joins that container's namespaces and root.
package container

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Spec is what the harness asks of podinit.
type Spec struct {
	// Join is the process ID of a running container whose namespaces and
	// root the program joins; 0 creates the container (its root, its
	// namespaces, joined to NetNS).
	Join int `json:"join,omitempty"`
	// NetNS is the path of the pod's network namespace.
	NetNS string `json:"netns,omitempty"`
	// Root is an empty folder on which the container's root file system is
	// mounted, in the container's mount namespace only.
	Root     string  `json:"root"`
	Hostname string  `json:"hostname,omitempty"`
	Mounts   []Mount `json:"mounts,omitempty"`
	// ReadOnlyRoot makes the root read-only once the mount points exist.
	ReadOnlyRoot bool `json:"readOnlyRoot,omitempty"`
	// NoNewPrivs forbids gaining privileges (allowPrivilegeEscalation:
	// false).
	NoNewPrivs bool     `json:"noNewPrivs,omitempty"`
	UID        uint32   `json:"uid"`
	GID        uint32   `json:"gid"`
	Groups     []uint32 `json:"groups,omitempty"`
	// Env is the program's whole environment (NAME=value).
	Env []string `json:"env"`
	// Dir is the working folder, inside the container.
	Dir string `json:"dir"`
	// Argv is the program (a path in the container, or a name found in the
	// PATH of Env) and its arguments.
	Argv []string `json:"argv"`
	// Parent is the harness's process ID: the program ends when the harness
	// does (a parent-death signal, set again after the user changes).
	Parent int `json:"parent"`
}

// Mount is a bind mount of a container: the host path Source at Target
// inside the container.
type Mount struct {
	Source   string `json:"source"`
	Target   string `json:"target"`
	ReadOnly bool   `json:"readOnly,omitempty"`
}

// devices are the device nodes a container gets, bind-mounted from the
// host's /dev.
var devices = []string{"null", "zero", "full", "random", "urandom", "tty"}

// Exec sets the container up and replaces the calling process with its
// program; it returns only on failure. Everything happens on one locked
// thread, the one that executes the program: namespaces, root and
// credentials are those of a thread until execve makes it the process.
func Exec(spec Spec) error {
	if len(spec.Argv) == 0 {
		return errors.New("no program to run")
	}
	runtime.LockOSThread()
	if err := enter(spec); err != nil {
		return err
	}
	if err := unix.Chroot(spec.Root); err != nil {
		return fmt.Errorf("chroot: %w", err)
	}
	if err := unix.Chdir(spec.Dir); err != nil {
		return fmt.Errorf("working folder %s: %w", spec.Dir, err)
	}
	program, err := lookPath(spec.Argv[0], spec.Dir, spec.Env)
	if err != nil {
		return err
	}
	if err := become(spec); err != nil {
		return err
	}
	return fmt.Errorf("executing %s: %w", program, unix.Exec(program, spec.Argv, spec.Env))
}

// enter moves the thread into the container's namespaces: new ones with
// its root mounted, or those of the container spec.Join.
func enter(spec Spec) error {
	if spec.Join != 0 {
		// A mount namespace can be joined by a thread of its own file
		// system information only.
		if err := unix.Unshare(unix.CLONE_FS); err != nil {
			return fmt.Errorf("unshare: %w", err)
		}
		for _, ns := range []struct {
			name string
			flag int
		}{{"mnt", unix.CLONE_NEWNS}, {"uts", unix.CLONE_NEWUTS}, {"net", unix.CLONE_NEWNET}} {
			if err := setns("/proc/"+strconv.Itoa(spec.Join)+"/ns/"+ns.name, ns.flag); err != nil {
				return err
			}
		}
		return nil
	}
	if err := unix.Unshare(unix.CLONE_NEWNS | unix.CLONE_NEWUTS | unix.CLONE_FS); err != nil {
		return fmt.Errorf("creating the namespaces: %w", err)
	}
	// Mounts made here stay here.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making the mounts private: %w", err)
	}
	if err := unix.Sethostname([]byte(spec.Hostname)); err != nil {
		return fmt.Errorf("setting the host name: %w", err)
	}
	if err := setns(spec.NetNS, unix.CLONE_NEWNET); err != nil {
		return err
	}
	return buildRoot(spec)
}

// setns moves the thread into the namespace at nsPath.
func setns(nsPath string, flag int) error {
	f, err := os.Open(nsPath)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.Setns(int(f.Fd()), flag); err != nil {
		return fmt.Errorf("entering namespace %s: %w", nsPath, err)
	}
	return nil
}

// buildRoot mounts the container's root: a tmpfs with /proc, the devices
// and the bind mounts, read-only at the end when asked.
func buildRoot(spec Spec) error {
	root := spec.Root
	if err := unix.Mount("tmpfs", root, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=64m"); err != nil {
		return fmt.Errorf("mounting the container's root: %w", err)
	}
	proc := filepath.Join(root, "proc")
	if err := os.Mkdir(proc, 0o555); err != nil {
		return err
	}
	if err := unix.Mount("proc", proc, "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mounting /proc: %w", err)
	}
	for _, d := range devices {
		if err := bind("/dev/"+d, filepath.Join(root, "dev", d), 0); err != nil {
			return fmt.Errorf("/dev/%s: %w", d, err)
		}
	}
	for _, m := range spec.Mounts {
		flags := uintptr(unix.MS_NOSUID | unix.MS_NODEV)
		if m.ReadOnly {
			flags |= unix.MS_RDONLY
		}
		if err := bind(m.Source, filepath.Join(root, m.Target), flags); err != nil {
			return fmt.Errorf("mounting %s: %w", m.Target, err)
		}
	}
	if spec.ReadOnlyRoot {
		if err := unix.Mount("", root, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV, ""); err != nil {
			return fmt.Errorf("making the root read-only: %w", err)
		}
	}
	return nil
}

// bind mounts source at target, creating the mount point (a folder or an
// empty file, like source), then applies flags (MS_RDONLY, MS_NOSUID...).
func bind(source, target string, flags uintptr) error {
	st, err := os.Stat(source)
	if err != nil {
		return fmt.Errorf("the mount's source: %w", err)
	}
	if st.IsDir() {
		err = os.MkdirAll(target, 0o755)
	} else {
		err = touch(target)
	}
	if err != nil {
		return err
	}
	if err := unix.Mount(source, target, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return err
	}
	if flags == 0 {
		return nil
	}
	return unix.Mount("", target, "", unix.MS_BIND|unix.MS_REMOUNT|flags, "")
}

// touch creates an empty file at p (and its folders) unless one exists.
func touch(p string) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_RDONLY, 0o644)
	if err != nil {
		return err
	}
	return f.Close()
}

// lookPath returns the path of the program name in the container, whose
// root is the thread's: a path, or a name found in the PATH of env. It
// must be an executable file.
func lookPath(name, dir string, env []string) (string, error) {
	var candidates []string
	switch {
	case path.IsAbs(name):
		candidates = []string{name}
	case strings.Contains(name, "/"):
		candidates = []string{path.Join(dir, name)}
	default:
		for _, kv := range env {
			if dirs, ok := strings.CutPrefix(kv, "PATH="); ok {
				for _, d := range filepath.SplitList(dirs) {
					candidates = append(candidates, path.Join(d, name))
				}
			}
		}
	}
	for _, c := range candidates {
		if st, err := os.Stat(c); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return c, nil
		}
	}
	return "", fmt.Errorf("%q: %w: no such program in the container (the Files of its Image in the harness's Registry put programs there)", name, fs.ErrNotExist)
}

// become gives the thread the container's groups, group and user (which
// drops a root thread's capabilities unless the user is root), no new
// privileges when asked, and the parent-death signal, which changing the
// user cleared.
func become(spec Spec) error {
	var groups unsafe.Pointer
	if len(spec.Groups) > 0 {
		groups = unsafe.Pointer(&spec.Groups[0])
	}
	// Raw system calls: only this thread matters, and Go's wrappers would
	// change every thread of the process.
	for _, call := range []struct {
		name          string
		trap, a, b, c uintptr
	}{
		{"setgroups", unix.SYS_SETGROUPS, uintptr(len(spec.Groups)), uintptr(groups), 0},
		{"setresgid", unix.SYS_SETRESGID, uintptr(spec.GID), uintptr(spec.GID), uintptr(spec.GID)},
		{"setresuid", unix.SYS_SETRESUID, uintptr(spec.UID), uintptr(spec.UID), uintptr(spec.UID)},
	} {
		if _, _, errno := unix.RawSyscall(call.trap, call.a, call.b, call.c); errno != 0 {
			return fmt.Errorf("%s: %w", call.name, errno)
		}
	}
	if spec.NoNewPrivs {
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			return fmt.Errorf("setting no_new_privs: %w", err)
		}
	}
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0, 0, 0); err != nil {
		return fmt.Errorf("setting the parent-death signal: %w", err)
	}
	if os.Getppid() != spec.Parent {
		return errors.New("the harness has ended")
	}
	return nil
}
