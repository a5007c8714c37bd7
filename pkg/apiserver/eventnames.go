package apiserver

import (
	"context"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/batkube/batkube/pkg/store"
)

// maxEventNameShifts bounds the nanoseconds an event's name is moved on
// to find a free one (events of one object at one instant).
const maxEventNameShifts = 4096

// createEventAtNextFreeInstant stores an event whose name was taken, as
// client-go's event recorders name it, at the next free nanosecond.
//
// Both recorders (tools/record and tools/events) name an Event after its
// object and the instant it was recorded, in nanoseconds:
// NAME.HEXNANOSECONDS. On a real cluster two events of one object are
// nanoseconds apart; on simulated time every event of one instant has the
// same name, kube-apiserver would refuse all but the first (AlreadyExists)
// and the recorders drop what is refused: a Kueue run lost half its events
// so. The server stores such an event as if recorded a nanosecond later
// (the name's number plus one, or more if that is taken too) and answers
// with the name it got, which the recorders keep for their later updates.
// An event that repeats the one stored under its name (same object,
// reason, message: a retried create) is refused as kube-apiserver would.
func (s *Server) createEventAtNextFreeInstant(ctx context.Context, stored store.Object) (*store.Stored, error) {
	name := stored.GetName()
	base, nanos, ok := recordedEventName(name)
	ev, isEvent := stored.(*corev1.Event)
	if !ok || !isEvent {
		return nil, apierrors.NewAlreadyExists(eventsStorage, name)
	}
	if cur, err := s.store.Get(eventsStorage, stored.GetNamespace(), name); err == nil {
		if old, ok := cur.Object().(*corev1.Event); ok && sameEvent(old, ev) {
			return nil, apierrors.NewAlreadyExists(eventsStorage, name)
		}
	}
	for shift := uint64(1); shift <= maxEventNameShifts; shift++ {
		stored.SetName(base + "." + strconv.FormatUint(nanos+shift, 16))
		st, err := s.store.Create(ctx, eventsStorage, stored)
		if !apierrors.IsAlreadyExists(err) {
			return st, err
		}
	}
	stored.SetName(name)
	return nil, apierrors.NewAlreadyExists(eventsStorage, name)
}

// recordedEventName splits a name of client-go's recorders, NAME.HEX, into
// NAME and the number; ok is false for any other name.
func recordedEventName(name string) (base string, nanos uint64, ok bool) {
	i := strings.LastIndexByte(name, '.')
	if i <= 0 || i == len(name)-1 {
		return "", 0, false
	}
	n, err := strconv.ParseUint(name[i+1:], 16, 64)
	if err != nil || n > ^uint64(0)-maxEventNameShifts {
		return "", 0, false
	}
	return name[:i], n, true
}

// sameEvent reports whether b says what a says about the same object.
func sameEvent(a, b *corev1.Event) bool {
	return a.InvolvedObject == b.InvolvedObject && a.Reason == b.Reason && a.Message == b.Message &&
		a.Type == b.Type && a.Action == b.Action && a.Source == b.Source &&
		a.ReportingController == b.ReportingController
}
