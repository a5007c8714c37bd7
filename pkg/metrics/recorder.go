package metrics

import "net/http"

// StatusRecorder is a ResponseWriter that remembers the status code of the
// response written through it (the instrumented requests, the server's
// request log and its panic guard, tests' request logs).
type StatusRecorder struct {
	http.ResponseWriter
	// Code is the status written (200 for a body without a header), 0 if
	// nothing was written yet.
	Code int
}

// WriteHeader records the status code.
func (r *StatusRecorder) WriteHeader(code int) {
	if r.Code == 0 {
		r.Code = code
	}
	r.ResponseWriter.WriteHeader(code)
}

// Write records an implicit 200.
func (r *StatusRecorder) Write(b []byte) (int, error) {
	if r.Code == 0 {
		r.Code = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (flushes,
// deadlines).
func (r *StatusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
