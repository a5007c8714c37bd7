package enginerun_test

import (
	"context"
	"testing"
	"time"

	"github.com/batkube/batkube/pkg/batsim"
	"github.com/batkube/batkube/pkg/enginerun"
	"github.com/batkube/batkube/pkg/enginerun/enginetest"
)

// BenchmarkTrace10h runs the 10-hour sparse trace (1,000 jobs on 16 nodes)
// against the first-fit decision process over real ZeroMQ (TCP loopback),
// and reports how much faster than real time the simulation goes.
func BenchmarkTrace10h(b *testing.B) {
	var sum enginerun.Summary
	prefix := b.TempDir() + "/trace"
	for b.Loop() {
		conn, err := batsim.Listen("tcp://127.0.0.1:*")
		if err != nil {
			b.Fatal(err)
		}
		served := make(chan error, 1)
		go func() { served <- enginetest.Serve(context.Background(), conn, &enginetest.FirstFit{}) }()
		sum, err = enginerun.Run(context.Background(), enginerun.Config{
			Platform:     platform("platform_16.xml"),
			Workloads:    []string{workload("trace_10h.json")},
			Endpoint:     conn.Endpoint(),
			ExportPrefix: prefix,
			Timeout:      time.Minute,
		})
		if err != nil {
			b.Fatal(err)
		}
		if err := <-served; err != nil {
			b.Fatal(err)
		}
		conn.Close()
	}
	b.ReportMetric(float64(sum.Messages), "msgs/op")
	b.ReportMetric(sum.SpeedUp(), "sim-s/wall-s")
	b.ReportMetric(sum.SimulatedTime/3600, "sim-h/op")
	b.ReportMetric(float64(sum.WallTime.Milliseconds()), "run-ms/op")
	b.ReportMetric(float64(sum.SchedulingTime)/float64(sum.WallTime)*100, "%waiting")
}
