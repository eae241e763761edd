/// The transition table of BEHAVIOUR.md §1 as a pure value: no libevent, no clock,
/// no side effects. Each input returns the ordered steps to carry out; an
/// input that is not allowed throws and leaves the machine unchanged.
///
/// ``Application`` runs the steps on the main loop. The machine's ``state``
/// is the state the plan ends in (the "maybe suspended" at the end of a plan
/// is decided later, by ``suspend()``).
public struct LifecycleStateMachine: Sendable, Equatable {
    /// The state the last accepted plan leads to.
    public private(set) var state: AppState

    /// A machine in `state` (default `notRunning`).
    public init(state: AppState = .notRunning) { self.state = state }

    /// Plans `command` from the current state.
    /// - Throws: ``LifecycleError/commandNotAllowed(command:state:)`` for any
    ///   pair not in the BEHAVIOUR.md §1 table; the machine is then unchanged.
    public mutating func plan(_ command: LifecycleCommand) throws(LifecycleError) -> [LifecycleStep] {
        switch (command, state) {
        case (.launch, .notRunning):
            state = .active
            return [.enterState(.inactive), .callback(.willFinishLaunching), .callback(.didFinishLaunching),
                    .enterState(.active), .callback(.didBecomeActive)]
        case (.launchInBackground, .notRunning):
            state = .background
            return [.enterState(.background), .startBackgroundTime, .callback(.willFinishLaunching),
                    .callback(.didFinishLaunching), .suspendIfIdle]
        case (.interrupt, .active):
            state = .inactive
            return [.callback(.willResignActive), .enterState(.inactive)]
        case (.resumeFromInterrupt, .inactive):
            state = .active
            return [.enterState(.active), .callback(.didBecomeActive)]
        case (.home, .active):
            state = .background
            return [.callback(.willResignActive), .enterState(.inactive), .enterState(.background),
                    .startBackgroundTime, .callback(.didEnterBackground), .suspendIfIdle]
        case (.home, .inactive):
            state = .background
            return [.enterState(.background), .startBackgroundTime, .callback(.didEnterBackground), .suspendIfIdle]
        case (.foreground, .suspended):
            state = .active
            return [.enterState(.background), .callback(.willEnterForeground), .enterState(.inactive),
                    .deliverHeldNotifications, .enterState(.active), .callback(.didBecomeActive), .runMissedAppWork]
        case (.foreground, .background):
            state = .active
            return [.stopBackgroundTime, .callback(.willEnterForeground), .enterState(.inactive),
                    .enterState(.active), .callback(.didBecomeActive)]
        case (.wake, .suspended):
            state = .background
            return [.enterState(.background), .startBackgroundTime, .deliverHeldNotifications,
                    .runMissedAppWork, .suspendIfIdle]
        case (.terminate, .inactive), (.terminate, .active), (.terminate, .background):
            state = .notRunning
            return [.callback(.willTerminate), .endApp, .enterState(.notRunning)]
        case (.terminate, .suspended), (.purge, .suspended):
            state = .notRunning
            return [.endApp, .enterState(.notRunning)]
        default:
            throw .commandNotAllowed(command: command, state: state)
        }
    }

    /// A voip keep-alive fired while suspended: woken as `wake` does, with
    /// the keep-alive handler after the held notifications (BEHAVIOUR.md §5).
    /// Returns nil unless suspended.
    public mutating func planKeepAliveWake() -> [LifecycleStep]? {
        guard state == .suspended else { return nil }
        state = .background
        return [.enterState(.background), .startBackgroundTime, .deliverHeldNotifications,
                .runKeepAliveHandler, .runMissedAppWork, .suspendIfIdle]
    }

    /// Scheduled work is due while suspended: woken as `wake` does, with
    /// the task's launch handler after the held notifications (BEHAVIOUR.md §3).
    /// Returns nil unless suspended.
    public mutating func planScheduledTaskWake() -> [LifecycleStep]? {
        guard state == .suspended else { return nil }
        state = .background
        return [.enterState(.background), .startBackgroundTime, .deliverHeldNotifications,
                .runScheduledTask, .runMissedAppWork, .suspendIfIdle]
    }

    /// Background → suspended (the caller has checked that nothing keeps
    /// the app running). Returns nil unless in background.
    public mutating func suspend() -> [LifecycleStep]? {
        guard state == .background else { return nil }
        state = .suspended
        return [.stopBackgroundTime, .enterState(.suspended)]
    }

    /// The system kills the app: no callback. Returns nil when not running.
    public mutating func kill() -> [LifecycleStep]? {
        guard state != .notRunning else { return nil }
        state = .notRunning
        return [.endApp, .enterState(.notRunning)]
    }
}
