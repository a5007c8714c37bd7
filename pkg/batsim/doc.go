// Package batsim speaks the JSON protocol of Batsim 4.x: typed events in both
// directions, their validation, resource interval sets ("0-3 7") and the
// ZeroMQ request/reply transport (REP for a decision process, REQ for a peer
// that plays Batsim).
package batsim
