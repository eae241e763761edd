import AppLifecycle
import MainLoop
import Testing
import TestSupport

/// Every row of the BEHAVIOUR.md §1 table, as the sequence of state lines and
/// callbacks it produces.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct TransitionTableTests {
    /// Drives the harness into `state` using commands from the table.
    static func reach(_ state: AppState, _ harness: Harness) throws {
        switch state {
        case .notRunning: break
        case .active: try harness.perform(.launch)
        case .inactive: try harness.perform(.launch); try harness.perform(.interrupt)
        case .suspended: try harness.perform(.launch); try harness.perform(.home)
        case .background:
            try harness.perform(.launch)
            _ = try harness.app.beginBackgroundTask(name: "keep")
            try harness.perform(.home)
        }
        #expect(harness.app.state == state)
        _ = harness.take()
    }

    struct Row: Sendable, CustomTestStringConvertible {
        let command: LifecycleCommand
        let from: AppState
        let lines: [String]
        var testDescription: String { "\(command) from \(from)" }
    }

    static let rows: [Row] = [
        Row(command: .launch, from: .notRunning, lines: ["state inactive", "willFinishLaunching", "didFinishLaunching",
                                                         "state active", "didBecomeActive"]),
        Row(command: .launchInBackground, from: .notRunning, lines: ["state background", "willFinishLaunching",
                                                                     "didFinishLaunching", "state suspended"]),
        Row(command: .interrupt, from: .active, lines: ["willResignActive", "state inactive"]),
        Row(command: .resumeFromInterrupt, from: .inactive, lines: ["state active", "didBecomeActive"]),
        Row(command: .home, from: .active, lines: ["willResignActive", "state inactive", "state background",
                                                   "didEnterBackground", "state suspended"]),
        Row(command: .home, from: .inactive, lines: ["state background", "didEnterBackground", "state suspended"]),
        Row(command: .foreground, from: .suspended, lines: ["state background", "willEnterForeground", "state inactive",
                                                            "state active", "didBecomeActive"]),
        Row(command: .foreground, from: .background, lines: ["willEnterForeground", "state inactive", "state active",
                                                             "didBecomeActive"]),
        Row(command: .wake, from: .suspended, lines: ["state background", "state suspended"]),
        Row(command: .terminate, from: .inactive, lines: ["willTerminate", "state notRunning"]),
        Row(command: .terminate, from: .active, lines: ["willTerminate", "state notRunning"]),
        Row(command: .terminate, from: .background, lines: ["willTerminate", "state notRunning"]),
        Row(command: .terminate, from: .suspended, lines: ["state notRunning"]),
        Row(command: .purge, from: .suspended, lines: ["state notRunning"]),
    ]

    @Test(arguments: rows)
    func row(_ row: Row) throws {
        let harness = try Harness()
        try Self.reach(row.from, harness)
        try harness.perform(row.command)
        #expect(harness.take() == row.lines)
        #expect(harness.appCodeWhileNotRunning.isEmpty)
    }

    /// Every (command, state) pair not in the table is rejected with a typed
    /// error naming both, and changes nothing.
    @Test(arguments: AppState.allCases)
    func everyOtherPairIsRejected(from state: AppState) throws {
        let allowed = Set(Self.rows.filter { $0.from == state }.map(\.command))
        for command in LifecycleCommand.allCases where !allowed.contains(command) {
            let harness = try Harness()
            try Self.reach(state, harness)
            let before = harness.app.state
            #expect(throws: LifecycleError.commandNotAllowed(command: command, state: state)) {
                try harness.perform(command)
            }
            #expect(harness.app.state == before)
            #expect(harness.take().isEmpty, "a rejected \(command) produced output")
        }
    }

    @Test func commandsFromInsideACallbackAreRefused() throws {
        final class Reentrant: ApplicationDelegate {
            var error: LifecycleError?
            func applicationDidBecomeActive(_ application: Application) {
                do { try application.perform(.home) } catch { self.error = error }
            }
        }
        let harness = try Harness()
        let delegate = Reentrant()
        harness.app.delegate = delegate
        try harness.perform(.launch)
        #expect(delegate.error == .transitionInProgress(command: .home))
        #expect(harness.app.state == .active)
    }

    @Test func lifecycleObserversRunAfterTheDelegate() throws {
        let harness = try Harness()
        harness.app.addLifecycleObserver { [unowned harness] callback in harness.lines.append("observer \(callback)") }
        try harness.perform(.launch)
        #expect(harness.take() == ["state inactive", "willFinishLaunching", "observer willFinishLaunching",
                                   "didFinishLaunching", "observer didFinishLaunching", "state active",
                                   "didBecomeActive", "observer didBecomeActive"])
    }
}
