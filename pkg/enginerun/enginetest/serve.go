package enginetest

import (
	"context"
	"fmt"

	"github.com/batkube/batkube/pkg/batsim"
)

// Decider answers the messages of Batsim, one at a time.
type Decider interface {
	// Decide returns the reply to m. An error stops Serve without replying.
	Decide(m batsim.Message) (batsim.Message, error)
}

// DeciderFunc is a function that is a Decider.
type DeciderFunc func(m batsim.Message) (batsim.Message, error)

// Decide calls f.
func (f DeciderFunc) Decide(m batsim.Message) (batsim.Message, error) { return f(m) }

// Serve answers the messages received on conn with d until it has answered
// SIMULATION_ENDS (it then returns nil), ctx is done, the connection fails or
// d returns an error. It does not close conn.
func Serve(ctx context.Context, conn *batsim.Conn, d Decider) error {
	for {
		m, err := conn.Recv(ctx)
		if err != nil {
			return fmt.Errorf("enginetest: %w", err)
		}
		reply, err := d.Decide(m)
		if err != nil {
			return fmt.Errorf("enginetest: t=%g: %w", m.Now, err)
		}
		if err := conn.Send(reply); err != nil {
			return fmt.Errorf("enginetest: t=%g: %w", m.Now, err)
		}
		if ends(m) {
			return nil
		}
	}
}

func ends(m batsim.Message) bool {
	for _, ev := range m.Events {
		if ev.Type() == batsim.TypeSimulationEnds {
			return true
		}
	}
	return false
}
