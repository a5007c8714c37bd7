package batsim

import (
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
)

// jobSubmissions returns a message with n JOB_SUBMITTED events, each with a
// forwarded profile and user-defined fields, as a big trace would send.
func jobSubmissions(n int) Message {
	m := Message{Now: float64(n), Events: make([]Event, n)}
	for i := range n {
		id := JobID("w0!" + strconv.Itoa(i))
		m.Events[i] = Event{Timestamp: float64(i) + 0.000001, Data: JobSubmitted{
			JobID: id,
			Job: Job{ID: id, Subtime: float64(i) + 0.000001, Res: 1 + i%4, Profile: "delay" + strconv.Itoa(i%10), Walltime: 3600,
				Extra: map[string]json.RawMessage{"user": json.RawMessage(`"alice"`), "priority": json.RawMessage(strconv.Itoa(i % 3))}},
			Profile: &Profile{Type: "delay", Fields: map[string]json.RawMessage{
				"delay": json.RawMessage(fmt.Sprint(10 + i%50)), "cpu": json.RawMessage(`"500m"`), "memory": json.RawMessage(`"1Gi"`),
			}},
		}}
	}
	return m
}

func BenchmarkDecodeJobSubmitted1000(b *testing.B) {
	data, err := Encode(jobSubmissions(1000), FromBatsim)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(data, FromBatsim); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeJobSubmitted1000(b *testing.B) {
	m := jobSubmissions(1000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Encode(m, FromBatsim); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkIntervalSetDifference(b *testing.B) {
	var free, used []int
	for i := range 10000 {
		free = append(free, i)
		if i%3 == 0 {
			used = append(used, i)
		}
	}
	f, _ := IntervalSetFromIDs(free)
	u, _ := IntervalSetFromIDs(used)
	b.ReportAllocs()
	for b.Loop() {
		_ = f.Difference(u)
	}
}
