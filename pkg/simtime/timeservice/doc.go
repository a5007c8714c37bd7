// Package timeservice serves the simulated clock over HTTP, beside the
// Kubernetes API, so that time-virtualised schedulers read simulated time and
// wait for simulated instants (the timers they wait on become CALL_ME_LATER
// requests to Batsim). Package clockclient is its client.
//
// The API, under Path (/batkube/v1/clock), GET only:
//
//	GET /batkube/v1/clock
//	    200, a Reading of the current simulated time.
//	GET /batkube/v1/clock?until=<instant>
//	    Registers a timer in the Clock at the instant and blocks until
//	    simulated time reaches it; 200, a Reading of the time that woke it,
//	    with "until" set. <instant> is an RFC 3339 time ("2026-01-01T00:01:00.5Z",
//	    exact to the nanosecond) or a number of seconds since the start of the
//	    simulation, as Batsim counts them ("60.5").
//	GET /batkube/v1/clock?after=<duration>
//	    The same, at the simulated time of the request plus <duration>, a Go
//	    duration ("1.5s", "250ms", exact) or a number of seconds.
//	&kind=wake|work|passive|pause
//	    What the wait's timer asks of the simulation (simclock.Kind): wake
//	    (the default) a call at its instant, as a time-virtualised
//	    scheduler's timers do; work a call, and the run is not over while
//	    controllers' objects are unfinished and it is pending, as the work
//	    queues of a controller on simulated time (package kubeclock);
//	    passive nothing, it ends when simulated time passes its instant;
//	    pause the same, or before its instant when the broker releases the
//	    pauses (the Reading then has "released": true and a time before
//	    "until").
//
// A wait is parked while its timer is pending (Parker): the API server
// does not count it as a request in progress then, only from the moment
// its timer fires until its answer is written.
//
// A wait sends its status and headers as soon as its timer is registered,
// with the instant in the UntilHeader header, and its body when it fires: a
// client that lost the connection can wait again for the same instant. When
// the client goes away the timer is removed. Bad parameters get a 400 with a
// JSON Error body, other methods a 405.
package timeservice
