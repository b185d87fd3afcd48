package cli

import (
	"flag"
	"fmt"

	"github.com/baton-dev/baton/internal/prices"
)

// pricesFlag adds --prices to fs: the user's prices, merged over the default table.
func pricesFlag(fs *flag.FlagSet) *string {
	return fs.String("prices", "", `JSON file of model prices in US dollars per million tokens, {"gpt-4o": {"input": 2.5, "output": 10}},`+
		" merged over the defaults (see docs/guide.md) to show what `FILE`'s models' calls cost")
}

// loadPrices returns the default prices, with the file at path merged over them when path is
// set. A bad file is refused with what to fix.
func loadPrices(path string) (prices.Table, error) {
	if path == "" {
		return prices.Default(), nil
	}
	t, err := prices.Load(path)
	if err != nil {
		return nil, fmt.Errorf("--prices: %w", err)
	}
	return t, nil
}
