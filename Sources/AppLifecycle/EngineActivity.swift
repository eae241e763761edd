/// What the engine is doing, as one value (it replaces four loose flags:
/// a depth counter, "in a transition", "an input was queued meanwhile" and
/// "draining the inbox"). Loop thread only.
///
/// - `idle`: nothing is applied; an input issued on the loop thread takes
///   effect at once (after what waits in the inbox).
/// - `drainingInbox`: the inbox is being drained between inputs; each input
///   it applies is a busy section of its own, and a nested drain is refused.
/// - `busy`: inside `depth` nested busy sections (an input, a transition, a
///   delivery), `transitions` of them transitions. Inputs issued meanwhile
///   wait in the inbox (`queued`), and lifecycle commands are refused;
///   leaving the outermost section applies what was queued. `draining`
///   remembers that the busy section runs inside a drain.
enum EngineActivity: Equatable {
    case idle
    case drainingInbox
    case busy(depth: Int, transitions: Int, queued: Bool, draining: Bool)

    /// Whether an input is being applied (inputs issued now must wait).
    var isBusy: Bool {
        if case .busy = self { return true }
        return false
    }

    /// Whether a transition's steps are running.
    var isInTransition: Bool {
        if case .busy(_, let transitions, _, _) = self { return transitions > 0 }
        return false
    }

    /// Enters a busy section (a transition when `transition`).
    @inline(__always)
    mutating func enter(transition: Bool = false) {
        switch self {
        case .idle:
            self = .busy(depth: 1, transitions: transition ? 1 : 0, queued: false, draining: false)
        case .drainingInbox:
            self = .busy(depth: 1, transitions: transition ? 1 : 0, queued: false, draining: true)
        case .busy(let depth, let transitions, let queued, let draining):
            self = .busy(depth: depth + 1, transitions: transitions + (transition ? 1 : 0), queued: queued, draining: draining)
        }
    }

    /// Leaves a busy section (a transition when `transition`). Returns true
    /// when it was the outermost one and inputs were queued meanwhile: the
    /// caller applies them now.
    @inline(__always)
    mutating func leave(transition: Bool = false) -> Bool {
        guard case .busy(let depth, let transitions, let queued, let draining) = self else {
            assertionFailure("leaving the engine while it is not busy")
            return false
        }
        guard depth == 1 else {
            self = .busy(depth: depth - 1, transitions: transitions - (transition ? 1 : 0), queued: queued, draining: draining)
            return false
        }
        self = draining ? .drainingInbox : .idle
        return queued
    }

    /// Notes an input queued on the loop thread while busy.
    mutating func noteQueued() {
        if case .busy(let depth, let transitions, _, let draining) = self {
            self = .busy(depth: depth, transitions: transitions, queued: true, draining: draining)
        }
    }
}
