package postgres

import (
	"fmt"
)

// SetNextBreakpoints keeps points for the next runs of flow that apps stream; none forgets them.
func (s *Store) SetNextBreakpoints(flow string, points []string) error {
	return s.fault(s.setNextBreakpoints(flow, points))
}

// NextBreakpoints returns what SetNextBreakpoints kept for flow last, nil for none.
func (s *Store) NextBreakpoints(flow string) ([]string, error) {
	points, err := s.nextBreakpoints(flow)
	return points, s.fault(err)
}

func (s *Store) setNextBreakpoints(flow string, points []string) error {
	ctx, cancel := ctx()
	defer cancel()
	var err error
	if len(points) == 0 {
		_, err = s.pool.Exec(ctx, `DELETE FROM baton_next_breakpoints WHERE flow = $1`, text(flow))
	} else {
		kept := make([]string, len(points))
		for i, p := range points {
			kept[i] = text(p)
		}
		_, err = s.pool.Exec(ctx, `INSERT INTO baton_next_breakpoints (flow, points) VALUES ($1, $2)
			ON CONFLICT (flow) DO UPDATE SET points = excluded.points`, text(flow), kept)
	}
	if err != nil {
		return fmt.Errorf("keep the breakpoints of flow %s's next runs: %w", flow, err)
	}
	return nil
}

func (s *Store) nextBreakpoints(flow string) ([]string, error) {
	ctx, cancel := ctx()
	defer cancel()
	var points []string
	err := s.pool.QueryRow(ctx, `SELECT points FROM baton_next_breakpoints WHERE flow = $1`, text(flow)).Scan(&points)
	if isNoRows(err) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("read the breakpoints of flow %s's next runs: %w", flow, err)
	}
	return points, nil
}
