// Package store keeps the objects of the emulated API server in memory: one
// thread-safe store for every resource, with a single monotonic
// resourceVersion, label and field selectors, consistent paged lists, watches
// served from a bounded event history per resource, and subscriptions that
// deliver every write to an in-process consumer.
package store
