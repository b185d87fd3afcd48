package agents

import (
	"strings"
	"unicode"
)

// document is one page of a search tool's built-in corpus. keywords are words a query may use
// that the text does not hold (abbreviations, synonyms).
type document struct {
	keywords string
	text     string
}

// corpus is a search tool's small built-in web: real lookups, so that a real model's queries
// decide what it learns.
type corpus []document

// stopWords carry no meaning in a query.
var stopWords = map[string]bool{"the": true, "of": true, "in": true, "a": true, "an": true, "and": true, "for": true,
	"what": true, "was": true, "is": true, "to": true, "how": true, "should": true, "do": true, "does": true, "with": true}

// words splits s into lower-case words of letters and digits, without stop words.
func words(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if !stopWords[w] {
			out = append(out, w)
		}
	}
	return out
}

// search returns the texts of at most n documents that share a word with query, the best first:
// the most distinct query words found, then the corpus's order.
func (c corpus) search(query string, n int) []string {
	q := words(query)
	scores := make([]int, len(c))
	for i, d := range c {
		have := map[string]bool{}
		for _, w := range words(d.keywords + " " + d.text) {
			have[w] = true
		}
		seen := map[string]bool{}
		for _, w := range q {
			if have[w] && !seen[w] {
				scores[i]++
				seen[w] = true
			}
		}
	}
	var out []string
	for len(out) < n {
		best := -1
		for i, s := range scores {
			if s > 0 && (best < 0 || s > scores[best]) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		out = append(out, c[best].text)
		scores[best] = 0
	}
	return out
}

// economyCorpus is the supervisor flows' search: economic figures of 2024.
var economyCorpus = corpus{
	{"us usa america united states", "United States GDP 2024: 29.18 trillion USD (current dollars). " +
		"Source: U.S. Bureau of Economic Analysis, National Accounts, 2024."},
	{"ny new york state", "New York State GDP 2024: 2.297 trillion USD (current dollars). " +
		"Source: U.S. Bureau of Economic Analysis, GDP by State, 2024."},
	{"ca california state", "California GDP 2024: 4.10 trillion USD (current dollars). " +
		"Source: U.S. Bureau of Economic Analysis, GDP by State, 2024."},
	{"tx texas state", "Texas GDP 2024: 2.70 trillion USD (current dollars). " +
		"Source: U.S. Bureau of Economic Analysis, GDP by State, 2024."},
	{"us usa america united states people", "United States population 2024: 340.1 million (July estimate). " +
		"Source: U.S. Census Bureau, Vintage 2024."},
	{"ny new york state people", "New York State population 2024: 19.87 million (July estimate). " +
		"Source: U.S. Census Bureau, Vintage 2024."},
	{"us usa america united states prices cpi", "United States inflation 2024: consumer prices rose 2.9% from December 2023 " +
		"to December 2024. Source: U.S. Bureau of Labor Statistics, CPI."},
	{"germany deutschland", "Germany GDP 2024: 4.66 trillion USD (current dollars). Source: IMF World Economic Outlook."},
	{"japan", "Japan GDP 2024: 4.03 trillion USD (current dollars). Source: IMF World Economic Outlook."},
	{"china prc", "China GDP 2024: 18.7 trillion USD (current dollars). Source: IMF World Economic Outlook."},
}

// engineeringCorpus is the agenttool flow's web search: engineering notes on HTTP APIs in Go.
var engineeringCorpus = corpus{
	{"rate limiting limiter go golang token bucket throttle",
		"golang.org/x/time/rate: rate.NewLimiter(r, b) implements a token bucket; Allow() reports whether an event may happen now."},
	{"rate limiting http api too many requests status code",
		"RFC 6585 §4: 429 Too Many Requests; servers may include a Retry-After header."},
	{"rate limiting public api best practices key",
		"Best practice: limit per API key rather than per IP, and start generous (e.g. 10 req/s, burst 20)."},
	{"retry retries backoff client http go",
		"Retries: back off exponentially with jitter (e.g. 100 ms doubling to 10 s) and honour Retry-After."},
	{"cache caching http api etag",
		"HTTP caching: send ETag and Cache-Control; answer If-None-Match with 304 Not Modified."},
	{"pagination paging http api list cursor",
		"Pagination: prefer opaque cursors (?cursor=...) over offsets; return the next cursor with each page."},
	{"auth authentication api keys jwt token http go",
		"Authentication: hash API keys at rest (SHA-256), compare in constant time (crypto/subtle); rotate keys."},
	{"timeout timeouts server http go",
		"net/http servers: set ReadHeaderTimeout, ReadTimeout, WriteTimeout and IdleTimeout; the zero values never time out."},
}
