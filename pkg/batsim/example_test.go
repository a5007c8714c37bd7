package batsim_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/batkube/batkube/pkg/batsim"
)

// A decision process that runs each job at once on the first free
// resources, and rejects the jobs that do not fit.
func Example() {
	conn, err := batsim.Listen(batsim.DefaultEndpoint)
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	var free batsim.IntervalSet
	for {
		// No message from Batsim for a minute: consider it hung.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		m, err := conn.Recv(ctx)
		cancel()
		if errors.Is(err, batsim.ErrPeerDisconnected) {
			log.Fatal("Batsim died")
		}
		if err != nil {
			log.Fatal(err)
		}
		reply := batsim.Message{Now: m.Now}
		for _, ev := range m.Events {
			switch d := ev.Data.(type) {
			case batsim.SimulationBegins:
				for _, r := range d.ComputeResources {
					one, _ := batsim.IntervalSetFromIDs([]int{r.ID})
					free = free.Union(one)
				}
			case batsim.JobSubmitted:
				alloc := free.First(d.Job.Res)
				if alloc.IsEmpty() || alloc.Len() < d.Job.Res {
					reply.Events = append(reply.Events, batsim.Event{Timestamp: m.Now, Data: batsim.RejectJob{JobID: d.JobID}})
					continue
				}
				free = free.Difference(alloc)
				reply.Events = append(reply.Events, batsim.Event{Timestamp: m.Now, Data: batsim.ExecuteJob{JobID: d.JobID, Alloc: alloc}})
			case batsim.JobCompleted:
				free = free.Union(d.Alloc)
			case batsim.SimulationEnds:
				if err := conn.Send(reply); err != nil {
					log.Fatal(err)
				}
				return
			}
		}
		if err := conn.Send(reply); err != nil {
			log.Fatal(err)
		}
	}
}

func ExampleParseIntervalSet() {
	s, err := batsim.ParseIntervalSet("5 0-3 2 9-10")
	if err != nil {
		log.Fatal(err)
	}
	used, _ := batsim.ParseIntervalSet("1-2")
	fmt.Println(s, s.Len(), s.Difference(used), s.First(3).IDs())
	// Output: 0-3 5 9-10 7 0 3 5 9-10 [0 1 2]
}
