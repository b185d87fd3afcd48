// Package pgtest starts a throwaway PostgreSQL server for tests: its own cluster (initdb) in a
// temporary folder, listening on a Unix socket there only, never a system one. A test package
// calls Main from its TestMain and Database from each test that needs a database: the server is
// started on the first call, shared by the package's tests, and removed when they end.
//
// Without PostgreSQL's binaries, Database skips the test, saying how to get them, unless the
// environment says this is CI or the test command (CI or BATON_REQUIRE_POSTGRES set), where it
// fails. Running as root, the server runs as the user nobody: PostgreSQL refuses to run as root.
// Baton's own, not API.
package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Cluster is a running throwaway PostgreSQL server.
type Cluster struct {
	dir  string // the temporary folder: data/, the socket, the server's log
	cmd  *exec.Cmd
	exit chan error // the server process's end

	run func() error // starts the server on dir, and waits until it takes connections

	mu    sync.Mutex
	admin *pgx.Conn // to the postgres database, for CREATE DATABASE
	n     int       // databases made
}

// Options are how Start sets the server up.
type Options struct {
	// Durable keeps PostgreSQL's defaults of flushing each commit to disk; tests turn them off,
	// which makes them faster and loses nothing a test needs. Benchmarks keep them.
	Durable bool
}

// user is the database user the cluster is made for.
const dbUser = "baton"

// Bin returns the folder of PostgreSQL's server binaries (initdb, postgres): $BATON_PG_BIN, the
// newest /usr/lib/postgresql/N/bin (Debian's), or the folder of initdb on the PATH.
func Bin() (string, error) {
	if dir := os.Getenv("BATON_PG_BIN"); dir != "" {
		return dir, nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int { return version(b) - version(a) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", errors.New("no PostgreSQL server binaries (initdb, postgres): install Debian's postgresql package" +
		" (./test.sh does), or set BATON_PG_BIN to their folder")
}

// version is N of /usr/lib/postgresql/N/bin.
func version(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

// Start makes a cluster in a new temporary folder and starts its server, waiting until it takes
// connections. Stop ends it and removes the folder.
func Start(opts Options) (c *Cluster, err error) {
	bin, err := Bin()
	if err != nil {
		return nil, err
	}
	base := "" // the system's temporary folder
	if os.Geteuid() == 0 {
		base = "/tmp" // the user nobody must reach the folder, which $TMPDIR under root's home may not let it
	}
	dir, err := os.MkdirTemp(base, "baton-pg-")
	if err != nil {
		return nil, err
	}
	c = &Cluster{dir: dir, exit: make(chan error, 1)}
	defer func() {
		if err != nil {
			c.Stop()
		}
	}()
	cred, err := serverUser(dir)
	if err != nil {
		return nil, err
	}
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", filepath.Join(dir, "data"), "-U", dbUser, "-A", "trust",
		"-E", "UTF8", "--locale=C.UTF-8", "--no-sync")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb: %w\n%s", err, out)
	}
	args := []string{"-D", filepath.Join(dir, "data"), "-k", dir, "-c", "listen_addresses=", "-c", "max_connections=100"}
	if !opts.Durable {
		args = append(args, "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	}
	c.run = func() error {
		log, err := os.OpenFile(filepath.Join(dir, "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		defer log.Close()
		os.Chown(log.Name(), int(uidOf(cred)), int(gidOf(cred)))
		c.cmd = exec.Command(filepath.Join(bin, "postgres"), args...)
		c.cmd.Stdout, c.cmd.Stderr = log, log
		c.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true}
		if err := c.cmd.Start(); err != nil {
			return fmt.Errorf("start postgres: %w", err)
		}
		go func() { c.exit <- c.cmd.Wait() }()
		if err := c.connect(); err != nil {
			data, _ := os.ReadFile(log.Name())
			return fmt.Errorf("%w\nthe server's log:\n%s", err, data)
		}
		return nil
	}
	if err := c.run(); err != nil {
		return nil, err
	}
	return c, nil
}

// Restart stops the server (a fast shutdown, as `pg_ctl restart -m fast`: clients are cut off)
// and starts it again on the same data and socket, waiting until it takes connections; for
// tests and benchmarks of what Baton does while its database restarts.
func (c *Cluster) Restart() error {
	if err := c.Down(); err != nil {
		return err
	}
	return c.Up()
}

// Down stops the server (a fast shutdown: clients are cut off), keeping its data, until Up.
func (c *Cluster) Down() error {
	c.admin.Close(context.Background())
	c.admin = nil
	c.cmd.Process.Signal(syscall.SIGINT)
	if err := <-c.exit; err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			return err
		}
	}
	return nil
}

// Freeze stops every process of the server (SIGSTOP to the postmaster, then to each of its
// children, which are sessions of their own) without closing a connection, until Thaw: a database
// that no longer answers, as behind a network partition. Linux only (it reads /proc).
func (c *Cluster) Freeze() error {
	pid := c.cmd.Process.Pid
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return err
	}
	return c.signalChildren(pid, syscall.SIGSTOP)
}

