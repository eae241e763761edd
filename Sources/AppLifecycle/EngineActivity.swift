/// What the engine is doing, as one value (it replaces four loose flags:
/// a depth counter, "in a transition", "an input was queued meanwhile" and
/// "draining the inbox"). Loop thread only.
///
/// Read it through ``state``, an enum whose cases carry their data:
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
///
/// Stored as four plain fields rather than as the enum: entering and
/// leaving a busy section is on the path of every posted event, and
/// rebuilding an enum payload there costs instructions on every event
/// (the `live` and `held` probes of `bash scripts/instructions.sh`); these
/// methods, inlined, cost what loose flags do. The fields change only through the
/// methods below, which keep the invariants (`transitions <= depth`;
/// `queued` only while busy).
struct EngineActivity {
    /// The enum view of the activity.
    enum State: Equatable {
        case idle
        case drainingInbox
        case busy(depth: Int, transitions: Int, queued: Bool, draining: Bool)
    }

    private var depth = 0
    private var transitions = 0
    private var queued = false
    private var draining = false

    /// The activity as an enum (for reading and tests; not on the hot path).
    var state: State {
        if depth > 0 { return .busy(depth: depth, transitions: transitions, queued: queued, draining: draining) }
        return draining ? .drainingInbox : .idle
    }

    /// Whether an input is being applied (inputs issued now must wait).
    @inline(__always)
    var isBusy: Bool { depth > 0 }

    /// Whether nothing is being applied and no drain runs.
    @inline(__always)
    var isIdle: Bool { depth == 0 && !draining }

    /// Whether a transition's steps are running.
    var isInTransition: Bool { transitions > 0 }

    /// Enters a busy section (a transition when `transition`).
    @inline(__always)
    mutating func enter(transition: Bool = false) {
        depth += 1
        if transition { transitions += 1 }
    }

    /// Enters the first busy section of an engine known to be idle (the
    /// hot path of a posted event, which has just checked): a store, not an
    /// increment.
    @inline(__always)
    mutating func enterFromIdle() {
        assert(depth == 0, "enterFromIdle on a busy engine")
        depth = 1
    }

    /// Leaves a busy section (a transition when `transition`). Returns true
    /// when it was the outermost one and inputs were queued meanwhile: the
    /// caller applies them now.
    @inline(__always)
    mutating func leave(transition: Bool = false) -> Bool {
        assert(depth > 0, "leaving the engine while it is not busy")
        depth -= 1
        if transition { transitions -= 1 }
        guard depth == 0, queued else { return false }
        queued = false
        return true
    }

    /// Leaves the busy section entered with ``enterFromIdle()``: sections
    /// entered since are balanced, so the depth is 1 and becomes 0 (a
    /// store, not a checked decrement). Returns true when inputs were
    /// queued meanwhile: the caller applies them now.
    @inline(__always)
    mutating func leaveToIdle() -> Bool {
        assert(depth == 1 && transitions == 0, "leaveToIdle inside a nested section")
        depth = 0
        guard queued else { return false }
        queued = false
        return true
    }

    /// Notes an input queued on the loop thread while busy.
    mutating func noteQueued() {
        if depth > 0 { queued = true }
    }

    /// Starts draining the inbox (only when idle).
    mutating func beginDrain() {
        assert(isIdle, "a drain starts from an idle engine")
        draining = true
    }

    /// Ends the drain.
    mutating func endDrain() { draining = false }
}
