package sqlite

import (
	"context"
	"encoding/json"
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
	s.mu.Lock()
	defer s.mu.Unlock()
	var err error
	if len(points) == 0 {
		_, err = s.db.ExecContext(context.Background(), `DELETE FROM next_breakpoints WHERE flow = ?`, flow)
	} else {
		data, _ := json.Marshal(points) // strings always marshal
		_, err = s.db.ExecContext(context.Background(), `INSERT INTO next_breakpoints (flow, points) VALUES (?, ?)
			ON CONFLICT (flow) DO UPDATE SET points = excluded.points`, flow, data)
	}
	if err != nil {
		return fmt.Errorf("keep the breakpoints of flow %s's next runs: %w", flow, err)
	}
	return nil
}

func (s *Store) nextBreakpoints(flow string) ([]string, error) {
	var data []byte
	err := s.db.QueryRowContext(context.Background(), `SELECT points FROM next_breakpoints WHERE flow = ?`, flow).Scan(&data)
	if isNoRows(err) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("read the breakpoints of flow %s's next runs: %w", flow, err)
	}
	var points []string
	if err := json.Unmarshal(data, &points); err != nil {
		return nil, fmt.Errorf("read the breakpoints of flow %s's next runs: %w", flow, err)
	}
	return points, nil
}
