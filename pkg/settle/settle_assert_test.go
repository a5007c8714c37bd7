package settle

// The policies that hear from the scheduler say so by the interfaces the
// broker asserts (a renamed method would otherwise silently drop them).
var (
	_ Ender    = (*Signals)(nil)
	_ Ender    = (*Auto)(nil)
	_ Listener = (*Signals)(nil)
	_ Listener = (*Auto)(nil)
)
