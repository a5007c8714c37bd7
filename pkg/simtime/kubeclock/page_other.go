//go:build !unix

package clock

import (
	"errors"
	"time"
)

// Page is the clock page; only Unix systems map it.
type Page struct{}

var errNoPage = errors.New("clock page: simulated time needs a Unix system")

// CreatePage fails on this system.
func CreatePage(string, time.Time) (*Page, error) { return nil, errNoPage }

// OpenPage fails on this system.
func OpenPage(string) (*Page, error) { return nil, errNoPage }

func (*Page) Epoch() time.Time       { return time.Time{} }
func (*Page) Elapsed() time.Duration { return 0 }
func (*Page) Set(time.Duration)      {}
func (*Page) Attached() int          { return 0 }
func (*Page) attach()                {}
func (*Page) Path() string           { return "" }
func (*Page) Close() error           { return errNoPage }