// Thaw lets a frozen server go on.
func (c *Cluster) Thaw() error {
	pid := c.cmd.Process.Pid
	err := c.signalChildren(pid, syscall.SIGCONT)
	return errors.Join(err, syscall.Kill(pid, syscall.SIGCONT))
}

// signalChildren sends sig to each process whose parent is pid.
func (c *Cluster) signalChildren(pid int, sig syscall.Signal) error {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return err
	}
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so read after its last ')'.
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(fields) > 1 && fields[1] == strconv.Itoa(pid) {
			syscall.Kill(child, sig)
		}
	}
	return nil
}

// Up starts the server Down stopped again, on the same data and socket, and waits until it takes
// connections.
func (c *Cluster) Up() error { return c.run() }

// connect waits until the server takes connections, for up to 30 s, and keeps one to its
// postgres database.
func (c *Cluster) connect() error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		conn, err := pgx.Connect(ctx, c.URL("postgres"))
		cancel()
		if err == nil {
			c.admin = conn
			return nil
		}
		select {
		case werr := <-c.exit:
			c.exit <- werr
			return fmt.Errorf("postgres ended at its start: %v", werr)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres took no connection in 30 s: %w", err)
		}
	}
}

// URL returns the URL of the cluster's database db.
func (c *Cluster) URL(db string) string {
	return "postgres://" + dbUser + "@/" + db + "?host=" + url.QueryEscape(c.dir) + "&sslmode=disable"
}

// NewDatabase creates an empty database and returns its URL.
func (c *Cluster) NewDatabase() (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	name := fmt.Sprintf("baton_%d", c.n)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", fmt.Errorf("create database %s: %w", name, err)
	}
	return c.URL(name), nil
}

// Stop ends the server (a fast shutdown: its connections are closed) and removes its folder.
func (c *Cluster) Stop() error {
	var errs []error
	if c.admin != nil {
		c.admin.Close(context.Background())
	}
	if c.cmd != nil && c.cmd.Process != nil {
		c.cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-c.exit:
		case <-time.After(20 * time.Second):
			c.cmd.Process.Kill()
			errs = append(errs, errors.New("postgres did not stop in 20 s: killed"))
			<-c.exit
		}
	}
	return errors.Join(append(errs, os.RemoveAll(c.dir))...)
}

// serverUser returns who the server runs as: nil (this process's user) unless that is root,
// when it is nobody, to whom dir is given.
func serverUser(dir string) (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("nobody")
	if err != nil {
		return nil, fmt.Errorf("PostgreSQL does not run as root, and there is no user nobody to run it as: %w", err)
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	if err := os.Chown(dir, int(uid), int(gid)); err != nil {
		return nil, err
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

func uidOf(c *syscall.Credential) uint32 {
	if c == nil {
		return uint32(os.Getuid())
	}
	return c.Uid
}

func gidOf(c *syscall.Credential) uint32 {
	if c == nil {
		return uint32(os.Getgid())
	}
	return c.Gid
}

// The cluster a test package shares: started by its first Database, stopped by Main.
var (
	shared    *Cluster
	sharedErr error
	once      sync.Once
)

// Main runs the package's tests and stops the shared cluster, if a test started it; it returns
// the tests' exit code, for os.Exit.
func Main(m *testing.M) int {
	code := m.Run()
	if shared != nil {
		if err := shared.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "pgtest:", err)
			code = 1
		}
	}
	return code
}

// Database returns the URL of a new, empty database on the package's shared cluster, started
// on the first call. Without PostgreSQL it skips tb, or fails it where PostgreSQL is required.
func Database(tb testing.TB) string {
	tb.Helper()
	once.Do(func() { shared, sharedErr = Start(Options{}) })
	if sharedErr != nil {
		if _, err := Bin(); err != nil && !Required() {
			tb.Skip(err)
		}
		tb.Fatal(sharedErr)
	}
	u, err := shared.NewDatabase()
	if err != nil {
		tb.Fatal(err)
	}
	return u
}

// Required reports whether the tests must have PostgreSQL: under CI or the test command.
func Required() bool {
	return os.Getenv("CI") != "" || os.Getenv("BATON_REQUIRE_POSTGRES") != ""
}
