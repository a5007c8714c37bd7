package outputs

import (
	"cmp"
	"fmt"
	"math"
	"strconv"
)

// cells are one row of a CSV file as a reader parses it: its cells by
// column name, and what did not parse, each error named by its column,
// so that a reader says every bad cell of a row at once.
type cells struct {
	row  map[string]string
	errs []error
}

// parse parses a column's cell, noting an error under the column's name.
func parse[T any](c *cells, col string, parser func(string) (T, error)) T {
	v, err := parser(c.row[col])
	if err != nil {
		c.errs = append(c.errs, fmt.Errorf("%s: %w", col, err))
	}
	return v
}

// instant is a column's simulated instant: an empty cell is NaN (an
// instant that did not happen).
func (c *cells) instant(col string) float64 { return parse(c, col, optionalSeconds) }

// number is a column's number, which must be there.
func (c *cells) number(col string) float64 {
	return parse(c, col, func(s string) (float64, error) { return strconv.ParseFloat(s, 64) })
}

// count is a column's whole number: an empty cell is 0.
func (c *cells) count(col string) int {
	return parse(c, col, func(s string) (int, error) { return strconv.Atoi(cmp.Or(s, "0")) })
}

// whole is a column's whole number, which must be there.
func (c *cells) whole(col string) int { return parse(c, col, strconv.Atoi) }

// usage is a column's quantities by resource ("cpu=4;memory=4Gi").
func (c *cells) usage(col string) map[string]float64 { return parse(c, col, parseUsage) }

// err is what did not parse in the row, the i-th of the file at path (nil
// when all did).
func (c *cells) err(path string, i int) error {
	if len(c.errs) == 0 {
		return nil
	}
	return fmt.Errorf("outputs: %s: row %d: %v", path, i+2, c.errs)
}

// optionalSeconds parses an instant of a CSV file: "" is NaN.
func optionalSeconds(s string) (float64, error) {
	if s == "" {
		return math.NaN(), nil
	}
	return strconv.ParseFloat(s, 64)
}

// readRows reads a CSV file of one of the schemas (schema.go), each row
// made a T by row from its cells; a row with a cell that does not parse
// is an error that names them.
func readRows[T any](path string, schema []string, row func(*cells) T) ([]T, error) {
	rows, err := readTable(path, schema)
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, len(rows))
	for i, r := range rows {
		c := cells{row: r}
		v := row(&c)
		if err := c.err(path, i); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}
