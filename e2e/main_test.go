package e2e_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"go.uber.org/goleak"

	"github.com/baton-dev/baton/internal/postgres/pgtest"
)

// The viewport every tab gets: the size the README's screenshot and the sketch promise to work at.
const (
	viewWidth  = 1280
	viewHeight = 800
)

// browser is the one Chromium of the package, started by the first test that needs it and
// stopped by TestMain.
var browser struct {
	once    sync.Once
	ctx     context.Context // a chromedp context whose browser is running; nil until started
	stop    func()
	dataDir string
	err     error
}

func TestMain(m *testing.M) {
	flag.Parse()
	start := time.Now()
	code := pgtest.Main(m) // stops the PostgreSQL server that tests may have started
	stopBrowser()
	// A checkout stays clean after the tests: only the pictures named on purpose (-screenshot) may
	// change.
	for _, f := range changedSince("..", start) {
		if !slices.ContainsFunc(screenshotPaths(), func(p string) bool { return sameFile(f, p) }) {
			fmt.Fprintf(os.Stderr, "the tests wrote %s, in the checkout: write test output to t.ArtifactDir() or t.TempDir()\n", f)
			code = 1
		}
	}
	if code == 0 {
		// chromedp's goroutines end with the browser; none of ours may outlive a test.
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// changedSince returns the files under root, outside hidden directories, modified after t.
func changedSince(root string, t time.Time) []string {
	var changed []string
	_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if path != root && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if info, err := d.Info(); err == nil && info.ModTime().After(t) {
			changed = append(changed, path)
		}
		return nil
	})
	return changed
}

// sameFile reports whether paths a and b name one existing file.
func sameFile(a, b string) bool {
	ia, errA := os.Stat(a)
	ib, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(ia, ib)
}

// chromiumPath returns the browser to drive: $BATON_CHROMIUM when set, else /usr/bin/chromium,
// else chromium on PATH.
func chromiumPath() (string, error) {
	if p := os.Getenv("BATON_CHROMIUM"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("BATON_CHROMIUM=%s: %w; run ./test.sh, which installs chromium", p, err)
		}
		return p, nil
	}
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium", nil
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p, nil
	}
	return "", errors.New("chromium not found (looked for /usr/bin/chromium and chromium on PATH); run ./test.sh, which installs it")
}

// browserRequired reports whether a missing browser fails the tests instead of skipping them.
func browserRequired() bool {
	return os.Getenv("BATON_REQUIRE_BROWSER") == "1" || os.Getenv("CI") == "true"
}

func startBrowser() {
	path, err := chromiumPath()
	if err != nil {
		browser.err = err
		return
	}
	dir, err := os.MkdirTemp("", "baton-e2e-chromium-")
	if err != nil {
		browser.err = fmt.Errorf("profile directory: %w", err)
		return
	}
	browser.dataDir = dir
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		// Tabs in the background (the first of two viewers) must keep their timers and
		// rendering going, or a reconnect or a repaint would wait on the test.
		chromedp.Flag("disable-background-timer-throttling", true),
		chromedp.Flag("disable-backgrounding-occluded-windows", true),
		chromedp.Flag("disable-renderer-backgrounding", true),
		chromedp.UserDataDir(dir),
		chromedp.WindowSize(viewWidth, viewHeight),
	)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	browser.stop = func() { cancelBrowser(); cancelAlloc() }
	sctx, cancel := context.WithTimeout(bctx, 30*time.Second)
	defer cancel()
	// The first Do starts the browser; its life is bctx's, not sctx's timeout (see chromedp's
	// API notes), so start it with bctx and bound the wait separately.
	done := make(chan error, 1)
	go func() { done <- chromedp.Do(bctx) }()
	select {
	case err = <-done:
	case <-sctx.Done():
		err = errors.New("chromium did not start within 30s")
	}
	if err != nil {
		browser.err = fmt.Errorf("start %s: %w", path, err)
		return
	}
	browser.ctx = bctx
}

func stopBrowser() {
	if browser.stop != nil {
		browser.stop()
		if a := chromedp.FromContext(browser.ctx); a != nil && a.Allocator != nil {
			a.Allocator.Wait()
		}
	}
	if browser.dataDir != "" {
		os.RemoveAll(browser.dataDir)
	}
}

// mustBrowser returns the running browser's context, starting it on first use. Without
// chromium it skips the test, or fails it when BATON_REQUIRE_BROWSER=1 or CI=true.
func mustBrowser(t *testing.T) context.Context {
	t.Helper()
	browser.once.Do(startBrowser)
	if browser.err != nil {
		if browserRequired() {
			t.Fatalf("browser tests need chromium: %v", browser.err)
		}
		t.Skipf("skipping browser test: %v", browser.err)
	}
	return browser.ctx
}

// tab is one browser tab of a test, with what the tab saw that a test must not: dialogs and
// uncaught exceptions, reported when the test ends.
type tab struct {
	ctx context.Context

	mu         sync.Mutex
	dialogs    []string
	exceptions []string
}

// newTab opens a tab at viewWidth x viewHeight in its own browser context (fresh storage), or,
// with a sibling, next to it in the sibling's browser context. The tab closes when t ends; any
// dialog or uncaught page exception it saw fails t.
func newTab(t *testing.T, sibling *tab) *tab {
	t.Helper()
	parent := mustBrowser(t)
	var ctx context.Context
	var cancel context.CancelFunc
	if sibling != nil {
		ctx, cancel = chromedp.NewContext(sibling.ctx)
	} else {
		ctx, cancel = chromedp.NewContext(parent, chromedp.WithNewBrowserContext())
	}
	tb := &tab{ctx: ctx}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		tb.mu.Lock()
		defer tb.mu.Unlock()
		for _, d := range tb.dialogs {
			t.Errorf("a JavaScript dialog opened: %s", d)
		}
		for _, e := range tb.exceptions {
			t.Errorf("uncaught exception in the page: %s", e)
		}
	})
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(viewWidth, viewHeight)); err != nil {
		t.Fatalf("open tab: %v", err)
	}
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	console := chromedp.Console(ctx)
	wg.Go(func() {
		for ev, err := range dialogs {
			if err != nil {
				return
			}
			tb.mu.Lock()
			tb.dialogs = append(tb.dialogs, fmt.Sprintf("%s %q at %s", ev.Type, ev.Message, ev.URL))
			tb.mu.Unlock()
			// Dismiss it, or the page would stay blocked until the test times out.
			_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	})
	wg.Go(func() {
		for m, err := range console {
			if err != nil {
				return
			}
			if m.IsException() {
				tb.mu.Lock()
				tb.exceptions = append(tb.exceptions, m.String())
				tb.mu.Unlock()
			}
		}
	})
	return tb
}
