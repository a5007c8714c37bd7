package broker

import (
	"context"

	"github.com/batkube/batkube/pkg/settle"
)

// stepCluster is the run as a step's wait sees it (settle.Cluster): the
// wait itself, its verdict and how it is labelled are package settle's.
type stepCluster struct{ r *run }

var _ settle.Cluster = stepCluster{}

func (c stepCluster) TakeIn(ctx context.Context) (int, error) { return c.r.takeIn(ctx) }
func (c stepCluster) Written() <-chan struct{}                { return c.r.intake.Ready() }
func (c stepCluster) Terminating() <-chan struct{}            { return c.r.terminating.ready }
func (c stepCluster) Pending() int                            { return c.r.jobs.pending }
func (c stepCluster) SchedulerPresent() bool                  { return c.r.schedulerPresent() }
func (c stepCluster) CheckScheduler() error                   { return c.r.checkScheduler() }
func (c stepCluster) OwedInWallTime() string                  { return c.r.owedInWallTime() }
func (c stepCluster) StoreRV() uint64                         { return c.r.store.CurrentRV() }
func (c stepCluster) WatchedRV() uint64                       { return c.r.store.LatestWatchedRV() }
func (c stepCluster) FireImminent() (fired, wake bool)        { return c.r.fireImminent() }

func (c stepCluster) ReleaseGroups(ctx context.Context, actions []settle.GroupAction) error {
	return c.r.actOnGroups(ctx, actions)
}
