/// A weak reference held in a constant, for a closure that must not keep
/// its target alive: `{ [weak target] in ... }` captures a mutable box, and
/// every call then paid Swift's dynamic exclusivity check on it
/// (`swift_beginAccess`, about 100 instructions with its thread-local
/// access set); reading a `weak let` needs none. For callbacks run per
/// event (a control request's handler, a notification observer).
package final class WeakReference<Object: AnyObject> {
    /// The target while it lives; nil once it is gone.
    package weak let object: Object?

    package init(_ object: Object) {
        self.object = object
    }
}
