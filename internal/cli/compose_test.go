package cli_test

import (
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/baton-dev/baton/internal/postgres/pgtest"
)

// compose is what TestComposeFile reads of docker-compose.yml.
type compose struct {
	Services map[string]struct {
		Build       string
		Image       string
		Hostname    string
		Command     []string
		Environment map[string]string
		DependsOn   map[string]struct{ Condition string } `yaml:"depends_on"`
		Ports       []string
		Configs     []struct{ Source, Target string }
		Healthcheck struct{ Test []string }
	}
	Configs map[string]struct{ Content string }
}

// interpolation is a variable as Compose substitutes it: ${NAME}, ${NAME:-default}, ${NAME:?error}.
var interpolation = regexp.MustCompile(`\$\{(\w+)(?::([-?])([^}]*))?\}`)

// TestComposeFile checks docker-compose.yml as far as no Docker engine is needed: PostgreSQL with
// a health check, two replicas built from the repository's Dockerfile that wait for it and reach
// it by its service name with its user and database, each named as its service (where the other
// passes requests on to it), a proxy in front of both; and each
// replica's command, with the token and the database a test gives, serves on a throwaway
// PostgreSQL, requiring the token.
func TestComposeFile(t *testing.T) {
	data, err := os.ReadFile("../../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	const token = "0123456789abcdef0123456789abcdef"
	data = interpolation.ReplaceAllFunc(data, func(m []byte) []byte {
		v := interpolation.FindSubmatch(m)
		switch {
		case string(v[1]) == "BATON_TOKEN":
			return []byte(token)
		case string(v[2]) == "-":
			return v[3]
		}
		t.Fatalf("docker-compose.yml: %s has no default", m)
		return nil
	})
	var c compose
	if err := yaml.Unmarshal(data, &c); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	db, ok := c.Services["db"]
	if !ok || db.Image == "" || len(db.Healthcheck.Test) == 0 {
		t.Fatalf("docker-compose.yml: no db service with an image and a health check: %+v", db)
	}
	if _, err := os.Stat("../../Dockerfile"); err != nil {
		t.Fatal(err)
	}
	var replicas []string
	for name, s := range c.Services {
		if s.Build != "." {
			continue
		}
		replicas = append(replicas, name)
		u, err := url.Parse(s.Environment["BATON_DATABASE_URL"])
		if err != nil || u.Hostname() != "db" || u.User.Username() != db.Environment["POSTGRES_USER"] ||
			u.Path != "/"+db.Environment["POSTGRES_DB"] {
			t.Errorf("%s: BATON_DATABASE_URL %q does not name the db service's user and database", name, s.Environment["BATON_DATABASE_URL"])
		}
		if p, _ := u.User.Password(); p != db.Environment["POSTGRES_PASSWORD"] {
			t.Errorf("%s: the database password is not the db service's", name)
		}
		if s.Hostname != name {
			t.Errorf("%s: hostname %q: the other replica reaches it at its host name (the default --advertise), which must be its service's", name, s.Hostname)
		}
		if s.DependsOn["db"].Condition != "service_healthy" {
			t.Errorf("%s: does not wait for the database to be healthy", name)
		}
	}
	slices.Sort(replicas)
	if len(replicas) != 2 {
		t.Fatalf("docker-compose.yml builds %d Baton replicas from the Dockerfile (%v); want 2", len(replicas), replicas)
	}
	proxy := c.Services["proxy"]
	if len(proxy.Configs) != 1 || !slices.Contains(proxy.Ports, "7070:7070") {
		t.Fatalf("docker-compose.yml: the proxy has no config or does not publish 7070: %+v", proxy)
	}
	for _, r := range replicas {
		if !regexp.MustCompile(`\b` + r + `:7070\b`).MatchString(c.Configs[proxy.Configs[0].Source].Content) {
			t.Errorf("the proxy's config does not send to %s:7070", r)
		}
	}

	t.Setenv("BATON_DATABASE_URL", pgtest.Database(t))
	for _, r := range replicas {
		args := slices.Clone(c.Services[r].Command)
		if len(args) == 0 || args[0] != "serve" {
			t.Fatalf("%s: command %v is not baton serve", r, args)
		}
		if i := slices.Index(args, "--addr"); i >= 0 && i+1 < len(args) {
			args[i+1] = "127.0.0.1:0" // not the container's 0.0.0.0:7070
		}
		s := serveHere(t, args[1:]...)
		for _, tc := range []struct {
			auth string
			want int
		}{{"", http.StatusUnauthorized}, {"Bearer " + token, http.StatusOK}} {
			req, _ := http.NewRequest(http.MethodGet, s.url+"api/runs", nil)
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != tc.want {
				t.Errorf("%s: GET /api/runs with %q: %d; want %d", r, tc.auth, res.StatusCode, tc.want)
			}
		}
	}
}
